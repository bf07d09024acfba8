#pragma once
// The pieces algorithms' cost models are made of (the analytic twin of building_blocks.hpp): a builder of
// pipeline stages over the real routes (FlowCoster) and the traffic patterns several algorithms share:
// ring reduce-scatter / all-gather steps, NVLS through the switch plane, NCCL's trees, the hierarchical
// composition. Each algorithm's file (models/collectives/<op>/<algorithm>.cpp) calls them from its cost
// function, next to its schedule builder; registry.cpp names both in one row.
#include <string>
#include <vector>

#include "models/analytic/cost_model.hpp"
#include "models/analytic/flow_cost.hpp"
#include "models/collectives/algorithm_support.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

struct CostBuilder {
  const TopologyGraph& graph;
  const CollectiveRequest& request;
  FlowCoster fc;
  CostModel m;
  int n;

  CostBuilder(const TopologyGraph& g, const CollectiveRequest& r, const Calibration& c, const std::string& key,
              const FlowTerms& terms)
      : graph(g), request(r), fc(g, c, terms), n(static_cast<int>(r.gpus.size())) {
    m.algorithm = key;
    m.launch_s = fc.launch_s();
    m.transfer_budget = kDefaultTransferBudget;
  }
  int v(int rank) const { return rank_vertex(request, graph, rank); }
  StageModel* add(const std::string& phase, const std::vector<const FlowCoster::Path*>& flows, double bytes,
                  int repeats = 1) {
    if (flows.empty() || repeats < 1) return nullptr;
    m.stages.push_back({phase, fc.stage(flows), bytes, repeats});
    return &m.stages.back();
  }
  // A switch-plane stage that first reduces `reduce_factor` x the flow bytes at the plane.
  void add_switch(const std::string& phase, const std::vector<const FlowCoster::Path*>& flows, double bytes,
                  int domain, double reduce_factor, bool serial) {
    StageModel* s = add(phase, flows, bytes);
    if (s == nullptr) return;
    s->reduce_s_per_byte = reduce_factor * fc.plane_reduce_s_per_byte(domain);
    s->serial = serial;
  }
  std::vector<const FlowCoster::Path*> ring_flows(const std::vector<int>& members) {
    std::vector<const FlowCoster::Path*> flows;
    const int g = static_cast<int>(members.size());
    if (g < 2) return flows;
    for (int i = 0; i < g; ++i) flows.push_back(&fc.gpu_to_gpu(v(members[i]), v(members[(i + 1) % g])));
    return flows;
  }
  // Double-tree flows of the members at `depth` (up: to their parents; down: from them), both trees.
  std::vector<const FlowCoster::Path*> tree_level(const std::vector<int>& members, const DoubleTree& t, int depth,
                                                  bool up) {
    std::vector<const FlowCoster::Path*> flows;
    for (int tree = 0; tree < 2; ++tree)
      for (int x = 0; x < t.n; ++x) {
        const int p = t.parent[tree][x];
        if (p < 0 || t.depth[tree][x] != depth) continue;
        flows.push_back(up ? &fc.gpu_to_gpu(v(members[x]), v(members[p])) : &fc.gpu_to_gpu(v(members[p]), v(members[x])));
      }
    return flows;
  }
  // A pipelined double-tree all-reduce over each group at once: one stage per level up (deepest first)
  // and down, and the whole tree as the steady state.
  void add_tree(const std::string& up_phase, const std::string& down_phase, const std::vector<std::vector<int>>& groups,
                const DoubleTree& t, double bytes) {
    std::vector<const FlowCoster::Path*> all;
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 1; i <= t.height; ++i) {
        const int depth = pass == 0 ? t.height + 1 - i : i;
        std::vector<const FlowCoster::Path*> flows;
        for (const auto& g : groups) {
          const auto f = tree_level(g, t, depth, pass == 0);
          flows.insert(flows.end(), f.begin(), f.end());
        }
        all.insert(all.end(), flows.begin(), flows.end());
        add(pass == 0 ? up_phase : down_phase, flows, bytes);
      }
    if (!all.empty()) m.steady.push_back({"steady", fc.stage(all), bytes, 1});
  }
  // Several trees over the same members at once (one per NIC rail), all of the same height.
  void add_trees(const std::string& up_phase, const std::string& down_phase, const std::vector<int>& members,
                 const std::vector<DoubleTree>& ts, double bytes) {
    std::vector<const FlowCoster::Path*> all;
    const int height = ts.empty() ? 0 : ts.front().height;
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 1; i <= height; ++i) {
        const int depth = pass == 0 ? height + 1 - i : i;
        std::vector<const FlowCoster::Path*> flows;
        for (const auto& t : ts) {
          const auto f = tree_level(members, t, depth, pass == 0);
          flows.insert(flows.end(), f.begin(), f.end());
        }
        all.insert(all.end(), flows.begin(), flows.end());
        add(pass == 0 ? up_phase : down_phase, flows, bytes);
      }
    if (!all.empty()) m.steady.push_back({"steady", fc.stage(all), bytes, 1});
  }
  std::vector<int> all_ranks() const {
    std::vector<int> r(n);
    for (int i = 0; i < n; ++i) r[i] = i;
    return r;
  }
};


double ceil_div(double total, double parts);
// Ring reduce-scatter and/or all-gather over all ranks (n-1 steps of S/n each).
void ring_model(CostBuilder& b, bool reduce_scatter, bool all_gather);
// NCCL's broadcast / reduce chains (nccl_chain_orders), one stage per hop with every chain's flow at that hop,
// S / chains each; towards_root: the hops from the rank after the root round to the root (chain_transfers).
void chain_model(CostBuilder& b, const std::string& phase, bool towards_root);
// NVLS through the domain's switch plane, for all_reduce, reduce_scatter and all_gather.
void nvls_model(CostBuilder& b);
// NCCL's tree all-reduce: a chain inside each NVLink domain (or node) and a double binary tree across.
void tree_model(CostBuilder& b);
// Reduce-scatter inside each domain, all-reduce of the slices across domains, all-gather inside.
void hierarchical_model(CostBuilder& b);
// Its tasks and transfers per pipeline block (none fixed) from the request's shape alone, without pricing a
// flow: what hierarchical_model sets, and what the size check refuses from before pricing 0.2 M flows
// (models/collectives/registry.cpp).
struct ItemCounts {
  long tasks = 0, transfers = 0;
};
ItemCounts hierarchical_counts(const CollectiveRequest& request, const TopologyGraph& graph);
// CollNet's trip through the network, two stages: every rank of every domain sends `bytes` through its own
// NIC to its rail's fabric plane (`up_phase`), and the plane multicasts the sum back (`down_phase`) after
// reducing it at the summed line rate of the rail's NIC ports (the engine's fabric-plane reduce, once per
// position of a domain on the rail), overlapped with the previous item's multicast.
void fabric_round_trip(CostBuilder& b, const CollnetGroups& c, double bytes, const std::string& up_phase,
                       const std::string& down_phase);
// A cost builder's model, with task counts zeroed when one rank moves nothing.
CostModel finish(CostBuilder& b);

}  // namespace racksim
