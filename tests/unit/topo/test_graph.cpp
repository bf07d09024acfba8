#include <gtest/gtest.h>

#include "../collectives/collective_test_support.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/topo/routes.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

// The seed's rack totals (course module 5, sections 1-2): 72 GPUs, 36 Grace, 18 trays, 9 switch trays,
// 18 chips, 18 links per GPU, 130 TB/s NVLink, 13.4 TB HBM, 17 TB LPDDR5X.
TEST(TopologyGraph, Gb200Nvl72RackTotalsMatchTheSeed) {
  const auto s = test::shipped("gb200-nvl72", 1).summary();
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
  const auto s = test::shipped("gb200-nvl72", 4).summary();
  EXPECT_EQ(s.gpus, 288);
  EXPECT_EQ(s.nvlink_domains, 4);
  EXPECT_EQ(s.gpus_per_domain, 72);
  EXPECT_EQ(s.switch_chips, 72);
}

// The rack limit's estimate (issue 14) counts vertices and edges from the spec as the constructor makes
// them, for every shipped system: NVL72, NVL36x2's rack-scope trunks, HGX nodes, single hosts.
TEST(TopologyGraph, EstimateCountsWhatTheConstructorBuilds) {
  const SystemCatalog catalog(RACKSIM_TOPOLOGY_DIR);
  for (const std::string id : {"gb200-nvl72", "gb300-nvl72", "gb200-nvl36x2", "hgx-h100", "hgx-b200", "gh200",
                               "dgx-spark", "rtx4090-pcie", "h200-pcie"}) {
    const TopologySpec spec = catalog.load(id);
    const int step = spec.nvlink_domain ? spec.nvlink_domain->racks : 1;
    for (int racks : {step, 2 * step, 6 * step}) {
      if (racks > spec.rack.max_racks) continue;
      const TopologyGraph g(spec, racks);
      const GraphEstimate e = estimate_graph(spec, racks);
      EXPECT_EQ(e.vertices, static_cast<double>(g.vertices().size())) << id << " x" << racks;
      EXPECT_EQ(e.edges, static_cast<double>(g.edges().size())) << id << " x" << racks;
    }
  }
}

// Beyond the memory budget --racks is refused before anything is built, naming the estimate; the
// single hosts keep their physical cap of one rack; gb200-nvl72 runs past its old max_racks of 64.
TEST(TopologyGraph, RacksBeyondTheMemoryEstimateAreRefusedAtOnce) {
  const TopologySpec spec = SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72");
  EXPECT_FALSE(spec.rack.capped());
  const int fit = max_racks_in_budget(spec);
  EXPECT_GT(fit, 64);
  EXPECT_LE(estimate_graph(spec, fit).bytes + kProcessBaseBytes, static_cast<double>(memory_budget().bytes));
  EXPECT_GT(estimate_graph(spec, fit + 1).bytes + kProcessBaseBytes, static_cast<double>(memory_budget().bytes));
  try {
    TopologyGraph(spec, 1000000);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--racks"), std::string::npos) << m;
    EXPECT_NE(m.find("MB to build"), std::string::npos) << m;
    EXPECT_NE(m.find("at most " + std::to_string(fit) + " racks of gb200-nvl72"), std::string::npos) << m;
  }
  EXPECT_EQ(TopologyGraph(spec, 80).gpu_count(), 80 * 72);
  EXPECT_EQ(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("dgx-spark").rack.max_racks, 1);
}

TEST(Routes, InsideTheDomainTwoStripedHopsAt900GBps) {
  const auto g = test::shipped("gb200-nvl72", 1);
  const Route r = find_route(g, g.gpu_vertex(0), g.gpu_vertex(71));
  ASSERT_EQ(r.hops.size(), 2u);
  EXPECT_EQ(r.hops[0].links, 18);
  EXPECT_NEAR(r.bottleneck_Bps, 900e9, 1);
  // NCCL's NVLink hop latency (tuning.cc, ring LL): 0.2 + 0.07 + 0.2 us.
  EXPECT_NEAR(r.latency_s, 0.47e-6, 1e-12);
}

// GB200: the ConnectX-7s hang off Grace's PCIe, so GPUDirect RDMA crosses the superchip's NVLink-C2C first
// (NCCL's path type P2C, src/graph/paths.cc:181): gpu -> grace (c2c) -> nic (pcie) -> leaf (nic port) ->
// spine -> leaf -> nic -> grace -> gpu.
TEST(Routes, Gb200AcrossRacksThroughC2cGraceAndTheNicRail) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const Route r = find_route(g, g.gpu_vertex(1), g.gpu_vertex(72 + 5));  // rail 1 -> rail 1
  ASSERT_EQ(r.hops.size(), 8u);
  EXPECT_EQ(r.hops[0].kind, LinkKind::c2c);
  EXPECT_EQ(r.hops[1].kind, LinkKind::pcie);
  EXPECT_EQ(r.hops[2].kind, LinkKind::nic);
  EXPECT_EQ(r.hops[6].kind, LinkKind::pcie);
  EXPECT_EQ(r.hops[7].kind, LinkKind::c2c);
  EXPECT_EQ(r.hops[0].to_name, "r0.t0.cpu0");
  EXPECT_NEAR(r.bottleneck_Bps, 50e9, 1);
  const Route cross_rail = find_route(g, g.gpu_vertex(0), g.gpu_vertex(72 + 1));
  EXPECT_EQ(cross_rail.hops.size(), 10u);  // through the core
}

// GB300's ConnectX-8 sits on its GPU's PCIe Gen6 x16: no C2C hop (NVIDIA's Grace Blackwell CX8 GPUDirect
// RDMA guide: "the Blackwell GPU and the CX8 NIC, connected by a PCIe Gen6 x16 link").
TEST(Routes, Gb300AcrossRacksStraightToTheNic) {
  const auto g = test::shipped("gb300-nvl72", 2);
  const Route r = find_route(g, g.gpu_vertex(1), g.gpu_vertex(72 + 5));
  ASSERT_EQ(r.hops.size(), 6u);
  EXPECT_EQ(r.hops[0].kind, LinkKind::pcie);
  EXPECT_EQ(r.hops[1].kind, LinkKind::nic);
  for (const auto& h : r.hops) EXPECT_NE(h.kind, LinkKind::c2c);
}

// CollNet's flows go from a GPU to its rail's spine and back (models/analytic/flow_cost.cpp, fabric_path). The
// route is built directly (routes.cpp, gpu_fabric_route); it must be the lowest-latency one the graph search
// found before: own NIC (through Grace on GB200), its leaf, the spine; the way back mirrors it.
TEST(Routes, GpuToItsRailsSpineAndBack) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const int gpu = g.gpu_vertex(72 + 5);
  const int spine = g.spine_of_rail(g.vertices()[g.nic_of_gpu(gpu)].local);
  ASSERT_GE(spine, 0);
  const Route up = find_route(g, gpu, spine);
  ASSERT_EQ(up.hops.size(), 4u);
  EXPECT_EQ(up.hops[0].kind, LinkKind::c2c);
  EXPECT_EQ(up.hops[1].kind, LinkKind::pcie);
  EXPECT_EQ(up.hops[2].kind, LinkKind::nic);
  EXPECT_EQ(up.hops[3].to, spine);
  const Route down = find_route(g, spine, gpu);
  ASSERT_EQ(down.hops.size(), 4u);
  EXPECT_EQ(down.hops[0].from, spine);
  EXPECT_EQ(down.hops[3].kind, LinkKind::c2c);
  EXPECT_EQ(down.hops[3].to, gpu);
  EXPECT_NEAR(down.latency_s, up.latency_s - g.vertices()[spine].switch_latency_s + g.vertices()[gpu].switch_latency_s, 1e-15);
  EXPECT_NEAR(up.bottleneck_Bps, 50e9, 1);  // ConnectX-7, 400 Gb/s

  const auto h = test::shipped("hgx-h100", 2);
  const int hgpu = h.gpu_vertex(8 + 3);
  const int hspine = h.spine_of_rail(h.vertices()[h.nic_of_gpu(hgpu)].local);
  const Route hup = find_route(h, hgpu, hspine);
  ASSERT_EQ(hup.hops.size(), 3u);  // GPU -> NIC over PCIe, NIC -> leaf, leaf -> spine
  EXPECT_EQ(hup.hops[0].kind, LinkKind::pcie);
  EXPECT_EQ(hup.hops[1].kind, LinkKind::nic);
  EXPECT_EQ(find_route(h, hspine, hgpu).hops.size(), 3u);
}

TEST(Routes, GpuToItsGraceOverC2C) {
  const auto g = test::shipped("gb200-nvl72", 1);
  const Route r = find_route(g, g.gpu_vertex(1), g.cpu_of_gpu(g.gpu_vertex(1)));
  ASSERT_EQ(r.hops.size(), 1u);
  EXPECT_EQ(r.hops[0].kind, LinkKind::c2c);
  const Route far = find_route(g, g.gpu_vertex(0), g.find_vertex("r0.t0.cpu1"));
  ASSERT_EQ(far.hops.size(), 2u);
  EXPECT_EQ(far.hops[1].kind, LinkKind::cpu_cpu);
}

}  // namespace
}  // namespace racksim
