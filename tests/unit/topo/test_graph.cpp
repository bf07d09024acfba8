#include <gtest/gtest.h>

#include "sim/topo/routes.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

TopologyGraph load(const std::string& id, int racks) {
  return TopologyGraph(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(id), racks);
}

// The seed's rack totals (course module 5, sections 1-2): 72 GPUs, 36 Grace, 18 trays, 9 switch trays,
// 18 chips, 18 links per GPU, 130 TB/s NVLink, 13.4 TB HBM, 17 TB LPDDR5X.
TEST(TopologyGraph, Gb200Nvl72RackTotalsMatchTheSeed) {
  const auto s = load("gb200-nvl72", 1).summary();
  EXPECT_EQ(s.gpus, 72);
  EXPECT_EQ(s.cpus, 36);
  EXPECT_EQ(s.trays, 18);
  EXPECT_EQ(s.switch_trays, 9);
  EXPECT_EQ(s.switch_chips, 18);
  EXPECT_EQ(s.gpu_nvlinks, 1296);
  EXPECT_EQ(s.nics, 72);
  EXPECT_NEAR(s.nvlink_aggregate_TBps, 129.6, 1e-9);
  // HBM as the driver reports it (189471 MiB per GPU), not NVIDIA's "186 GB" read as 10^9 B (issue 16).
  EXPECT_NEAR(s.hbm_total_TB, 72 * 189471.0 * 1048576 / 1e12, 1e-9);
  EXPECT_NEAR(s.lpddr_total_TB, 36 * 0.480, 1e-9);
}

TEST(TopologyGraph, RacksMultiplyEverything) {
  const auto s = load("gb200-nvl72", 4).summary();
  EXPECT_EQ(s.gpus, 288);
  EXPECT_EQ(s.nvlink_domains, 4);
  EXPECT_EQ(s.gpus_per_domain, 72);
  EXPECT_EQ(s.switch_chips, 72);
}

TEST(Routes, InsideTheDomainTwoStripedHopsAt900GBps) {
  const auto g = load("gb200-nvl72", 1);
  const Route r = find_route(g, g.gpu_vertex(0), g.gpu_vertex(71));
  ASSERT_EQ(r.hops.size(), 2u);
  EXPECT_EQ(r.hops[0].links, 18);
  EXPECT_NEAR(r.bottleneck_Bps, 900e9, 1);
  // NCCL's NVLink hop latency (tuning.cc, ring LL): 0.2 + 0.07 + 0.2 us.
  EXPECT_NEAR(r.latency_s, 0.47e-6, 1e-12);
}

TEST(Routes, AcrossRacksThroughTheNicRail) {
  const auto g = load("gb200-nvl72", 2);
  const Route r = find_route(g, g.gpu_vertex(1), g.gpu_vertex(72 + 5));  // rail 1 -> rail 1
  // gpu -> nic (pcie) -> leaf (nic port) -> spine -> leaf -> nic -> gpu
  ASSERT_EQ(r.hops.size(), 6u);
  EXPECT_EQ(r.hops[0].kind, LinkKind::pcie);
  EXPECT_EQ(r.hops[1].kind, LinkKind::nic);
  EXPECT_NEAR(r.bottleneck_Bps, 50e9, 1);
  const Route cross_rail = find_route(g, g.gpu_vertex(0), g.gpu_vertex(72 + 1));
  EXPECT_EQ(cross_rail.hops.size(), 8u);  // through the core
}

TEST(Routes, GpuToItsGraceOverC2C) {
  const auto g = load("gb200-nvl72", 1);
  const Route r = find_route(g, g.gpu_vertex(1), g.cpu_of_gpu(g.gpu_vertex(1)));
  ASSERT_EQ(r.hops.size(), 1u);
  EXPECT_EQ(r.hops[0].kind, LinkKind::c2c);
  const Route far = find_route(g, g.gpu_vertex(0), g.find_vertex("r0.t0.cpu1"));
  ASSERT_EQ(far.hops.size(), 2u);
  EXPECT_EQ(far.hops[1].kind, LinkKind::cpu_cpu);
}

}  // namespace
}  // namespace racksim
