// NVLink partitions: the spec forms, NVIDIA's rules (one domain per partition, a GPU in at most one),
// and that routes follow: GPUs of different partitions of one rack talk through their NICs.
#include <gtest/gtest.h>

#include "../collectives/collective_test_support.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/nvlink_partitions.hpp"
#include "sim/topo/routes.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

TEST(Partitions, PresetsTileOneDomain) {
  const auto g = test::shipped("gb200-nvl72", 1);
  EXPECT_EQ(partition_presets(g), (std::vector<std::string>{"1x18", "2x9", "3x6", "6x3", "9x2", "18x1"}));
  EXPECT_EQ(partition_presets(test::shipped("hgx-h100", 1)), (std::vector<std::string>{"1x1"}));
  EXPECT_TRUE(partition_presets(test::shipped("rtx4090-pcie", 1)).empty());
}

TEST(Partitions, NxTIsPerDomainFromItsFirstTray) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const auto p = parse_partitions("2x9", g);
  ASSERT_EQ(p.partitions.size(), 4u);
  EXPECT_EQ(p.partitions[0].name, "d0.p0");
  EXPECT_EQ(p.partitions[0].trays.front(), 0);
  EXPECT_EQ(p.partitions[0].trays.back(), 8);
  EXPECT_EQ(p.partitions[2].trays.front(), 18);  // rack 1's first tray
  EXPECT_EQ(p.partitions[3].gpus.size(), 36u);
  EXPECT_EQ(p.partitions[3].fabric, 1);
  const auto three = parse_partitions("3x1", test::shipped("gb200-nvl72", 1));
  ASSERT_EQ(three.partitions.size(), 3u);
  EXPECT_EQ(three.partitions[2].gpus, (std::vector<int>{8, 9, 10, 11}));
}

TEST(Partitions, ExplicitTraysAndGpus) {
  const auto g = test::shipped("gb200-nvl72", 1);
  const auto p = parse_partitions("a=trays:0-7;b=trays:8-15;c=gpus:64-65,70", g);
  ASSERT_EQ(p.partitions.size(), 3u);
  EXPECT_EQ(p.partitions[0].gpus.size(), 32u);
  EXPECT_EQ(p.partitions[2].gpus, (std::vector<int>{64, 65, 70}));
  EXPECT_EQ(p.partitions[2].trays, (std::vector<int>{16, 17}));
}

TEST(Partitions, BadSpecsAreInputErrors) {
  const auto g = test::shipped("gb200-nvl72", 2);
  for (const char* bad : {"", "x", "2x", "0x9", "2x10", "19x1", "a=trays:0-7;a=trays:8", "a=trays:0-18,20",  // 18 = rack 1
                          "a=trays:0-7;b=trays:7", "a=gpus:144", "a=racks:0", "a b=trays:0", "=trays:0", "a=trays:3-1",
                          "a=trays:", "a=trays:-1"}) {
    EXPECT_THROW(parse_partitions(bad, g), InputError) << bad;
  }
  EXPECT_THROW(parse_partitions("default", test::shipped("rtx4090-pcie", 1)), InputError);
}

TEST(Partitions, ApplyingThemRelabelsGpuDomainsAndKeepsTheFabric) {
  auto g = test::shipped("gb200-nvl72", 1);
  g.apply_partitions(parse_partitions("a=trays:0-7;b=trays:8-15", g));
  EXPECT_EQ(g.nvlink_domain_count(), 2);
  EXPECT_EQ(g.fabric_count(), 1);
  EXPECT_EQ(g.gpus_per_domain(), 32);
  EXPECT_EQ(g.vertices()[g.gpu_vertex(0)].domain, 0);
  EXPECT_EQ(g.vertices()[g.gpu_vertex(32)].domain, 1);
  EXPECT_EQ(g.vertices()[g.gpu_vertex(64)].domain, -1);  // trays 16-17: in no partition, no NVLink
  EXPECT_EQ(g.vertices()[g.gpu_vertex(64)].fabric, 0);
  EXPECT_EQ(g.summary().nvlink_domains, 2);
  // Back to the shipped configuration.
  g.apply_partitions(parse_partitions("default", g));
  EXPECT_EQ(g.nvlink_domain_count(), 1);
  EXPECT_EQ(g.vertices()[g.gpu_vertex(64)].domain, 0);
}

TEST(Partitions, RoutesBetweenPartitionsOfOneRackLeaveThroughTheNics) {
  auto g = test::shipped("gb200-nvl72", 1);
  const Route before = find_route(g, g.gpu_vertex(0), g.gpu_vertex(4));
  EXPECT_EQ(before.hops.size(), 2u);  // the switch plane
  g.apply_partitions(parse_partitions("18x1", g));
  const Route after = find_route(g, g.gpu_vertex(0), g.gpu_vertex(4));  // same rail (local GPU 0)
  // GPU -C2C-> Grace -PCIe-> NIC -> rail leaf -> NIC -PCIe-> Grace -C2C-> GPU (GB200's NICs hang off Grace).
  ASSERT_EQ(after.hops.size(), 6u);
  EXPECT_EQ(after.hops[0].kind, LinkKind::c2c);
  EXPECT_EQ(after.hops[2].kind, LinkKind::nic);
  EXPECT_EQ(after.hops[2].to_name, "r0.leaf.rail0");
  EXPECT_NEAR(after.bottleneck_Bps, 50e9, 1);  // ConnectX-7, 400 Gb/s
  const Route inside = find_route(g, g.gpu_vertex(0), g.gpu_vertex(3));  // one tray = one partition
  EXPECT_EQ(inside.hops.size(), 2u);
}

}  // namespace
}  // namespace racksim
