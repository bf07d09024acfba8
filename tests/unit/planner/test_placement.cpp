// Rank placement: ranks fill NVLink domains in tray order; Megatron's rank order, the expert folding
// (EP x ETP x EDP = TP x CP x DP inside each pipeline stage), groups and slow-link checks.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/collectives/rank_placement.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/training_fit_engine.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

TopologyGraph graph_of(const std::string& system, int racks) {
  return TopologyGraph(SystemCatalog::shipped().load(system), racks);
}

// A published run's GPUs in NVLink domains: the fewest domains with the same whole trays in each, as NVL72
// jobs run (256 GPUs: 4 racks of 16 trays); 8-GPU nodes hold 8 each.
TEST(PlannerPlacement, PublishedRunsSplitEvenlyOverDomainsOfWholeTrays) {
  using fit_detail::even_domains;
  EXPECT_EQ(even_domains(256, 72, 4), std::make_pair(4, 64));
  EXPECT_EQ(even_domains(128, 72, 4), std::make_pair(2, 64));
  EXPECT_EQ(even_domains(1024, 72, 4), std::make_pair(16, 64));
  EXPECT_EQ(even_domains(576, 72, 4), std::make_pair(8, 72));
  EXPECT_EQ(even_domains(72, 72, 4), std::make_pair(1, 72));
  EXPECT_EQ(even_domains(8, 72, 4), std::make_pair(1, 8));
  EXPECT_EQ(even_domains(96, 72, 4), std::make_pair(2, 48));
  EXPECT_EQ(even_domains(1024, 8, 8), std::make_pair(128, 8));
  EXPECT_EQ(even_domains(8, 8, 8), std::make_pair(1, 8));
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

// Megatron's default order tp-cp-dp-pp: rank = ((pp x DP + dp) x CP + cp) x TP + tp; the expert view
// folds i = (dp x CP + cp) x TP + tp into etp = i mod ETP, ep = i / ETP mod EP, edp = i / (ETP x EP).
TEST(PlannerPlacement, MegatronOrderAndExpertFolding) {
  ParallelLayout l;
  l.tp = 2, l.pp = 2, l.dp = 8, l.ep = 4, l.etp = 2;  // 32 GPUs; EDP = 2 x 8 / (4 x 2) = 2
  EXPECT_EQ(l.edp(), 2);
  EXPECT_EQ(l.gpus(), 32);
  EXPECT_EQ(l.mesh(), "(pp=2, dp=8, tp=2) experts (pp=2, edp=2, ep=4, etp=2)");
  const RankCoords c = RankPlacement::coordinates(l, 27);  // pp 1, dp 5, tp 1
  EXPECT_EQ(c.pp, 1);
  EXPECT_EQ(c.dp, 5);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.etp, 1);  // i = 11: 11 mod 2
  EXPECT_EQ(c.ep, 1);   // 11 / 2 mod 4
  EXPECT_EQ(c.edp, 1);  // 11 / 8
  EXPECT_EQ(RankPlacement::rank_of(l, 1, 5, 0, 1), 27);
  const TopologyGraph g = graph_of("hgx-h100", 4);
  const RankPlacement p(g, 4, 8);
  // EP group of rank 0: the four consecutive TP pairs' first ranks; ETP = the TP pair; EDP strides by 8
  const auto ep = p.all_groups(l, GroupKind::ep);
  EXPECT_EQ(ep.front(), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(p.all_groups(l, GroupKind::etp).front(), (std::vector<int>{0, 1}));
  EXPECT_EQ(p.all_groups(l, GroupKind::edp).front(), (std::vector<int>{0, 8}));
  EXPECT_EQ(p.all_groups(l, GroupKind::dp).front(), (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(p.all_groups(l, GroupKind::pp).front(), (std::vector<int>{0, 16}));
  // 8 GPUs per node: EP (ranks 0-7) stays in node 0, the DP group spans nodes 0 and 1, PP 0 and 2
  EXPECT_FALSE(p.crosses_domain(l, GroupKind::ep));
  EXPECT_FALSE(p.crosses_domain(l, GroupKind::tp));
  EXPECT_TRUE(p.crosses_domain(l, GroupKind::dp));
  EXPECT_TRUE(p.crosses_domain(l, GroupKind::edp));
  // EP = 16 with ETP = 1: each group is a whole stage, 16 ranks over two nodes
  l.ep = 16, l.etp = 1;
  std::string why;
  EXPECT_TRUE(p.crosses_domain(l, GroupKind::ep, &why));
  EXPECT_NE(why.find("ep group of rank 0"), std::string::npos) << why;
  EXPECT_EQ(p.domains_spanned(p.worst_group_ranks(l, GroupKind::ep)), 2);
}

TEST(PlannerPlacement, DpOutermostOrder) {
  // tp-cp-pp-dp: rank = ((dp x PP + pp) x CP + cp) x TP + tp
  ParallelLayout l;
  l.tp = 2, l.pp = 2, l.dp = 2;
  l.order = {MeshDim::dp, MeshDim::pp, MeshDim::cp, MeshDim::tp};
  EXPECT_EQ(RankPlacement::rank_of(l, 1, 0, 0, 0), 2);
  EXPECT_EQ(RankPlacement::rank_of(l, 0, 1, 0, 0), 4);
  const TopologyGraph g = graph_of("hgx-h100", 1);
  const RankPlacement p(g, 1, 8);
  EXPECT_EQ(p.all_groups(l, GroupKind::pp).front(), (std::vector<int>{0, 2}));
  EXPECT_EQ(p.all_groups(l, GroupKind::dp).front(), (std::vector<int>{0, 4}));
}

TEST(PlannerPlacement, WorstGroupIsTheOneStraddlingRacks) {
  // 2 racks of 72, PP = 3 outermost: stage 1 (ranks 48..95) straddles racks 0 and 1
  const TopologyGraph g = graph_of("gb200-nvl72", 2);
  const RankPlacement p(g, 2, 72);
  ParallelLayout l;
  l.pp = 3, l.dp = 48;
  const std::vector<int> w = p.worst_group_ranks(l, GroupKind::dp);
  EXPECT_EQ(w.front(), 48);
  EXPECT_EQ(w.back(), 95);
  EXPECT_EQ(p.domains_spanned(w), 2);
}

// worst_group_ranks and crosses_domain count every rank's coordinates in the mesh's mixed radix
// (RankPlacement::all_coordinates); all_groups divides each rank (coordinates()). On layouts with both
// rank orders, CP, PP, and experts folded with ETP, both must name the same groups: the worst is one of
// all_groups' with the most domains, and a kind crosses a domain exactly when one of its groups does.
TEST(PlannerPlacement, CountedCoordinatesGiveTheGroupsOfDividedOnes) {
  const TopologyGraph g = graph_of("gb200-nvl72", 2);
  const RankPlacement p(g, 2, 64);
  std::vector<ParallelLayout> layouts;
  for (bool pp_outer : {true, false}) {
    ParallelLayout l;
    l.tp = 2, l.cp = 2, l.pp = 4, l.dp = 8, l.ep = 8, l.etp = 2;
    l.order = pp_outer ? std::vector<MeshDim>{MeshDim::pp, MeshDim::dp, MeshDim::cp, MeshDim::tp}
                       : std::vector<MeshDim>{MeshDim::dp, MeshDim::pp, MeshDim::cp, MeshDim::tp};
    layouts.push_back(l);
    l.tp = 4, l.cp = 1, l.pp = 2, l.dp = 16, l.ep = 32, l.etp = 1;
    layouts.push_back(l);
  }
  int checked = 0;
  for (const ParallelLayout& l : layouts) {
    ASSERT_EQ(l.gpus(), 128);
    for (GroupKind kind : {GroupKind::tp, GroupKind::cp, GroupKind::dp, GroupKind::pp, GroupKind::dp_cp, GroupKind::ep,
                           GroupKind::etp, GroupKind::edp}) {
      const std::vector<std::vector<int>> groups = p.all_groups(l, kind);
      int most = 0;
      bool crosses = false;
      for (const auto& grp : groups) {
        most = std::max(most, p.domains_spanned(grp));
        crosses = crosses || p.domains_spanned(grp) > 1;
      }
      const std::vector<int> worst = p.worst_group_ranks(l, kind);
      EXPECT_NE(std::find(groups.begin(), groups.end(), worst), groups.end()) << l.key() << " " << static_cast<int>(kind);
      EXPECT_EQ(p.domains_spanned(worst), most) << l.key() << " " << static_cast<int>(kind);
      EXPECT_EQ(p.crosses_domain(l, kind), crosses) << l.key() << " " << static_cast<int>(kind);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 32);
}

}  // namespace
}  // namespace racksim
