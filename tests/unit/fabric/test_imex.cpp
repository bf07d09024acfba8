// IMEX / multi-node NVLink: the seed's self-checks 4 and 5 (course module 5) and the rules around them.
#include <gtest/gtest.h>

#include "models/fabric/imex.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::fabric {
namespace {

TopologyGraph graph(const std::string& id = "gb200-nvl72", int racks = 1) {
  return TopologyGraph(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(id), racks);
}

JobRequest trays(int first, int last, int gpus_per_tray = 4) {
  JobRequest j;
  for (int g = first * gpus_per_tray; g < (last + 1) * gpus_per_tray; ++g) j.gpus.push_back(g);
  return j;
}

// Self-check 4: two processes on different trays share a cudaMalloc'd buffer.
TEST(SelfCheck4, FdPassingCannotCrossTraysFabricHandleAndImexReplaceIt) {
  const auto g = graph();
  FabricInputs in;
  // Same tray: the POSIX fd over a Unix socket works; the kernel is the authority.
  const auto local = share_buffer(g, in, 0, 3, HandleType::automatic);
  ASSERT_TRUE(local.ok);
  EXPECT_EQ(local.handle, "posix_fd");
  EXPECT_NE(local.steps[1].how.find("SCM_RIGHTS"), std::string::npos);
  // Across trays an fd means nothing: no shared kernel.
  const auto fd = share_buffer(g, in, 0, 8, HandleType::posix_fd);
  EXPECT_FALSE(fd.ok);
  EXPECT_NE(fd.reason.find("only means something to the kernel that issued it"), std::string::npos);
  // Each piece replaced: a 64-byte FABRIC handle as plain data, IMEX validating with the channel as the
  // boundary, the importing driver mapping fabric addresses (cuMemMap + cuMemSetAccess), then NVLink.
  const auto fab = share_buffer(g, in, 0, 8, HandleType::automatic);
  ASSERT_TRUE(fab.ok) << fab.reason;
  EXPECT_EQ(fab.handle, "fabric");
  EXPECT_EQ(fab.handle_bytes, 64);
  ASSERT_EQ(fab.steps.size(), 5u);
  EXPECT_NE(fab.steps[1].how.find("plain data"), std::string::npos);
  EXPECT_NE(fab.steps[2].authority.find("IMEX validates"), std::string::npos);
  EXPECT_NE(fab.steps[2].authority.find("channel"), std::string::npos);
  EXPECT_NE(fab.steps[3].how.find("cuMemMap + cuMemSetAccess"), std::string::npos);
  EXPECT_NE(fab.steps[4].authority.find("no CPU, kernel or daemon"), std::string::npos);
}

TEST(SelfCheck4, FabricHandlesNeedTheSameChannelImexAndAFabric) {
  const auto g = graph();
  FabricInputs in;
  EXPECT_FALSE(share_buffer(g, in, 0, 8, HandleType::fabric, 0, 1).ok);  // importer on another channel
  in.imex_service[2] = ImexService::stopped;                            // GPU 8 is on tray 2
  EXPECT_NE(share_buffer(g, in, 0, 8, HandleType::fabric).reason.find("nvidia-imex not running on tray 2"), std::string::npos);
  // An x86 box: the driver knows the handle type but cuMemCreate(FABRIC) is refused (seed s6, 4090/H200).
  const auto box = share_buffer(graph("h200-pcie"), FabricInputs{}, 0, 0, HandleType::fabric);
  EXPECT_FALSE(box.ok);
  EXPECT_NE(box.reason.find("operation not permitted"), std::string::npos);
}

// Self-check 5: a new container image fails at NCCL init with an MNNVL error; single-tray runs work.
TEST(SelfCheck5, MissingChannelInTheContainerIsAHardNcclErrorSinceNccl227) {
  const auto g = graph();
  FabricInputs in;
  in.container_channels = std::set<int>{};  // the new image / runtime config dropped channel0
  JobRequest job = trays(0, 3);
  job.nccl.version = "2.27.3";
  job.calibration = "none";  // vendor peaks: the estimates below do not move when calibrate/ is refitted
  const JobVerdict v = check_job(g, in, job);
  EXPECT_EQ(v.outcome, "init_error");
  EXPECT_FALSE(v.runs);
  EXPECT_EQ(v.failed_checks, (std::vector<std::string>{"IMEX channel"}));  // service, peers, fabric all fine
  ASSERT_EQ(v.checks.size(), 5u);
  EXPECT_EQ(v.checks[4].command, "ls -l /dev/nvidia-caps-imex-channels/ (inside the container)");
  // Single-tray runs still work: no IMEX, no channel needed.
  const JobVerdict one = check_job(g, in, trays(5, 5));
  EXPECT_EQ(one.outcome, "single_tray");
  EXPECT_TRUE(one.runs);
  // NCCL_MNNVL_ENABLE=0 confirms the diagnosis: it runs, over IB, at a fraction of the bandwidth.
  job.nccl.mnnvl_enable = 0;
  const JobVerdict ib = check_job(g, in, job);
  EXPECT_EQ(ib.outcome, "ib_forced");
  EXPECT_TRUE(ib.runs);
  EXPECT_FALSE(ib.uses_mnnvl);
  // Estimates, 16 ranks on 4 trays, S = 1 GiB: NVLink ring 2 x 15/16 x S / 900 GB/s; over IB: NVLink
  // reduce-scatter + all-gather in each tray 2 x 3/4 x S / 900 GB/s plus a ring over 4 trays on S/4 per
  // GPU at 50 GB/s: 2 x 3/4 x (S/4) / 50 GB/s.
  const double S = 1ULL << 30;
  EXPECT_NEAR(ib.bw_nvlink_s, 2.0 * 15 / 16 * S / 900e9, 1e-12);
  EXPECT_NEAR(ib.bw_ib_s, 2.0 * 3 / 4 * S / 900e9 + 2.0 * 3 / 4 * (S / 4) / 50e9, 1e-12);
  // The analytic model at vendor peaks, running what NCCL would, on the real graph and on the per-tray
  // graph. Without MNNVL NCCL runs rings across the 4 trays, one per NIC (4 per tray, 50 GB/s each):
  // within 10 % of 2 x 15/16 x S / (4 x 50 GB/s) (protocol payload and step latencies on top), above the
  // hierarchical bound it cannot overlap. With MNNVL NVLS runs inside the switch, at no more than
  // S / 900 GB/s and no less than NCCL's NVLS cap (tuning.cc:289-300).
  EXPECT_EQ(ib.calibration, "none");
  const double nic_rings = 2.0 * 15 / 16 * S / (4 * 50e9);
  EXPECT_NEAR(ib.ib_allreduce_s / nic_rings, 1.0, 0.1);
  EXPECT_GE(ib.ib_allreduce_s, ib.bw_ib_s);
  EXPECT_GE(ib.nvlink_allreduce_s, S / 900e9);
  EXPECT_LE(ib.nvlink_allreduce_s, 2 * S / 900e9);
  EXPECT_LT(ib.nvlink_allreduce_s / ib.ib_allreduce_s, 0.25);  // "a fraction of the bandwidth"
  // The fixed container: MNNVL.
  in.container_channels = std::set<int>{0};
  job.nccl.mnnvl_enable = 2;
  const JobVerdict fixed = check_job(g, in, job);
  EXPECT_EQ(fixed.outcome, "mnnvl");
  EXPECT_TRUE(fixed.uses_mnnvl);
  EXPECT_DOUBLE_EQ(fixed.expected_allreduce_s, fixed.nvlink_allreduce_s);
}

TEST(Mnnvl, OlderNcclFallsBackSilentlyAndNcclTooOldNeverTries) {
  const auto g = graph();
  FabricInputs in;
  in.imex_service[1] = ImexService::stopped;
  JobRequest job = trays(0, 1);
  job.nccl.version = "2.26.5";
  EXPECT_EQ(check_job(g, in, job).outcome, "ib_fallback");
  job.nccl.version = "2.27";
  EXPECT_EQ(check_job(g, in, job).outcome, "init_error");
  job.nccl.version = "2.25.1";
  EXPECT_EQ(check_job(g, in, job).outcome, "nccl_too_old");
  job.nccl.version = "2.26.5";
  job.nccl.mnnvl_enable = 1;  // forced on: an error at any MNNVL-capable version
  EXPECT_EQ(check_job(g, in, job).outcome, "init_error");
  job.nccl.mnnvl_enable = 2;
  job.nccl.p2p_disable = true;  // implies NCCL_MNNVL_ENABLE=0
  EXPECT_EQ(check_job(g, in, job).outcome, "ib_forced");
  job.nccl.version = "2.x";
  EXPECT_THROW(check_job(g, in, job), InputError);
}

TEST(Mnnvl, FabricStateImexDomainAndPeers) {
  const auto g = graph();
  FabricInputs in;
  in.gpu_fabric[9] = FabricState::in_progress;
  auto v = check_job(g, in, trays(2, 3));
  EXPECT_EQ(v.failed_checks, (std::vector<std::string>{"fabric state"}));
  EXPECT_NE(v.checks[0].detail.find("r0.t2.gpu1 In Progress"), std::string::npos);
  // nodes_config.cfg lists trays 0-7 only: a job on trays 6-9 is not covered.
  FabricInputs in2;
  in2.imex_domains = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15, 16, 17}};
  v = check_job(g, in2, trays(6, 9));
  EXPECT_EQ(v.failed_checks, (std::vector<std::string>{"IMEX domain"}));
  // A stopped IMEX on a tray outside the job: a warning, imports between the job's trays still work.
  FabricInputs in3;
  in3.imex_service[17] = ImexService::stopped;
  v = check_job(g, in3, trays(0, 1));
  EXPECT_EQ(v.outcome, "mnnvl");
  EXPECT_NE(v.checks[3].detail.find("not in this job"), std::string::npos);
}

TEST(Mnnvl, PartitionsGiveDifferentCliquesAndTraysDownStopTheJob) {
  const auto g = graph();
  FabricInputs in;
  in.partitions = {{0, 1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15, 16, 17}};
  const auto info = gpu_fabric_info(g, in);
  EXPECT_EQ(info[0].clique_id, 1);
  EXPECT_EQ(info[36].clique_id, 2);  // tray 9
  EXPECT_EQ(info[0].cluster_uuid, info[36].cluster_uuid);  // same NVL72, different partitions
  const auto v = check_job(g, in, trays(8, 9));
  EXPECT_EQ(v.outcome, "mnnvl_partitioned");
  EXPECT_EQ(v.nvlink_groups, 2);
  EXPECT_FALSE(share_buffer(g, in, 32, 36, HandleType::fabric).ok);  // different cliques cannot map each other
  FabricInputs down;
  down.trays_down = {4};
  EXPECT_EQ(check_job(g, down, trays(3, 5)).outcome, "cannot_start");
  EXPECT_EQ(gpu_fabric_info(g, down)[16].status, "tray down");
  EXPECT_THROW(check_job(g, FabricInputs{{}, {}, {0}, std::set<int>{0}, {}, {{0, 1}, {1, 2}}, {}}, trays(0, 1)), InputError);
}

TEST(Mnnvl, TwoRacksAreTwoNvlinkDomainsAndHgxHasNoMnnvl) {
  const auto two = graph("gb200-nvl72", 2);
  const auto v = check_job(two, FabricInputs{}, trays(16, 19));  // trays 16-17 in rack 0, 18-19 in rack 1
  EXPECT_EQ(v.outcome, "mnnvl_partitioned");
  EXPECT_EQ(v.nvlink_groups, 2);
  const auto hgx = graph("hgx-h100", 2);
  const auto h = check_job(hgx, FabricInputs{}, trays(0, 1, 8));
  EXPECT_EQ(h.outcome, "no_mnnvl_system");
  EXPECT_EQ(gpu_fabric_info(hgx, FabricInputs{})[0].state, "N/A");
}

TEST(IndexList, ParsesAndRejects) {
  EXPECT_EQ(parse_index_list("0-3,5", 18, "--trays"), (std::vector<int>{0, 1, 2, 3, 5}));
  EXPECT_THROW(parse_index_list("18", 18, "--trays"), InputError);
  EXPECT_THROW(parse_index_list("3-1", 18, "--trays"), InputError);
  EXPECT_THROW(parse_index_list("a", 18, "--trays"), InputError);
  EXPECT_EQ(compare_versions("2.27.3", "2.27", "v"), 1);
  EXPECT_EQ(compare_versions("2.25.2", "2.25.2", "v"), 0);
}

// Fig 3's first case: one process drives both GPUs of a tray; no handle leaves it. It cannot span trays.
TEST(SelfCheck4, SameProcessNeedsNoHandleAndStaysOnOneTray) {
  const auto g = graph();
  const auto same = share_buffer(g, FabricInputs{}, 0, 3, HandleType::same_process);
  ASSERT_TRUE(same.ok);
  EXPECT_EQ(same.handle, "none");
  EXPECT_EQ(same.handle_bytes, 0);
  ASSERT_EQ(same.steps.size(), 3u);
  EXPECT_NE(same.steps[1].how.find("cudaDeviceEnablePeerAccess"), std::string::npos);
  const auto across = share_buffer(g, FabricInputs{}, 0, 8, HandleType::same_process);
  EXPECT_FALSE(across.ok);
  EXPECT_NE(across.reason.find("need two processes and a fabric handle"), std::string::npos);
  EXPECT_EQ(handle_type_from_string("process", "--share"), HandleType::same_process);
}

}  // namespace
}  // namespace racksim::fabric
