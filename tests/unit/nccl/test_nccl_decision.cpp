// racksim's model of NCCL 2.28.9's decisions, checked against tables worked out by hand from NCCL's source
// (tag v2.28.9-1; file:line in each comment). These are the decisions `--algo auto` reports.
#include <gtest/gtest.h>

#include <cmath>

#include "../collectives/collective_test_support.hpp"
#include "models/nccl/nccl_system.hpp"
#include "models/nccl/nccl_tuner.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::nccl {
namespace {

NcclSystem view(const std::string& id, int gpus, int racks = 1) {
  const auto g = test::shipped(id, racks);
  return nccl_system(g, test::first_gpus(gpus));
}
constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

// ---- what NCCL sees -----------------------------------------------------------------------------

TEST(NcclSystem, HgxH100IsOneNodeOfEightOnNvswitch) {
  const NcclSystem s = view("hgx-h100", 8);
  EXPECT_EQ(s.n_nodes, 1);
  EXPECT_EQ(s.max_local_ranks, 8);
  EXPECT_EQ(s.min_compcap, 90);
  EXPECT_TRUE(s.nvswitch);
  EXPECT_TRUE(s.nvls_support);
  EXPECT_FALSE(s.mnnvl);
  EXPECT_NEAR(s.nvlink_bw, 18 * 20.6, 1e-9);  // 18 links x SM90_NVLINK_BW (topo.h:19)
}

TEST(NcclSystem, Nvl72RackIsOneMnnvlNode) {
  const NcclSystem s = view("gb200-nvl72", 72);
  EXPECT_EQ(s.n_nodes, 1);  // the trays' topologies are fused into one node (init.cc:914, 1095-1110)
  EXPECT_TRUE(s.mnnvl);
  EXPECT_NEAR(s.nvlink_bw, 18 * 40.1, 1e-9);  // SM100_NVLINK_BW (topo.h:21)
  EXPECT_EQ(s.cpu_isa, "aarch64");
}

TEST(NcclSystem, Gb200NicIsReachedOverC2c) {
  const NcclSystem s = view("gb200-nvl72", 144, 2);
  EXPECT_EQ(s.n_nodes, 2);
  EXPECT_EQ(s.nics_per_node, 72);
  EXPECT_EQ(s.gpu_nic_path, kPathP2c);  // C2C + PHB merge into P2C (paths.cc:181)
  EXPECT_NEAR(s.gpu_nic_bw, 48.0, 1e-9);  // the Grace's PCIe Gen5 x16: 16 x 240 / 80 (topo.cc:489-491)
  EXPECT_NEAR(s.net_bw, 50.0, 1e-9);      // 400 Gb/s / 8 (topo.cc:373)
}

// Before 2.27 NCCL had no P2C path type (topo.h at v2.26.2-1:59-92): GPU -> C2C -> Grace -> PCIe -> CX-7 was PHB,
// beyond the PXN that LL128 needs across nodes on sm90+ (tuning.cc at v2.26.2-1:425-428), so CoreWeave's 20 GB200
// racks on 2.26.2 (NVLS off) could only run Simple; 2.27 added P2C and NCCL_LL128_C2C (tuning.cc at v2.27.3-1:460)
// and 2.28 ordered P2C before PXN (topo.h at v2.28.9-1:80-83), so LL128 runs there from 2.27 on.
TEST(NcclSystem, Gb200NicPathBefore227IsPhb) {
  const TopologyGraph g(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), 2);
  std::vector<int> gpus(144);
  for (int i = 0; i < 144; ++i) gpus[i] = i;
  Overrides no_nvls;
  no_nvls.algos = {Algo::ring, Algo::tree};
  for (TunerRelease release : {TunerRelease::v2_26, TunerRelease::v2_27, TunerRelease::v2_28, TunerRelease::v2_29}) {
    const NcclSystem s = nccl_system(g, gpus, release);
    const bool before_p2c = release == TunerRelease::v2_26;
    EXPECT_EQ(s.gpu_nic_path, before_p2c ? kPathPhb : kPathP2c) << release_name(release);
    const TuneTables t = tune_model(s, compute_graphs(s), no_nvls);
    const int ar = int(Func::all_reduce);
    EXPECT_EQ(t.bandwidth[ar][int(Algo::ring)][int(Proto::ll128)] > 0, !before_p2c) << release_name(release);
    EXPECT_EQ(t.bandwidth[ar][int(Algo::tree)][int(Proto::ll128)] > 0, !before_p2c) << release_name(release);
    EXPECT_GT(t.bandwidth[ar][int(Algo::ring)][int(Proto::simple)], 0) << release_name(release);
  }
  // HGX B200's NICs sit on the GPUs' PCIe switches (PXB): LL128 in every release.
  const TopologyGraph hgx(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-b200"), 2);
  const NcclSystem s = nccl_system(hgx, test::first_gpus(16), TunerRelease::v2_26);
  EXPECT_LE(s.gpu_nic_path, kPathPxb);
  EXPECT_GT(tune_model(s, compute_graphs(s), no_nvls).bandwidth[int(Func::all_reduce)][int(Algo::ring)][int(Proto::ll128)], 0);
}

TEST(NcclSystem, Gb300NicSitsOnTheGpuPcieGen6) {
  const NcclSystem s = view("gb300-nvl72", 144, 2);
  EXPECT_EQ(s.gpu_nic_path, kPathPix);
  EXPECT_NEAR(s.gpu_nic_bw, 96.0, 1e-9);  // Gen6 x16: 16 x 480 / 80
  EXPECT_NEAR(s.net_bw, 100.0, 1e-9);     // ConnectX-8, 800 Gb/s
}

// AWS p5 (topologies/aws-p5.json): the EFA plugin reports 75 us to NCCL (aws-ofi-nccl src/platform-aws.cpp),
// which NCCL's tuner adds to every network step, twice with Simple (graph latencyInter, tuning.cc:352-357);
// the timing view takes the transport's own 20 us (+3 with Simple) instead. The hosts are AMD (7R13).
TEST(NcclSystem, EfaPluginLatencySteersNcclAndTheTransportTimes) {
  const NcclSystem s = view("aws-p5", 16, 2);
  EXPECT_EQ(s.n_nodes, 2);
  EXPECT_EQ(s.net_latency_us, 75);
  ASSERT_TRUE(s.transport_step_us);
  EXPECT_EQ(*s.transport_step_us, 20);
  EXPECT_EQ(s.transport_simple_overhead_us, 3);
  EXPECT_EQ(s.cpu_vendor, "amd");
  EXPECT_FALSE(s.timing);
  const Graphs g = compute_graphs(s);
  EXPECT_FLOAT_EQ(net_step_latency_us(s, g.tree, Algo::tree, Proto::ll), 5.0f + 75);
  EXPECT_FLOAT_EQ(net_step_latency_us(s, g.tree, Algo::tree, Proto::simple), 14.0f + 2 * 75);
  EXPECT_FLOAT_EQ(net_step_latency_us(s, g.ring, Algo::ring, Proto::ll), 2.7f + 75);
  const NcclSystem t = timing_view(s);
  EXPECT_FLOAT_EQ(net_step_latency_us(t, g.tree, Algo::tree, Proto::ll), 20.0f);
  EXPECT_FLOAT_EQ(net_step_latency_us(t, g.tree, Algo::tree, Proto::simple), 23.0f);
  // NCCL's own latency for a 2-node tree all-reduce, LL (tuning.cc:382-385): 6.8 + 2 x (7 x 0.6 + 1 x 80).
  const TuneTables tables = tune_model(s, g);
  EXPECT_NEAR(tables.latency[int(Func::all_reduce)][int(Algo::tree)][int(Proto::ll)], 6.8 + 2 * (7 * 0.6 + 80), 1e-4);
  // On InfiniBand (NCCL's IB plugin reports 0) both views are NCCL's: 6.8 + 2 x (7 x 0.6 + 5).
  const NcclSystem ib = view("hgx-h100", 16, 2);
  const TuneTables ib_tables = tune_model(ib, compute_graphs(ib));
  EXPECT_NEAR(ib_tables.latency[int(Func::all_reduce)][int(Algo::tree)][int(Proto::ll)], 6.8 + 2 * (7 * 0.6 + 5), 1e-4);
  EXPECT_FLOAT_EQ(net_step_latency_us(timing_view(ib), compute_graphs(ib).tree, Algo::tree, Proto::ll), 5.0f);
}

TEST(NcclSystem, HgxBoxesAreNodes) {
  const NcclSystem s = view("hgx-h100", 64, 8);
  EXPECT_EQ(s.n_nodes, 8);
  EXPECT_EQ(s.nics_per_node, 8);
  EXPECT_EQ(s.gpu_nic_path, kPathPix);
  EXPECT_EQ(s.cpu_vendor, "intel");
}

// ---- channel graphs (search.cc ncclTopoCompute) ----------------------------------------------------

// H100, 8 GPUs, NVSwitch at 370.8 GB/s per GPU. Ring: sm90 intra speeds start at 60 (search.cc:981,
// 1075): floor(370.8/60) = 6 channels = 360 GB/s; 50, 40, 30 give no more (7x50, 9x40, 12x30); 24/60 < .49
// stops (search.cc:1145). 60 >= 50 so the 6 channels are duplicated to 12 at 30 (search.cc:961-974); 40 with
// 12 channels does not fit in pass 2. Tree: exactly 12 channels (init.cc:1026-1027), speed <= 12/423.8:
// 30. NVLS: 8 heads each pulling (8+1) x s <= 370.8 -> 40 (search.cc:386-405, 1043-1046), pass 2 raises
// bwInter to 60 (search.cc:1175-1178). comm->nChannels = 2 x 12 (connect.cc:452); NVLS CTAs 16 (nvls.cc:148).
TEST(NcclGraphs, HgxH100) {
  const Graphs g = compute_graphs(view("hgx-h100", 8));
  EXPECT_EQ(g.ring.n_channels, 12);
  EXPECT_DOUBLE_EQ(g.ring.bw_intra, 30.0);
  EXPECT_EQ(g.tree.n_channels, 12);
  EXPECT_DOUBLE_EQ(g.tree.bw_intra, 30.0);
  EXPECT_EQ(g.nvls.n_channels, 8);
  EXPECT_DOUBLE_EQ(g.nvls.bw_intra, 40.0);
  EXPECT_DOUBLE_EQ(g.nvls.bw_inter, 60.0);
  EXPECT_EQ(g.comm_channels, 24);
  EXPECT_EQ(g.nvls_channels, 16);
}

// B200, 8 GPUs, 721.8 GB/s: ring 8 x 90 = 720 duplicated to 16 x 45; tree 16 channels fit at 40 (50 gives
// 14); NVLS 8 heads at 80 ((8+1) x 80 = 720), bwInter 90; comm 32 channels, 24 NVLS CTAs on one node
// (nvls.cc:150, 185-194).
TEST(NcclGraphs, HgxB200) {
  const Graphs g = compute_graphs(view("hgx-b200", 8));
  EXPECT_EQ(g.ring.n_channels, 16);
  EXPECT_DOUBLE_EQ(g.ring.bw_intra, 45.0);
  EXPECT_EQ(g.tree.n_channels, 16);
  EXPECT_DOUBLE_EQ(g.tree.bw_intra, 40.0);
  EXPECT_EQ(g.nvls.n_channels, 8);
  EXPECT_DOUBLE_EQ(g.nvls.bw_intra, 80.0);
  EXPECT_DOUBLE_EQ(g.nvls.bw_inter, 90.0);
  EXPECT_EQ(g.comm_channels, 32);
  EXPECT_EQ(g.nvls_channels, 24);
}

// GB200 NVL72, one rack: NVLS heads are capped at 32 (NCCL_MAX_NVLS_ARITY, device.h:207) and must all be
// found (min = max = 32); 33 x s <= 721.8 -> s = 20 (the sm100 array has 24, 20, 19, 18 there).
TEST(NcclGraphs, Nvl72NvlsHas32HeadsAt20) {
  const Graphs g = compute_graphs(view("gb200-nvl72", 72));
  EXPECT_EQ(g.nvls.n_channels, 32);
  EXPECT_DOUBLE_EQ(g.nvls.bw_intra, 20.0);
  EXPECT_DOUBLE_EQ(g.nvls.bw_inter, 40.0);
  EXPECT_EQ(g.nvls_channels, 24);
}

// Two GB200 racks: rings leave each rack through NICs at <= 48 GB/s (the GPU->NIC path's PCIe Gen5,
// search.cc:19-27, 1075); the inter array (search.cc:987) gives 48: 15 channels fit the NVLink (721.8/48),
// then 45.1 x 16 = 721.6 is better; no duplication below 50 with more than 4 channels. NVLS-tree heads: 32.
TEST(NcclGraphs, TwoGb200Racks) {
  const Graphs g = compute_graphs(view("gb200-nvl72", 144, 2));
  EXPECT_EQ(g.ring.n_channels, 16);
  EXPECT_DOUBLE_EQ(g.ring.bw_inter, 45.1);
  EXPECT_EQ(g.nvls.n_channels, 32);
  EXPECT_EQ(g.comm_channels, 32);
  EXPECT_EQ(g.nvls_channels, 32);  // several MNNVL domains: NVLS_NCHANNELS_SM100 (nvls.cc:149)
}

TEST(NcclGraphs, ChannelLimitsPlayNcclMinMaxNchannels) {
  const Graphs g = compute_graphs(view("hgx-h100", 8), ChannelLimits{0, 8});
  EXPECT_EQ(g.comm_channels, 8);
  EXPECT_EQ(g.nvls_channels, 8);
  const Graphs h = compute_graphs(view("hgx-h100", 8), ChannelLimits{40, 0});
  EXPECT_EQ(h.comm_channels, 40);
}

// ---- the tuner's table (tuning.cc:230-401) ---------------------------------------------------------

float bus(const TuneTables& t, Func f, Algo a, Proto p, int n) {  // NCCL's algorithm bandwidth as nccl-tests' busbw
  const double factor = f == Func::all_reduce ? 2.0 * (n - 1) / n : (n - 1.0) / n;
  return static_cast<float>(t.bandwidth[int(f)][int(a)][int(p)] * factor);
}

TEST(NcclTuner, HgxH100Table) {
  const NcclSystem s = view("hgx-h100", 8);
  const Graphs g = compute_graphs(s);
  const TuneTables t = tune_model(s, g);
  const Func ar = Func::all_reduce;
  EXPECT_NEAR(bus(t, ar, Algo::ring, Proto::simple, 8), 12 * 30.0, 1e-3);                 // nChannels x bw
  EXPECT_NEAR(bus(t, ar, Algo::ring, Proto::ll, 8), 141.0, 1e-3);                         // llMaxBw Hopper N1 (:304)
  EXPECT_NEAR(bus(t, ar, Algo::ring, Proto::ll128, 8), 360 * 0.92, 1e-2);                 // :305
  EXPECT_NEAR(bus(t, ar, Algo::nvls, Proto::simple, 8), 8 * 40 * 0.85 * 7.0 / 8 * 2, 1e-2);  // 476 (:289-300)
  EXPECT_NEAR(bus(t, ar, Algo::tree, Proto::simple, 8), 360 * 0.92 * 7.0 / 8, 1e-2);     // .92, then ratio .5 (:306, :349)
  // Latencies: ring 8.4 + 14 x 3.4; LL 6.6 + 14 x 0.6; NVLS the NVLink NVLS hwLat 25 (:362-392).
  EXPECT_NEAR(t.latency[int(ar)][int(Algo::ring)][int(Proto::simple)], 8.4 + 14 * 3.4, 1e-4);
  EXPECT_NEAR(t.latency[int(ar)][int(Algo::ring)][int(Proto::ll)], 6.6 + 14 * 0.6, 1e-4);
  EXPECT_NEAR(t.latency[int(ar)][int(Algo::nvls)][int(Proto::simple)], 25.0, 1e-6);
  // NVLS-tree is off on one node (:465).
  EXPECT_EQ(t.bandwidth[int(ar)][int(Algo::nvls_tree)][int(Proto::simple)], 0.0f);
}

TEST(NcclTuner, Nvl72NvlsBusBandwidth) {
  const NcclSystem s = view("gb200-nvl72", 72);
  const TuneTables t = tune_model(s, compute_graphs(s));
  // 32 heads x 20 GB/s x 0.74 (Blackwell nvlsEfficiency, :134-139) x 31/32 x 2 = 917.6
  EXPECT_NEAR(bus(t, Func::all_reduce, Algo::nvls, Proto::simple, 72), 32 * 20 * 0.74 * 31.0 / 32 * 2, 1e-2);
}

TEST(NcclTuner, LL128OffOverPcieAndOn) {
  const NcclSystem s = view("hgx-h100", 8);
  const TuneTables on = tune_model(s, compute_graphs(s));
  EXPECT_GT(on.bandwidth[int(Func::all_reduce)][int(Algo::ring)][int(Proto::ll128)], 0.0f);
  NcclSystem pcie = s;
  pcie.nvswitch = false;
  pcie.nvls_support = false;
  pcie.intra_path = kPathPhb;
  pcie.intra_pci_bw = 48;
  const TuneTables off = tune_model(pcie, compute_graphs(pcie));  // typeIntra PHB > NVB (:491)
  EXPECT_EQ(off.bandwidth[int(Func::all_reduce)][int(Algo::ring)][int(Proto::ll128)], 0.0f);
}

// ---- decisions: what `--algo auto` runs -------------------------------------------------------------

struct Expect {
  const char* system;
  int gpus, racks;
  std::uint64_t bytes;
  Algo algo;
  Proto proto;
  int channels;
};

class NcclDecision : public ::testing::TestWithParam<Expect> {};

// H100: LL ring for small (15 + S/80.6 beats NVLS 25 + S/272 below ~1.1 MB), NVLS above; NVLS runs on its
// 16 CTAs (enqueue.cc:1879-1885); ring channels drop while bytes < nc x nt x 8 x nRanks (:1886-1891).
// B200 one box: NVLS and ring Simple both reach 720 GB/s of bus bandwidth, NVLS's 25 us beats 56 us.
// A 4-GPU GB200 tray: NVLS has only 4 heads (busbw 360) so ring Simple wins large (Azure's ND GB200 v6
// runs say "Ring"). One NVL72 rack: NVLS at every size (25 us, 917.6 GB/s). Two racks: NVLS-tree.
// Eight HGX H100 boxes: tree LL for small, NVLS-tree for large. Two AWS p5 boxes (EFA): the 75 us a step the
// plugin reports, twice with Simple (tuning.cc:357-359), costs NVLS-tree 2 x 150 us more where the tree with
// LL128 pays 2 x 75, so at 16 MiB NCCL runs the tree with LL128 (its estimate 325.5 us against NVLS-tree's
// 434.9) where two IB boxes run NVLS-tree (134.9 against 175.5); at 1 GiB bandwidth decides: NVLS-tree.
INSTANTIATE_TEST_SUITE_P(
    Table, NcclDecision,
    ::testing::Values(Expect{"hgx-h100", 8, 1, 1 * KiB, Algo::ring, Proto::ll, 1},
                      Expect{"hgx-h100", 8, 1, 1 * MiB, Algo::ring, Proto::ll, 24},
                      Expect{"hgx-h100", 8, 1, 16 * MiB, Algo::nvls, Proto::simple, 16},
                      Expect{"hgx-h100", 8, 1, 1 * GiB, Algo::nvls, Proto::simple, 16},
                      Expect{"hgx-b200", 8, 1, 1 * GiB, Algo::nvls, Proto::simple, 24},
                      Expect{"gb200-nvl72", 4, 1, 16 * MiB, Algo::ring, Proto::ll128, 32},
                      Expect{"gb200-nvl72", 4, 1, 1 * GiB, Algo::ring, Proto::simple, 32},
                      Expect{"gb200-nvl72", 72, 1, 1 * KiB, Algo::nvls, Proto::simple, 24},
                      Expect{"gb200-nvl72", 72, 1, 1 * GiB, Algo::nvls, Proto::simple, 24},
                      Expect{"gb200-nvl72", 144, 2, 1 * GiB, Algo::nvls_tree, Proto::simple, 32},
                      Expect{"hgx-h100", 64, 8, 1 * KiB, Algo::tree, Proto::ll, 1},
                      Expect{"hgx-h100", 64, 8, 1 * GiB, Algo::nvls_tree, Proto::simple, 16},
                      Expect{"aws-p5", 16, 2, 8, Algo::tree, Proto::ll, 1},
                      Expect{"aws-p5", 16, 2, 16 * MiB, Algo::tree, Proto::ll128, 16},
                      Expect{"hgx-h100", 16, 2, 16 * MiB, Algo::nvls_tree, Proto::simple, 16},
                      Expect{"aws-p5", 16, 2, 1 * GiB, Algo::nvls_tree, Proto::simple, 16}));

TEST_P(NcclDecision, MatchesTheHandTable) {
  const Expect e = GetParam();
  const Decision d = decide(view(e.system, e.gpus, e.racks), Func::all_reduce, e.bytes);
  EXPECT_EQ(d.algo, e.algo) << to_string(d.algo);
  EXPECT_EQ(d.proto, e.proto) << to_string(d.proto);
  EXPECT_EQ(d.channels, e.channels);
}

// CollNet (IB SHARP) on four HGX B200 nodes: off unless collnetEnable (tuning.cc:502-507); with it, NCCL's
// latencies 2 (min(1, ppn-1) x 3.7 + (ppn-1) x 0.4) + 31 for Direct (:418-421) and 2 (ppn-1) x 2.8 + 30 for
// Chain (:422-423), hwLat NVLink 3.7 / 2.8 and network 31 / 30 us (:160, :172), baseLat 0 (:152), IB's
// latency attribute 0; Simple only (:338-339); NVLS across nodes runs over CollNet (:504-505).
TEST(NcclTuner, CollnetOnlyWithCollnetEnable) {
  const NcclSystem s = view("hgx-b200", 32, 4);
  ASSERT_EQ(s.n_nodes, 4);
  EXPECT_TRUE(s.collnet_fabric);
  const Graphs g = compute_graphs(s);
  const Func ar = Func::all_reduce;
  const TuneTables off = tune_model(s, g);
  for (Algo a : {Algo::collnet_direct, Algo::collnet_chain, Algo::nvls})
    EXPECT_EQ(off.bandwidth[int(ar)][int(a)][int(Proto::simple)], 0.0f) << to_string(a);
  Overrides on;
  on.collnet = true;
  const TuneTables t = tune_model(s, g, on);
  for (Algo a : {Algo::collnet_direct, Algo::collnet_chain, Algo::nvls}) {
    EXPECT_GT(t.bandwidth[int(ar)][int(a)][int(Proto::simple)], 0.0f) << to_string(a);
    EXPECT_EQ(t.bandwidth[int(ar)][int(a)][int(Proto::ll)], 0.0f) << to_string(a);
  }
  EXPECT_NEAR(t.latency[int(ar)][int(Algo::collnet_direct)][int(Proto::simple)], 2 * (3.7 + 7 * 0.4) + 31, 1e-4);
  EXPECT_NEAR(t.latency[int(ar)][int(Algo::collnet_chain)][int(Proto::simple)], 2 * 7 * 2.8 + 30, 1e-4);
  // Auto without collnetEnable never picks them; with it, NVLS across nodes is a candidate with a time.
  const Decision d_off = decide(s, ar, 16 * GiB);
  EXPECT_NE(d_off.algo, Algo::collnet_direct);
  EXPECT_NE(d_off.algo, Algo::collnet_chain);
  EXPECT_NE(d_off.algo, Algo::nvls);
  bool nvls_timed = false;
  for (const auto& c : decide(s, ar, 16 * GiB, on).candidates) nvls_timed = nvls_timed || (c.algo == Algo::nvls && c.time_us > 0);
  EXPECT_TRUE(nvls_timed);
}

// NCCL runs CollNet Direct with at most 8 GPUs per node (its heads, NCCL_MAX_DIRECT_ARITY + 1) in every release,
// and CollNet Chain likewise from 2.28.3 (enqueue.cc at v2.28.9-1:1798-1801; at v2.27.7-1 only Direct's rule): two
// GB200 NVL72 racks, two nodes of 72, with CollNet on run NVLS over CollNet, and asking for Direct or Chain is
// refused with the reason; on 2.27 Chain still runs. Eight HGX B200 GPUs per node keep both.
TEST(NcclTuner, CollnetRunsAtMostEightGpusPerNode) {
  const TopologyGraph g(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), 2);
  Overrides on;
  on.collnet = true;
  const NcclSystem s = nccl_system(g, test::first_gpus(144));
  ASSERT_EQ(s.max_local_ranks, 72);
  const Decision d = decide(s, Func::all_reduce, 1 * GiB, on);
  EXPECT_EQ(d.algo, Algo::nvls);
  for (const auto& c : d.candidates)
    if ((c.algo == Algo::collnet_direct || c.algo == Algo::collnet_chain) && c.proto == Proto::simple) {
      EXPECT_LT(c.time_us, 0) << to_string(c.algo);
      EXPECT_NE(c.why_not.find("at most 8 GPUs per node, here 72"), std::string::npos) << c.why_not;
    }
  for (Algo a : {Algo::collnet_direct, Algo::collnet_chain}) {
    Overrides only = on;
    only.algos = {a};
    try {
      decide(s, Func::all_reduce, 1 * GiB, only);
      ADD_FAILURE() << to_string(a) << " accepted on 72 GPUs per node";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("runs at most 8 GPUs per node, here 72 (enqueue.cc:1798-1801)"), std::string::npos) << e.what();
    }
  }
  Overrides chain = on;
  chain.algos = {Algo::collnet_chain};
  EXPECT_EQ(decide(nccl_system(g, test::first_gpus(144), TunerRelease::v2_27), Func::all_reduce, 1 * GiB, chain).algo, Algo::collnet_chain);
  const NcclSystem b200 = view("hgx-b200", 32, 4);
  for (Algo a : {Algo::collnet_direct, Algo::collnet_chain}) {
    Overrides only = on;
    only.algos = {a};
    EXPECT_EQ(decide(b200, Func::all_reduce, 1 * GiB, only).algo, a) << to_string(a);
  }
}

// The element type (every release racksim knows): NVLS reduces only 32/64-bit integers, half, bfloat16, float and
// double (ncclNvlsSupported, device.h:544-559; enqueue.cc:384), so an int8 all-reduce on one GB200 rack runs Ring where
// float runs NVLS; an fp8 one over more than 8 ranks also puts Ring last (x1024, enqueue.cc:1809-1815) and runs Tree.
TEST(NcclDecision, TheElementTypeDecidesNvlsAndFp8Rings) {
  const NcclSystem s = view("gb200-nvl72", 72);
  EXPECT_EQ(decide(s, Func::all_reduce, 1 * GiB).algo, Algo::nvls);
  Overrides int8;
  int8.nvls_reduces_type = false;
  const Decision d = decide(s, Func::all_reduce, 1 * GiB, int8);
  EXPECT_EQ(d.algo, Algo::ring);
  for (const auto& c : d.candidates) {
    if (c.algo == Algo::nvls) {
      EXPECT_NE(c.why_not.find("do not reduce this element type"), std::string::npos) << c.why_not;
    }
  }
  Overrides fp8 = int8;
  fp8.fp8 = true;
  const Decision f = decide(s, Func::all_reduce, 1 * GiB, fp8);
  EXPECT_EQ(f.algo, Algo::tree);
  double ring_float = -1, ring_fp8 = -1;
  for (const auto& c : d.candidates)
    if (c.algo == Algo::ring && c.proto == Proto::simple) ring_float = c.time_us;
  for (const auto& c : f.candidates)
    if (c.algo == Algo::ring && c.proto == Proto::simple) ring_fp8 = c.time_us;
  EXPECT_DOUBLE_EQ(ring_fp8, 1024 * ring_float);
  // An all-gather moves no sum: NVLS stays (8 GPUs: within NVLS's arity for all-gather).
  EXPECT_EQ(decide(view("hgx-h100", 8), Func::all_gather, 1 * GiB, fp8).algo, decide(view("hgx-h100", 8), Func::all_gather, 1 * GiB).algo);
}

TEST(NcclDecision, OverridesPlayNcclAlgoAndProto) {
  const NcclSystem s = view("hgx-h100", 8);
  Overrides ring_only;
  ring_only.algos = {Algo::ring};
  EXPECT_EQ(decide(s, Func::all_reduce, 1 * GiB, ring_only).algo, Algo::ring);
  EXPECT_EQ(decide(s, Func::all_reduce, 1 * GiB, ring_only).proto, Proto::simple);
  Overrides ll;
  ll.algos = {Algo::ring};
  ll.protos = {Proto::ll};
  EXPECT_EQ(decide(s, Func::all_reduce, 1 * GiB, ll).proto, Proto::ll);
  Overrides impossible;
  impossible.algos = {Algo::nvls_tree};  // off on one node
  EXPECT_THROW(decide(s, Func::all_reduce, 1 * GiB, impossible), InputError);
}

TEST(NcclDecision, OneRankCopies) {
  const Decision d = decide(view("hgx-h100", 1), Func::all_reduce, 1 * MiB);
  EXPECT_EQ(d.algo, Algo::ring);
  EXPECT_EQ(d.channels, 1);
}

// calcCollChunking (enqueue.cc:2040-2049): NVLS on 16 channels x 8 heads: 128 KiB from 8 GiB down to
// 64 x 128 ops x 128 KiB = 1 GiB, then 64 KiB, and 32 KiB below 8 x 128 x 64 KiB = 64 MiB.
TEST(NcclDecision, NvlsChunkSizeFollowsTheSize) {
  const NcclSystem s = view("hgx-h100", 8);
  EXPECT_EQ(decide(s, Func::all_reduce, 2 * GiB).chunk_bytes, 128 * KiB);
  EXPECT_EQ(decide(s, Func::all_reduce, 256 * MiB).chunk_bytes, 64 * KiB);
  EXPECT_EQ(decide(s, Func::all_reduce, 16 * MiB).chunk_bytes, 32 * KiB);
}

// NCCL versions as NCCL and nccl-tests print them map to the tuner tables racksim has: 2.25.1 to 2.27.x share
// one set (tuning.cc of v2.25.1-1 and v2.27.3-1), 2.28 takes 2.28.9's, 2.29 on 2.29.7's. 2.25 and 2.26 are a
// release of their own (v2_26) for their path types: no P2C yet (Gb200NicPathBefore227IsPhb below).
TEST(NcclRelease, VersionsAsNcclPrintsThemMapToTheirTunerTables) {
  EXPECT_EQ(tuner_release("2.28"), TunerRelease::v2_28);
  EXPECT_EQ(tuner_release("2.28.9"), TunerRelease::v2_28);
  EXPECT_EQ(tuner_release("2.29.7"), TunerRelease::v2_29);
  EXPECT_EQ(tuner_release("2.29"), TunerRelease::v2_29);
  EXPECT_EQ(tuner_release("2.30.7"), TunerRelease::v2_30);
  EXPECT_EQ(tuner_release("23004"), TunerRelease::v2_30);
  EXPECT_EQ(tuner_release("2.31.2"), TunerRelease::v2_30);  // no later source here: 2.30's tables
  EXPECT_STREQ(release_name(TunerRelease::v2_30), "2.30");
  EXPECT_EQ(tuner_release("2.27.3+cuda12.9"), TunerRelease::v2_27);
  EXPECT_EQ(tuner_release("2.26.6+cuda12.8"), TunerRelease::v2_26);
  EXPECT_EQ(tuner_release("2.25.1"), TunerRelease::v2_26);
  EXPECT_EQ(tuner_release("22602"), TunerRelease::v2_26);  // nccl-tests' nccl-library code
  EXPECT_EQ(&tuner_tables(TunerRelease::v2_26), &tuner_tables(TunerRelease::v2_27));  // 2.27's tables
  EXPECT_STREQ(release_name(TunerRelease::v2_26), "2.26");
  EXPECT_EQ(tuner_release("22809"), TunerRelease::v2_28);
  EXPECT_EQ(tuner_release("22907"), TunerRelease::v2_29);
  EXPECT_EQ(tuner_release("2.27 (v2.27_sym_memory branch)"), TunerRelease::v2_27);
  for (const char* bad : {"2.17.1", "2.16", "3.0", "2", "2.", ".28", "latest", "", "2.280"})
    EXPECT_THROW(tuner_release(bad), InputError) << bad;
  EXPECT_FALSE(tuner_release_if_known("None").has_value());
  EXPECT_FALSE(tuner_release_if_known("2.17.1").has_value());  // no NVLS-tree yet
}

// Releases older than racksim's tables (2.18-2.24) take the oldest ones, 2.27's, and say how near they are:
// 2.23-2.24's tuning.cc has the same Hopper terms (v2.24.3-1 against v2.26.2-1), 2.19-2.22 charge Tree/Simple
// 28 us per NVLink step and 2.18-2.20 cap LL at 87.7 GB/s per channel (v2.18.5-1 .. v2.22.3-1:67, :89).
TEST(NcclRelease, OlderReleasesTakeTheOldestTablesWithACaveat) {
  for (const char* v : {"2.18.5", "2.20.5", "2.21.5", "2.23.4+cuda12.6", "2.24.3", "22403"})
    EXPECT_EQ(tuner_release(v), TunerRelease::v2_26) << v;
  EXPECT_EQ(tuner_release_caveat("2.26.2"), "");
  EXPECT_EQ(tuner_release_caveat("2.28"), "");
  EXPECT_EQ(tuner_release_caveat("latest"), "");
  EXPECT_EQ(tuner_release_caveat("2.24.3"),
            "NCCL 2.24 is older than racksim's tuner tables (2.25 on): priced with 2.27's, the nearest; 2.24's tuning.cc "
            "has the same Hopper latencies and caps (it has no Blackwell rows: NCCL supports Blackwell from 2.25)");
  EXPECT_NE(tuner_release_caveat("2.23.4").find("same Hopper latencies"), std::string::npos);
  EXPECT_NE(tuner_release_caveat("2.22.3").find("(Tree/Simple without its 8.4 us base latency; Tree/Simple at 28 us per "
                                                "NVLink step, not 4)"),
            std::string::npos);
  EXPECT_NE(tuner_release_caveat("2.20.5").find("; Tree/Simple at 28 us per NVLink step, not 4; LL capped at 87.7"),
            std::string::npos);
  EXPECT_NE(tuner_release_caveat("2.18.5").find("(Tree/Simple without its 8.4 us base latency; LL capped at 87.7 GB/s per "
                                                "channel, not 141)"),
            std::string::npos);
}

// NCCL 2.28 cut Blackwell's Tree cap beyond two nodes from 2 x 36.0 to 24.0 GB/s per channel (tuning.cc at
// v2.27.3-1:188, v2.28.9-1:193): four HGX B200 nodes.
TEST(NcclRelease, BlackwellTreeCapsFollowTheRelease) {
  const TopologyGraph g(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-b200"), 4);
  std::vector<int> gpus(32);
  for (int i = 0; i < 32; ++i) gpus[i] = i;
  double cap_per_channel[2] = {0, 0};
  for (TunerRelease release : {TunerRelease::v2_27, TunerRelease::v2_28}) {
    const int slot = release == TunerRelease::v2_27 ? 0 : 1;
    const NcclSystem s = nccl_system(g, gpus, release);
    const Graphs gr = compute_graphs(s);
    const AlgoTerms t = algo_terms(s, gr, Func::all_reduce, Algo::tree, Proto::simple);
    const double pattern = gr.tree.pattern == Pattern::tree ? .85 : 1.0;  // tuning.cc:309
    cap_per_channel[slot] = t.algbw_cap_GBps / (gr.tree.n_channels * pattern * 0.5);
  }
  EXPECT_NEAR(cap_per_channel[0], 2 * 36.0, 1e-9);
  EXPECT_NEAR(cap_per_channel[1], 24.0, 1e-9);
}

// NVIDIA/nccl issue #1801: three NVL4 partitions of GB200 in three racks, IB between them, NVLS off, NCCL
// 2.27.3, where NCCL's auto ran Ring at 16 GiB. 2.27's sm100 inter speeds start at 47.9 (v2.27.3
// search.cc:913): 4 NICs x 1 channel = 191.6 GB/s, then 24 fits two channels a NIC (50 / 24), 8 x 24 = 192 is
// better. The tree must find the ring's 8 channels (v2.27.3 init.cc:858); the NIC pays a channel's whole
// bwInter whatever the pattern (search.cc:670-690), so it too runs at 24 across nodes, which makes its tuner
// bandwidth lose to the ring's (a half-NIC charge for the balanced tree gave it 8 x 47.9 and picked Tree).
TEST(NcclRelease, ThreeNvl4PartitionsRunTheRingAsIssue1801Reports) {
  const TopologyGraph g(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), 3);
  const int per_rack = g.gpu_count() / 3;
  std::vector<int> gpus;
  for (int rack = 0; rack < 3; ++rack)
    for (int i = 0; i < 4; ++i) gpus.push_back(rack * per_rack + i);
  const NcclSystem s = nccl_system(g, gpus, TunerRelease::v2_27);
  ASSERT_EQ(s.n_nodes, 3);
  ASSERT_EQ(s.nics_per_node, 4);
  const Graphs gr = compute_graphs(s);
  EXPECT_EQ(gr.ring.n_channels, 8);
  EXPECT_DOUBLE_EQ(gr.ring.bw_inter, 24.0);
  EXPECT_EQ(gr.tree.n_channels, 8);
  EXPECT_DOUBLE_EQ(gr.tree.bw_inter, 24.0);
  Overrides no_nvls;
  no_nvls.algos = {Algo::ring, Algo::tree};
  EXPECT_EQ(decide(s, Func::all_reduce, 16 * GiB, no_nvls).algo, Algo::ring);
}

// NCCL's per-channel caps are tuned on the channels its defaults run; NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS run more
// CTAs, and each moves its share (nccl-tests #322: 128 HGX H100 nodes, Ring/LL128 forced on 32 channels, 367 GB/s
// busbw at 16 GiB against the 8 graph channels x 36.7 = 294 of NCCL's tuner). Across nodes Hopper's ring graph
// has 8 channels at 48 GB/s and NCCL runs 16 (connect.cc:452); on 32 the LL128 and tree caps double, on 4 they
// quarter; the tuner's own figures (tune_model, NCCL's choice) do not move.
TEST(NcclRelease, PerChannelCapsScaleWithTheChannelsThatRun) {
  const TopologyGraph g(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-h100"), 4);
  const NcclSystem s = nccl_system(g, test::first_gpus(32), TunerRelease::v2_28);
  const Graphs defaults = compute_graphs(s);
  ASSERT_EQ(defaults.ring.n_channels, 8);
  ASSERT_EQ(defaults.comm_channels, 16);
  EXPECT_EQ(defaults.default_comm_channels, 16);
  const double ring_ratio = 32.0 / (2.0 * 31);  // bus -> algbw
  const auto ll128_cap = [&](const Graphs& gr) { return algo_terms(s, gr, Func::all_reduce, Algo::ring, Proto::ll128).algbw_cap_GBps; };
  EXPECT_NEAR(ll128_cap(defaults), 8 * 36.7 * ring_ratio, 1e-9);
  const Graphs more = compute_graphs(s, {32, 32});
  EXPECT_EQ(more.comm_channels, 32);
  EXPECT_EQ(more.default_comm_channels, 16);
  EXPECT_NEAR(ll128_cap(more), 2 * 8 * 36.7 * ring_ratio, 1e-9);
  EXPECT_NE(algo_terms(s, more, Func::all_reduce, Algo::ring, Proto::ll128).cap_source.find("32/16 channels run"), std::string::npos);
  const Graphs fewer = compute_graphs(s, {4, 4});
  EXPECT_NEAR(ll128_cap(fewer), 8 * 36.7 * ring_ratio / 4, 1e-9);
  const double tree_cap = algo_terms(s, defaults, Func::all_reduce, Algo::tree, Proto::simple).algbw_cap_GBps;
  EXPECT_NEAR(algo_terms(s, more, Func::all_reduce, Algo::tree, Proto::simple).algbw_cap_GBps, 2 * tree_cap, 1e-9);
  const TuneTables t_default = tune_model(s, defaults), t_more = tune_model(s, more);
  EXPECT_EQ(t_default.bandwidth[int(Func::all_reduce)][int(Algo::ring)][int(Proto::ll128)],
            t_more.bandwidth[int(Func::all_reduce)][int(Algo::ring)][int(Proto::ll128)]);
}

// NCCL 2.29 (tuning.cc and search.cc at v2.29.7-1). Eight B200s: the intra speeds gained 45 (search.cc:987), so
// the tree's 16 channels (the ring's, duplicated from 8 x 90) fit at 45 where 2.28 stops at 40 (16 x 50 >
// 721.8). Blackwell's ring LL128 cap is 40 GB/s per channel on every node count (:180; 2.28: 73.4 / 34.6 / 73.4).
// NVLS-tree's bandwidth takes the Tree's size correction on x86 Blackwell (:596): two HGX B200 nodes at 16 MiB
// (log2(16 MiB / 64) = 18: Simple's factor .7), not at 1 GiB (beyond the table), nor on 2.28.
TEST(NcclRelease, Nccl229ChangesBlackwellSpeedsLl128CapAndNvlsTreeCorrection) {
  const TopologyGraph one(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-b200"), 1);
  const Graphs g28 = compute_graphs(nccl_system(one, test::first_gpus(8), TunerRelease::v2_28));
  const Graphs g29 = compute_graphs(nccl_system(one, test::first_gpus(8), TunerRelease::v2_29));
  EXPECT_DOUBLE_EQ(g28.tree.bw_intra, 40.0);
  EXPECT_EQ(g29.tree.n_channels, 16);
  EXPECT_DOUBLE_EQ(g29.tree.bw_intra, 45.0);
  EXPECT_EQ(g29.ring.n_channels, g28.ring.n_channels);

  const TopologyGraph two(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-b200"), 2);
  const NcclSystem s28 = nccl_system(two, test::first_gpus(16), TunerRelease::v2_28);
  const NcclSystem s29 = nccl_system(two, test::first_gpus(16), TunerRelease::v2_29);
  const Graphs gr = compute_graphs(s29);
  const double ll128_cap = algo_terms(s29, gr, Func::all_reduce, Algo::ring, Proto::ll128).algbw_cap_GBps;
  EXPECT_NEAR(ll128_cap, gr.ring.n_channels * 40.0 * 16 / (2.0 * 15), 1e-6);  // bus -> algbw: nRanks / 2 (nRanks - 1)

  const TuneTables t28 = tune_model(s28, compute_graphs(s28)), t29 = tune_model(s29, gr);
  const auto nvls_tree_time = [](const NcclSystem& s, const TuneTables& t, std::uint64_t bytes) {
    return algo_time_us(s, compute_graphs(s), t, Func::all_reduce, Algo::nvls_tree, Proto::simple, bytes);
  };
  const double lat = t29.latency[int(Func::all_reduce)][int(Algo::nvls_tree)][int(Proto::simple)];
  const double bw = t29.bandwidth[int(Func::all_reduce)][int(Algo::nvls_tree)][int(Proto::simple)];
  ASSERT_GT(bw, 0);
  EXPECT_NEAR(nvls_tree_time(s29, t29, 16 * MiB), lat + 16.0 * MiB / (1000.0 * bw * .7), 1e-4);  // .7 as NCCL's float
  EXPECT_NEAR(nvls_tree_time(s29, t29, 1 * GiB), lat + 1.0 * GiB / (1000.0 * bw), 1e-6);
  const double lat28 = t28.latency[int(Func::all_reduce)][int(Algo::nvls_tree)][int(Proto::simple)];
  const double bw28 = t28.bandwidth[int(Func::all_reduce)][int(Algo::nvls_tree)][int(Proto::simple)];
  EXPECT_NEAR(nvls_tree_time(s28, t28, 16 * MiB), lat28 + 16.0 * MiB / (1000.0 * bw28), 1e-6);
}

// NCCL 2.30 (v2.30.7-1): Blackwell's NVLS-tree cap beyond two nodes 80 GB/s per channel, 43.8 before (tuning.cc:211),
// a search speed of 86 (search.cc:1064-1065), and NVLS's CTAs and chunks on Blackwell across nodes set by
// ncclNvlsTreeSm100Tuning (transport/nvls.cc:161-199): two nodes with a 48 GB/s path to the NIC 32 CTAs,
// NVLS-tree's largest chunk 128 KiB, 256 KiB (and a 256 KiB chunk) with <= 4 GPUs a node, 64 KiB with >= 16 or
// with <= 8 behind a PCIe switch at < 96; beyond two nodes at >= 96 GB/s 24 CTAs and 256 KiB with <= 8 GPUs a
// node, else 32 CTAs and 128 KiB (< 32 GPUs) or 64 KiB; at >= 48 GB/s 24 CTAs and 128 KiB, 64 KiB up to PXB.
// One node, Hopper and releases before 2.30 keep 24 / 32 / 16 CTAs and 128 KiB, 64 KiB from 4 nodes on.
TEST(NcclRelease, Nccl230TunesNvlsOnBlackwellAcrossNodes) {
  EXPECT_DOUBLE_EQ(tuner_tables(TunerRelease::v2_30).per_ch_max_nvls_tree_bw[3][2], 80.0);
  EXPECT_DOUBLE_EQ(tuner_tables(TunerRelease::v2_29).per_ch_max_nvls_tree_bw[3][2], 43.8);
  EXPECT_DOUBLE_EQ(tuner_tables(TunerRelease::v2_30).sm100_inter_speeds[1], 86.0);
  struct Case {
    const char* system;
    int racks, gpus;
    int channels29, tree_max29, channels30, chunk30, tree_max30;
  };
  const Case cases[] = {
      {"hgx-b200", 4, 32, 32, 64 * 1024, 24, 128 * 1024, 64 * 1024},      // 48 GB/s, PIX
      {"hgx-b200", 2, 16, 32, 128 * 1024, 32, 128 * 1024, 64 * 1024},     // two nodes, 8 GPUs behind PIX at < 96
      {"gb200-nvl72", 2, 144, 32, 128 * 1024, 32, 128 * 1024, 64 * 1024}, // two racks, 72 GPUs a node
      {"gb200-nvl72", 4, 288, 32, 64 * 1024, 24, 128 * 1024, 128 * 1024}, // 48 GB/s over C2C (P2C)
      {"gb300-nvl72", 4, 288, 32, 64 * 1024, 32, 128 * 1024, 64 * 1024},  // 96 GB/s, 72 GPUs a node
      {"hgx-b300", 4, 32, 32, 64 * 1024, 24, 256 * 1024, 256 * 1024},     // 96 GB/s, 8 GPUs a node
      {"hgx-b200", 1, 8, 24, 128 * 1024, 24, 128 * 1024, 128 * 1024},     // one node: not tuned
      {"hgx-h100", 4, 32, 16, 64 * 1024, 16, 128 * 1024, 64 * 1024},      // Hopper: not tuned
  };
  for (const Case& c : cases) {
    const TopologyGraph g(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(c.system), c.racks);
    const Graphs g29 = compute_graphs(nccl_system(g, test::first_gpus(c.gpus), TunerRelease::v2_29));
    const Graphs g30 = compute_graphs(nccl_system(g, test::first_gpus(c.gpus), TunerRelease::v2_30));
    EXPECT_EQ(g29.nvls_channels, c.channels29) << c.system << " x" << c.racks;
    EXPECT_EQ(g29.nvls_chunk, 128 * 1024) << c.system << " x" << c.racks;
    EXPECT_EQ(g29.nvls_tree_max_chunk, c.tree_max29) << c.system << " x" << c.racks;
    EXPECT_EQ(g30.nvls_channels, c.channels30) << c.system << " x" << c.racks;
    EXPECT_EQ(g30.nvls_chunk, c.chunk30) << c.system << " x" << c.racks;
    EXPECT_EQ(g30.nvls_tree_max_chunk, c.tree_max30) << c.system << " x" << c.racks;
  }
  // What an 8 GiB NVLS-tree all-reduce on four HGX B300 nodes runs: 24 CTAs of 256 KiB chunks (2.29: 32 of 64 KiB).
  const TopologyGraph b300(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-b300"), 4);
  Overrides nvls_tree;
  nvls_tree.algos = {Algo::nvls_tree};
  const Decision d29 = decide(nccl_system(b300, test::first_gpus(32), TunerRelease::v2_29), Func::all_reduce, 8 * GiB, nvls_tree);
  const Decision d30 = decide(nccl_system(b300, test::first_gpus(32), TunerRelease::v2_30), Func::all_reduce, 8 * GiB, nvls_tree);
  EXPECT_EQ(d29.channels, 32);
  EXPECT_EQ(d29.chunk_bytes, 64 * KiB);
  EXPECT_EQ(d30.channels, 24);
  EXPECT_EQ(d30.chunk_bytes, 256 * KiB);
}

}  // namespace
}  // namespace racksim::nccl
