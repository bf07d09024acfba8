// Job mixes: the strict JSON form, DeviceMesh groups, the operator's scenario of issue 13 in both partition
// modes, and contention between jobs against a closed form.
#include <gtest/gtest.h>

#include "models/jobs/job_runner.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

const char* kOperator = R"({
  "schema_version": 1, "name": "operator", "system": "gb200-nvl72", "racks": 2,
  "partitions": "a=trays:0-7;b=trays:8-15;spare=trays:16-17;big=trays:18-35",
  "calibration": "none", "failures": ["tray:7"],
  "jobs": [
    {"name": "big72", "partition": "big", "mesh_shape": [18, 4], "mesh_dim_names": ["dp", "tp"],
     "collectives": [{"op": "all_reduce", "bytes": "256M", "dim": "tp"}, {"op": "all_reduce", "bytes": "1G"}]},
    {"name": "a32", "trays": "0-7", "mesh_shape": [8, 4], "mesh_dim_names": ["dp", "tp"],
     "collectives": [{"op": "all_reduce", "bytes": "256M", "dim": "tp"}, {"op": "all_reduce", "bytes": "1G"}]},
    {"name": "b32", "trays": "8-15", "mesh_shape": [8, 4], "mesh_dim_names": ["dp", "tp"],
     "collectives": [{"op": "all_reduce", "bytes": "256M", "dim": "tp"}, {"op": "all_reduce", "bytes": "1G"}]}]})";

std::string job_mix_error_of(const std::string& text) {
  try {
    const JobMix m = job_mix_from_json_text(text, "mix.json");
    TopologyGraph g(SystemCatalog::shipped().load(m.system), m.racks.value_or(1));
    if (!m.partitions.empty()) g.apply_partitions(parse_partitions(m.partitions, g));
    resolve_jobs(m, g);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const JobFate& fate(const MixResult& r, const std::string& name) {
  for (const auto& f : r.failure->jobs)
    if (f.name == name) return f;
  throw std::runtime_error("no job " + name);
}

TEST(JobMix, StrictJsonNamesTheBadValue) {
  const std::string head = R"({"schema_version": 1, "system": "gb200-nvl72", "jobs": [)";
  const std::string ok_job = R"({"name": "j", "trays": "0-1", "collectives": [{"op": "all_reduce", "bytes": "1M"}]})";
  EXPECT_EQ(job_mix_error_of(head + ok_job + "]}"), "");
  EXPECT_NE(job_mix_error_of(head + ok_job + R"(], "colour": 1})").find("colour"), std::string::npos);  // unknown key
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "tray": "0", "collectives": []}]})").find("tray"), std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "collectives": [{"op": "all_reduce", "bytes": "1M"}]}]})").find("placements"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "trays": "0", "gpus": "0-3", "collectives": [{"op": "all_reduce", "bytes": "1M"}]}]})")
                .find("exactly one"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + ok_job + "," + ok_job + "]}").find("distinct job names"), std::string::npos);
  EXPECT_NE(job_mix_error_of(head + ok_job + R"(, {"name": "k", "gpus": "4-7", "collectives": [{"op": "all_reduce", "bytes": "1M"}]}]})")
                .find("also in job j"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "trays": "0-1", "mesh_shape": [3, 3], "mesh_dim_names": ["dp", "tp"],
                              "collectives": [{"op": "all_reduce", "bytes": "1M"}]}]})")
                .find("product 9"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "trays": "0-1", "mesh_shape": [2, 4], "mesh_dim_names": ["dp", "tp"],
                              "collectives": [{"op": "all_reduce", "bytes": "1M", "dim": "pp"}]}]})")
                .find("'pp'"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "trays": "0-18", "collectives": [{"op": "all_reduce", "bytes": "1M"}]}]})")
                .find("trays"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "trays": "0", "collectives": [{"op": "all_reduce", "bytes": 0}]}]})").find("bytes"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "partition": "x", "collectives": [{"op": "all_reduce", "bytes": "1M"}]}]})")
                .find("'x'"),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(R"({"schema_version": 1, "system": "gb200-nvl72", "failures": ["tray"], "jobs": [)" + ok_job + "]}")
                .find("--fail"),
            std::string::npos);
  // "inner" (the CLI's --inner) only with racksim's hierarchical, and only ring, nvls or auto.
  EXPECT_EQ(job_mix_error_of(head + R"({"name": "j", "trays": "0-1", "collectives": [{"op": "all_reduce", "bytes": "1M",
                              "algo": "hierarchical", "inner": "ring"}]}]})"),
            "");
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "trays": "0-1", "collectives": [{"op": "all_reduce", "bytes": "1M",
                              "algo": "ring", "inner": "ring"}]}]})")
                .find("unless \"algo\" is \"hierarchical\""),
            std::string::npos);
  EXPECT_NE(job_mix_error_of(head + R"({"name": "j", "trays": "0-1", "collectives": [{"op": "all_reduce", "bytes": "1M",
                              "algo": "hierarchical", "inner": "tree"}]}]})")
                .find("\"tree\"; allowed: one of auto, ring, nvls"),
            std::string::npos);
}

// "inner" reaches the run: ring inside the domain is the closed form's 2 (d - 1) steps of S / d on the ports,
// where the default (NVLS) is NCCL's NVLS rate; the two differ.
TEST(JobMix, InnerAlgorithmOfAHierarchicalCollectiveReachesTheRun) {
  auto mix = [](const std::string& inner) {
    return R"({"schema_version": 1, "system": "gb200-nvl72", "calibration": "none", "jobs": [{"name": "j", "trays": "0-1",
      "collectives": [{"op": "all_reduce", "bytes": "1G", "algo": "hierarchical")" +
           (inner.empty() ? std::string() : R"(, "inner": ")" + inner + "\"") + "}]}]}";
  };
  const double nvls = run_job_mix(job_mix_from_json_text(mix(""), "mix")).jobs.front().alone_s;
  EXPECT_EQ(nvls, run_job_mix(job_mix_from_json_text(mix("nvls"), "mix")).jobs.front().alone_s);
  const double ring = run_job_mix(job_mix_from_json_text(mix("ring"), "mix")).jobs.front().alone_s;
  const double S = 1ull << 30, d = 8, port_Bps = 18 * 50e9;  // 8 GPUs, 18 NVLink 5 links of 50 GB/s each way
  EXPECT_GT(ring, 2 * (d - 1) * (S / d) / port_Bps);
  EXPECT_NEAR(ring, 2 * (d - 1) * (S / d) / port_Bps, 0.05 * ring);
  EXPECT_NE(ring, nvls);
}

TEST(JobMix, MeshGroupsFollowTorchRowMajorOrder) {
  JobSpec j;
  j.name = "j";
  for (int i = 0; i < 8; ++i) j.gpus.push_back(100 + i);
  j.mesh_shape = {2, 4};
  j.mesh_dim_names = {"dp", "tp"};
  EXPECT_EQ(mesh_groups(j, "tp"), (std::vector<std::vector<int>>{{100, 101, 102, 103}, {104, 105, 106, 107}}));
  EXPECT_EQ(mesh_groups(j, "dp"), (std::vector<std::vector<int>>{{100, 104}, {101, 105}, {102, 106}, {103, 107}}));
  EXPECT_EQ(mesh_groups(j, "").size(), 1u);
  EXPECT_THROW(mesh_groups(j, "pp"), InputError);
}

// Issue 13's done-when: tray 7 reboots while a 72-GPU job (rack 1) and two 32-GPU jobs (trays 0-7 and 8-15
// of rack 0) run. The job on trays 0-7 dies; the others continue at their speed: they share only the
// non-blocking NVLink switch crossbar. The same in both partition modes (a tray reboot loses GPUs, not links).
TEST(JobMix, OperatorScenarioTray7InBothPartitionModes) {
  for (PartitionMode mode : {PartitionMode::full_bandwidth, PartitionMode::adaptive_bandwidth}) {
    JobMix mix = job_mix_from_json_text(kOperator, "operator");
    mix.mode = mode;
    const MixResult r = run_job_mix(mix);
    ASSERT_EQ(r.jobs.size(), 3u);
    for (const auto& j : r.jobs) EXPECT_EQ(j.slowdown, 0.0) << j.name;  // nothing shared but the crossbar
    EXPECT_TRUE(r.shared_links.empty());
    ASSERT_EQ(r.shared_fabrics.size(), 1u);
    EXPECT_EQ(r.shared_fabrics[0].jobs, (std::vector<std::string>{"a32", "b32"}));
    ASSERT_TRUE(r.failure);
    const JobFate& a = fate(r, "a32");
    EXPECT_EQ(a.fate, "dies") << to_string(mode);
    EXPECT_NE(a.reason.find("compute tray 7"), std::string::npos) << a.reason;
    // Trays 16-17 are free in the same NVLink domain: move one into partition a (NMX-M update), restart.
    const RecoveryTimes rt;
    EXPECT_DOUBLE_EQ(a.back_after_s, rt.repartition.seconds + rt.restart.seconds);
    for (const char* name : {"b32", "big72"}) {
      const JobFate& f = fate(r, name);
      EXPECT_EQ(f.fate, "continues") << name;
      EXPECT_EQ(f.slowdown_after, 0.0) << name;
      EXPECT_EQ(f.back_after_s, 0.0) << name;
    }
    EXPECT_EQ(r.failure->partitions[0].name, "a");
    EXPECT_EQ(r.failure->partitions[0].state, "DEGRADED");
    EXPECT_EQ(r.failure->partitions[1].state, "HEALTHY");
  }
}

// A switch tray of rack 0 lost: full-bandwidth mode stops both partitions of the rack (every job there
// dies), adaptive-bandwidth mode keeps them at 16 of 18 NVLinks; the job in rack 1 never notices.
TEST(JobMix, SwitchTrayLossDependsOnThePartitionMode) {
  JobMix mix = job_mix_from_json_text(kOperator, "operator");
  mix.failures = {"switch-tray:0.0"};
  const MixResult full = run_job_mix(mix);
  EXPECT_EQ(fate(full, "a32").fate, "dies");
  EXPECT_EQ(fate(full, "b32").fate, "dies");
  EXPECT_EQ(fate(full, "big72").fate, "continues");
  EXPECT_EQ(full.failure->partitions[1].state, "UNHEALTHY");
  mix.mode = PartitionMode::adaptive_bandwidth;
  const MixResult adaptive = run_job_mix(mix);
  const JobFate& b = fate(adaptive, "b32");
  EXPECT_EQ(b.fate, "continues");
  EXPECT_GT(b.slowdown_after, 0.05);
  EXPECT_LT(b.slowdown_after, 18.0 / 16 - 1 + 1e-9);  // at most the lost bandwidth
  EXPECT_EQ(adaptive.failure->partitions[1].state, "BANDWIDTH");
  EXPECT_EQ(fate(adaptive, "big72").slowdown_after, 0.0);
}

// Two jobs pairing GPU i of rack 0 with GPU i of rack 1 (a ring all-reduce of 2 ranks each, same rails) on a
// 2:1 oversubscribed fabric: alone, each pair runs at its 50 GB/s NIC; together, 16 pairs per rail share
// a leaf uplink of 18 x 50 / 2 = 450 GB/s, so each gets 450 / 16 GB/s.
TEST(JobMix, JobsSharingOversubscribedUplinksSlowEachOtherAsTheClosedFormSays) {
  const char* text = R"({"schema_version": 1, "system": "gb200-nvl72", "racks": 2, "oversubscription": 2,
    "partitions": "x0=trays:0-7;y0=trays:8-15;x1=trays:18-25;y1=trays:26-33", "calibration": "none",
    "jobs": [
      {"name": "x", "trays": "0-7,18-25", "mesh_shape": [2, 32], "mesh_dim_names": ["dp", "tp"],
       "collectives": [{"op": "all_reduce", "bytes": "1G", "algo": "ring", "dim": "dp"}]},
      {"name": "y", "trays": "8-15,26-33", "mesh_shape": [2, 32], "mesh_dim_names": ["dp", "tp"],
       "collectives": [{"op": "all_reduce", "bytes": "1G", "algo": "ring", "dim": "dp"}]}]})";
  const MixResult r = run_job_mix(job_mix_from_json_text(text, "mix"));
  const double S = 1ull << 30;
  const double half = S / 2;  // a ring of 2: two steps of S / 2 each way
  const double alone_bw = 50e9, shared_bw = 18 * 50e9 / 2 / 16;
  for (const auto& j : r.jobs) {
    // Latency (NCCL's ring launch and two network steps, tens of us) is the only difference from the
    // bandwidth terms.
    EXPECT_NEAR(j.alone_s, 2 * half / alone_bw, 50e-6) << j.name;
    EXPECT_NEAR(j.together_s, 2 * half / shared_bw, 50e-6) << j.name;
    EXPECT_NEAR(j.slowdown, alone_bw / shared_bw - 1, 0.01) << j.name;
  }
  ASSERT_EQ(r.shared_links.size(), 8u);  // both racks' leaf uplinks of the 4 rails
  for (const auto& l : r.shared_links) {
    EXPECT_EQ(l.kind, "ib");
    EXPECT_NEAR(l.max_utilization, 1.0, 1e-9);
  }
}

// A NIC dies under a job that crosses racks: it dies, restarts at once through a neighbour's NIC (PXN) and
// runs slower; it is not an error.
TEST(JobMix, NicFailureRestartsThroughPxnSlower) {
  const char* text = R"({"schema_version": 1, "system": "gb200-nvl72", "racks": 2, "calibration": "none",
    "failures": ["nic:0"],
    "jobs": [{"name": "dp", "gpus": "0-7,72-79", "mesh_shape": [2, 8], "mesh_dim_names": ["dp", "tp"],
              "collectives": [{"op": "all_reduce", "bytes": "256M", "algo": "ring", "dim": "dp"}]}]})";
  const MixResult r = run_job_mix(job_mix_from_json_text(text, "mix"));
  const JobFate& f = r.failure->jobs.front();
  EXPECT_EQ(f.fate, "restarts");
  EXPECT_NE(f.reason.find("PXN"), std::string::npos);
  EXPECT_GT(f.slowdown_after, 0.5);  // GPU 0 and GPU 1 now share NIC 1: that pair runs at half speed
  EXPECT_EQ(f.back_after_s, RecoveryTimes{}.restart.seconds);
}

TEST(JobMix, SameInputsGiveByteIdenticalJson) {
  const JobMix mix = job_mix_from_json_text(kOperator, "operator");
  EXPECT_EQ(mix_result_to_json_text(run_job_mix(mix)), mix_result_to_json_text(run_job_mix(mix)));
}

}  // namespace
}  // namespace racksim

namespace racksim {
namespace {

// A job given as a planner training step: the planner's layout gives the mesh, the compute runs as a pure
// delay of (planner step - its DP traffic), then the DP collectives run on the engine over the "dp" groups.
TEST(JobMix, PlannerStepJobsRunComputeThenTheirDataParallelTraffic) {
  const char* text = R"({"schema_version": 1, "system": "gb200-nvl72", "calibration": "none",
    "jobs": [{"name": "s", "trays": "0-3", "step": {"model": "llama-3.1-8b", "global_batch": 64, "seq_len": 4096}}]})";
  const MixResult r = run_job_mix(job_mix_from_json_text(text, "mix"));
  const JobResult& j = r.jobs.front();
  ASSERT_TRUE(j.step);
  EXPECT_GT(j.step->planner_step_s, 0);
  EXPECT_NEAR(j.step->compute_s, std::max(0.0, j.step->planner_step_s - j.step->dp_total_s), 1e-12);
  ASSERT_FALSE(j.collectives.empty());
  EXPECT_EQ(j.collectives.front().algorithm, "delay");
  EXPECT_NEAR(j.collectives.front().alone_s, j.step->compute_s, 1e-9 * j.step->compute_s);
  double sum = 0;
  for (const auto& c : j.collectives) sum += c.alone_s;
  EXPECT_NEAR(j.alone_s, sum, 1e-9 * sum);
  EXPECT_THROW(job_mix_from_json_text(R"({"schema_version": 1, "system": "gb200-nvl72", "jobs": [{"name": "s",
    "trays": "0", "step": {"model": "m", "global_batch": 1, "seq_len": 1},
    "collectives": [{"op": "all_reduce", "bytes": "1M"}]}]})", "mix"), InputError);  // not both
}

}  // namespace
}  // namespace racksim
