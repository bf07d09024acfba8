// Rank placement: ranks fill NVLink domains in tray order; mesh coordinates, groups and slow-link checks.
#include <gtest/gtest.h>

#include "models/collectives/rank_placement.hpp"
#include "models/planner/placement.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

TopologyGraph graph_of(const std::string& system, int racks) {
  return TopologyGraph(SystemCatalog::shipped().load(system), racks);
}

TEST(PlannerPlacement, FillsDomainsInTrayOrderLikePlaceRanks) {
  const TopologyGraph g = graph_of("gb200-nvl72", 4);
  const RankPlacement p(g, 4, 64);
  EXPECT_EQ(p.gpus(), 256);
  EXPECT_EQ(p.domain_size(), 72);
  // rank 63: rack 0, tray 15, slot 3; rank 64: rack 1, tray 0 (global tray 18), slot 0
  EXPECT_EQ(p.locate(63).rack, 0);
  EXPECT_EQ(p.locate(63).tray_in_rack, 15);
  EXPECT_EQ(p.locate(63).slot, 3);
  EXPECT_EQ(p.locate(64).rack, 1);
  EXPECT_EQ(p.locate(64).tray, 18);
  EXPECT_EQ(p.locate(64).gpu, 72);
  // the engine's placement (models/collectives/rank_placement.hpp) puts the same ranks on the same GPUs
  const std::vector<int> engine = place_ranks(g, 256);
  for (int r = 0; r < 256; ++r) EXPECT_EQ(p.locate(r).gpu, engine[r]) << r;
  EXPECT_THROW(RankPlacement(g, 5, 64), InputError);
  EXPECT_THROW(RankPlacement(g, 4, 73), InputError);
}

TEST(PlannerPlacement, MeshGroupsAndSlowLinks) {
  const TopologyGraph g = graph_of("gb200-nvl72", 4);
  const RankPlacement p(g, 4, 64);
  ParallelLayout l;
  l.dp = 4, l.ep = 64;
  l.order = {MeshDim::pp, MeshDim::cp, MeshDim::dp, MeshDim::ep, MeshDim::tp};  // DeviceMesh (dp, ep)
  EXPECT_EQ(l.mesh(), "(dp=4, ep=64)");
  EXPECT_EQ(RankPlacement::stride(l, MeshDim::ep), 1);
  EXPECT_EQ(RankPlacement::stride(l, MeshDim::dp), 64);
  EXPECT_EQ(RankPlacement::group_ranks(l, 5, {MeshDim::dp}), (std::vector<int>{5, 69, 133, 197}));
  EXPECT_EQ(RankPlacement::coordinate(l, 133, MeshDim::dp), 2);
  EXPECT_FALSE(p.crosses_domain(l, MeshDim::ep));
  EXPECT_TRUE(p.crosses_domain(l, MeshDim::dp));
  EXPECT_EQ(p.domains_spanned(p.worst_group_ranks(l, {MeshDim::dp})), 4);
  // DeviceMesh (ep, dp): EP strides over the racks, every EP group spans all four
  l.order = {MeshDim::pp, MeshDim::cp, MeshDim::ep, MeshDim::dp, MeshDim::tp};
  std::string why;
  EXPECT_TRUE(p.crosses_domain(l, MeshDim::ep, &why));
  EXPECT_NE(why.find("ep group of rank 0"), std::string::npos) << why;
  EXPECT_FALSE(p.crosses_domain(l, MeshDim::dp));
}

TEST(PlannerPlacement, WorstGroupIsTheOneStraddlingRacks) {
  // 2 racks of 72, PP = 3 outermost: stage 1 (ranks 48..95) straddles racks 0 and 1
  const TopologyGraph g = graph_of("gb200-nvl72", 2);
  const RankPlacement p(g, 2, 72);
  ParallelLayout l;
  l.pp = 3, l.dp = 48;
  l.order = {MeshDim::pp, MeshDim::dp, MeshDim::ep, MeshDim::cp, MeshDim::tp};
  const std::vector<int> w = p.worst_group_ranks(l, {MeshDim::dp});
  EXPECT_EQ(w.front(), 48);
  EXPECT_EQ(w.back(), 95);
  EXPECT_EQ(p.domains_spanned(w), 2);
}

}  // namespace
}  // namespace racksim
