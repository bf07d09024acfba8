// Collectives follow NVLink partitions (issue 13's done-when): 12 GPUs in three 4-GPU partitions are
// bound by their NICs, the same 12 GPUs in one partition by NVLink; both against closed forms at vendor
// peaks (calibration none).
#include <gtest/gtest.h>

#include "engine_test_support.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/topo/nvlink_partitions.hpp"

namespace racksim {
namespace {

using test::gpu_range;

constexpr std::uint64_t kOneGiB = 1ull << 30;

RunResult run(const TopologyGraph& g, const std::string& algo, const std::vector<int>& gpus, std::uint64_t bytes) {
  CollectiveRequest r;
  r.op = CollectiveOp::all_reduce;
  r.algorithm = algo;
  r.gpus = gpus;
  r.bytes = bytes;
  return simulate_collective(g, r, Calibration::none());
}

double nic_max_utilization(const RunResult& r) {
  double u = 0;
  for (const auto& l : r.links)
    if (l.kind == "nic") u = std::max(u, l.max_utilization);
  return u;
}

TEST(PartitionedCollectives, TwelveGpusInOnePartitionAreNvlinkBound) {
  auto g = test::load_graph("gb200-nvl72", 1);
  g.apply_partitions(parse_partitions("a=trays:0-2", g));
  const auto nv = test::nvlink_numbers(g);
  const RunResult ring = run(g, "ring", gpu_range(0, 12), kOneGiB);
  // Ring over the switch plane: 2(n-1) steps of S/n at the 900 GB/s port (seed section 7), plus NCCL's
  // ring latency (its launch and 22 Simple-protocol step latencies of a few us: ~73 us, 3.3 % at 1 GiB).
  EXPECT_GE(ring.time_s, test::ring_all_reduce_time(12, kOneGiB, nv.alpha, nv.B));
  EXPECT_NEAR(ring.time_s, test::ring_all_reduce_time(12, kOneGiB, nv.alpha, nv.B), 0.04 * ring.time_s);
  EXPECT_EQ(nic_max_utilization(ring), 0.0);
  // NVLS: about S each way through the switch, so at least S / B; NCCL runs it at its NVLS bandwidth
  // (heads x bwIntra x nvlsEfficiency, tuning.cc:285-300), about half the ports' line rate.
  const RunResult nvls = run(g, "nvls", gpu_range(0, 12), kOneGiB);
  EXPECT_GE(nvls.time_s, kOneGiB / nv.B);
  EXPECT_LE(nvls.time_s, 2.2 * kOneGiB / nv.B);
  EXPECT_LT(nvls.time_s, ring.time_s * 1.2);
}

TEST(PartitionedCollectives, TwelveGpusInThreeFourGpuPartitionsAreNicBound) {
  auto g = test::load_graph("gb200-nvl72", 1);
  g.apply_partitions(parse_partitions("3x1", g));
  EXPECT_THROW(run(g, "nvls", gpu_range(0, 12), kOneGiB), InputError);  // NVLS cannot span cliques
  // NCCL itself runs rings or trees across the three partitions (its own pick, never racksim's
  // hierarchical); the NIC bound below is hierarchical's.
  EXPECT_NE(run(g, "auto", gpu_range(0, 12), 64 << 20).algorithm, "hierarchical");
  const RunResult r = run(g, "hierarchical", gpu_range(0, 12), kOneGiB);
  // Each GPU's S/d slice crosses the D = 3 partitions in a ring over its own 400 Gb/s NIC:
  // 2 (D - 1) / D x (S / d) / B_nic. The rest mostly hides: the NVLS phases inside each 4-GPU partition run at
  // NCCL's NVLS rate there (4 heads: ~266 GB/s of algorithm bandwidth, S / cap ~ 4.0 ms), of which the first
  // block's reduce-scatter and the last one's all-gather do not overlap the NICs (2 of 13 blocks: ~0.62 ms,
  // 9 % of the NIC bound), plus NCCL's latencies, paid once at launch (tens of us).
  const int D = 3, d = 4;
  const double B_nic = test::route_numbers(g, 0, 4).B;
  EXPECT_NEAR(B_nic, 50e9, 1);
  const double nic_bound = 2.0 * (D - 1) / D * (static_cast<double>(kOneGiB) / d) / B_nic;
  EXPECT_GE(r.time_s, nic_bound);
  EXPECT_LE(r.time_s, 1.12 * nic_bound);
  EXPECT_NEAR(nic_max_utilization(r), 1.0, 1e-9);
  // The partitions cost this all-reduce a factor 3 or more against one partition of the same 12 GPUs.
  auto one = test::load_graph("gb200-nvl72", 1);
  one.apply_partitions(parse_partitions("a=trays:0-2", one));
  EXPECT_GT(r.time_s, 3.0 * run(one, "auto", gpu_range(0, 12), kOneGiB).time_s);
}

TEST(PartitionedCollectives, GpusOutsideEveryPartitionHaveNoNvlink) {
  auto g = test::load_graph("gb200-nvl72", 1);
  g.apply_partitions(parse_partitions("a=trays:0-7", g));
  EXPECT_THROW(run(g, "hierarchical", gpu_range(64, 8), 1 << 20), InputError);  // in no NVLink domain
  EXPECT_THROW(run(g, "nvls", gpu_range(64, 4), 1 << 20), InputError);
}

}  // namespace
}  // namespace racksim
