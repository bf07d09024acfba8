#include "models/collectives/cost_patterns.hpp"

#include "models/collectives/building_blocks.hpp"

#include <algorithm>
#include <cmath>

namespace racksim {

double ceil_div(double total, double parts) { return parts > 0 ? std::ceil(total / parts) : 0; }

void ring_model(CostBuilder& b, bool reduce_scatter, bool all_gather) {
  const double S = static_cast<double>(b.request.bytes);
  const int n = b.n;
  // One ring per NIC rail across nodes (nccl_ring_orders), each with 1 / rings of every segment.
  const auto orders = n > 1 ? nccl_ring_orders(b.request, b.graph) : std::vector<std::vector<int>>{b.all_ranks()};
  const int rings = static_cast<int>(orders.size());
  const double seg = ceil_div(S, static_cast<double>(n) * rings);
  std::vector<const FlowCoster::Path*> flows;
  for (const auto& order : orders) {
    const auto f = b.ring_flows(order);
    flows.insert(flows.end(), f.begin(), f.end());
  }
  // Latency: a ring's steps are pipelined along the ring, so a step that crosses a NIC does not hold every
  // other step back. NCCL counts (steps - inter) x intra + inter x net, with inter = nodes - 1 per phase
  // (tuning.cc:376-377): every step here pays the intra-node alpha and each phase the nodes - 1 crossings'
  // difference once. (A lockstep model that charges every step the NIC's alpha is 2x off at 64 MiB
  // across two racks.)
  double alpha_intra = -1, alpha_net = -1;
  for (const auto* f : flows) (f->crosses_nic ? alpha_net : alpha_intra) = std::max(f->crosses_nic ? alpha_net : alpha_intra, f->alpha_s);
  const int nodes = n > 1 ? static_cast<int>(nccl_nodes(b.request, b.graph).size()) : 1;
  auto add_phase = [&](const char* name) {
    StageModel* s = b.add(name, flows, seg, n - 1);
    if (s == nullptr || alpha_net < 0 || alpha_intra < 0 || alpha_net <= alpha_intra) return;
    for (auto& line : s->cost.lines) line.first = std::min(line.first, alpha_intra);
    s->once_s = (nodes - 1) * (alpha_net - alpha_intra);
  };
  if (reduce_scatter) add_phase("reduce-scatter");
  if (all_gather) add_phase("all-gather");
  b.m.pipelined = false;
  b.m.unit_bytes = seg;
  b.m.tasks_per_item = b.m.transfers_per_item = static_cast<long>((reduce_scatter + all_gather) * (n - 1)) * n * rings;
  if (rings > 1) b.m.detail = std::to_string(rings) + " rings, one per NIC rail";
}

void chain_model(CostBuilder& b, const std::string& phase, bool towards_root) {
  const double S = static_cast<double>(b.request.bytes);
  const int n = b.n;
  const auto chains = nccl_chain_orders(b.request, b.graph);
  const int rings = static_cast<int>(chains.size());
  const int first = towards_root ? 1 : 0;
  for (int h = first; h < first + n - 1; ++h) {
    std::vector<const FlowCoster::Path*> hop;
    for (const auto& chain : chains) hop.push_back(&b.fc.gpu_to_gpu(b.v(chain[h]), b.v(chain[(h + 1) % n])));
    b.add(phase, hop, S / rings);
  }
  b.m.unit_bytes = S / rings;
  b.m.transfer_budget = kChainTransferBudget;
  b.m.tasks_per_item = b.m.transfers_per_item = static_cast<long>(n - 1) * rings;
  if (rings > 1) b.m.detail = std::to_string(rings) + " chains, one per NIC rail";
}

void nvls_model(CostBuilder& b) {
  const int domain = nvls_domain(b.request, b.graph);
  const double S = static_cast<double>(b.request.bytes);
  const int n = b.n;
  std::vector<const FlowCoster::Path*> up, down;
  for (int r = 0; r < n && n > 1; ++r) {
    up.push_back(&b.fc.gpu_to_switch(b.v(r)));
    down.push_back(&b.fc.switch_to_gpu(b.v(r)));
  }
  switch (b.request.op) {
    case CollectiveOp::all_reduce:
      // The multicast of chunk c goes once the plane has every GPU's chunk c (no stream order).
      b.add("switch-reduce", up, S);
      b.add_switch("switch-multicast", down, S, domain, 1.0, false);
      b.m.unit_bytes = S;
      b.m.tasks_per_item = n + 1;
      b.m.transfers_per_item = 2L * n;
      break;
    case CollectiveOp::reduce_scatter:
      b.add("switch-reduce", up, S);
      b.add_switch("switch-scatter", down, ceil_div(S, n), domain, n, true);  // n shares reduced per piece
      b.m.unit_bytes = S;
      b.m.tasks_per_item = b.m.transfers_per_item = 2L * n;
      break;
    default: {  // all_gather: each owner's piece goes up once and is multicast to the n-1 others
      std::vector<const FlowCoster::Path*> fan;
      for (int owner = 0; owner < n && n > 1; ++owner)
        for (int r = 0; r < n; ++r)
          if (r != owner) fan.push_back(&b.fc.switch_to_gpu(b.v(r)));
      b.add("to-switch", up, ceil_div(S, n));
      b.add("switch-multicast", fan, ceil_div(S, n));
      b.m.unit_bytes = ceil_div(S, n);
      b.m.tasks_per_item = 2L * n;
      b.m.transfers_per_item = static_cast<long>(n) * n;
    }
  }
}

void tree_model(CostBuilder& b) {
  const double S = static_cast<double>(b.request.bytes);
  // One NCCL tree per NIC rail (nccl_trees), each with 1 / rails of the buffer, halves on its two trees.
  const std::vector<DoubleTree> trees = nccl_trees(b.request, b.graph);
  const int rails = static_cast<int>(trees.size());
  b.add_trees("reduce-up", "broadcast-down", b.all_ranks(), trees, S / 2 / rails);
  b.m.unit_bytes = S / 2 / rails;
  b.m.tasks_per_item = b.m.transfers_per_item = 4L * (b.n - 1) * rails;
  b.m.detail = "tree height " + std::to_string(trees.front().height) + (rails > 1 ? ", " + std::to_string(rails) + " trees, one per NIC rail" : "");
}

ItemCounts hierarchical_counts(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DomainGroups g = domain_groups(request, graph);
  const std::string inner = hierarchical_inner(request, graph);
  const std::string outer = hierarchical_outer(request);
  const int d = g.per_domain, D = g.domains;
  ItemCounts c;
  if (static_cast<int>(request.gpus.size()) == 1) return c;  // nothing moves (finish)
  if (d > 1 && inner == "ring") {  // reduce-scatter and all-gather inside, rings of d
    c.tasks += 2L * D * d * (d - 1);
    c.transfers += 2L * D * d * (d - 1);
  } else if (d > 1) {
    c.tasks += (D > 1 ? 4L : 2L) * D * d;
    c.transfers += D > 1 ? (3L + d - 1) * D * d : (1L + d) * d;
  }
  if (D > 1 && outer == "ring") {
    c.tasks += 2L * d * D * (D - 1);
    c.transfers += 2L * d * D * (D - 1);
  } else if (D > 1 && outer == "sharp") {  // each position up to its rail's fabric, one multicast back
    c.tasks += static_cast<long>(d) * (D + 1);
    c.transfers += 2L * d * D;
  } else if (D > 1) {
    c.tasks += 4L * d * (D - 1);
    c.transfers += 4L * d * (D - 1);
  }
  c.transfers = std::max(1L, c.transfers);
  return c;
}

void hierarchical_model(CostBuilder& b) {
  const double S = static_cast<double>(b.request.bytes);
  const DomainGroups g = domain_groups(b.request, b.graph);
  const std::string inner = hierarchical_inner(b.request, b.graph);
  const std::string outer = hierarchical_outer(b.request);
  const int d = g.per_domain, D = g.domains;
  const double slice = S / d;
  b.m.transfer_budget = kHierarchicalTransferBudget;
  // Ring inside: blocks only on request (the reduce-scatter and all-gather share both port directions;
  // overlapping them gains little, and fair sharing makes this model pessimistic by up to ~8 %).
  b.m.pipeline_on_request = inner == "ring";
  b.m.unit_bytes = S;
  b.m.detail = "inner " + inner + ", outer " + outer + ", " + std::to_string(D) + " domains x " + std::to_string(d);

  std::vector<const FlowCoster::Path*> inner_ring, up, down, fan, outer_flows;
  for (const auto& group : g.ranks) {
    const auto f = b.ring_flows(group);
    inner_ring.insert(inner_ring.end(), f.begin(), f.end());
    for (int l = 0; l < d && d > 1 && inner == "nvls"; ++l) {
      up.push_back(&b.fc.gpu_to_switch(b.v(group[l])));
      down.push_back(&b.fc.switch_to_gpu(b.v(group[l])));
      for (int r = 0; r < d; ++r)
        if (r != l) fan.push_back(&b.fc.switch_to_gpu(b.v(group[r])));
    }
  }
  const DoubleTree tree = double_binary_tree(D);
  std::vector<std::vector<int>> positions;
  for (int l = 0; l < d && D > 1; ++l) {
    std::vector<int> members;
    for (int k = 0; k < D; ++k) members.push_back(g.ranks[k][l]);
    if (outer == "ring") {
      const auto f = b.ring_flows(members);
      outer_flows.insert(outer_flows.end(), f.begin(), f.end());
    }
    positions.push_back(std::move(members));
  }
  auto next = [&] { return static_cast<int>(b.m.stages.size()); };
  int rs0 = -1, rs1 = -1;
  if (d > 1 && inner == "ring") {
    rs0 = next();
    b.add("intra-reduce-scatter", inner_ring, slice, d - 1);
  } else if (d > 1) {
    rs0 = next();
    b.add("intra-reduce-scatter", up, S);
    if (D > 1) {
      rs1 = next();
      // Every domain's plane reduces its d slices (D planes work in parallel).
      b.add_switch("intra-reduce-scatter", down, slice, g.domain_ids[0], d, true);
    }
  }
  const int outer_first = next();
  if (D > 1 && outer == "ring") {
    b.add("inter-all-reduce", outer_flows, slice / D, 2 * (D - 1));
  } else if (D > 1 && outer == "sharp") {
    fabric_round_trip(b, collnet_groups(b.request, b.graph, "hierarchical --outer sharp"), slice, "inter-all-reduce",
                      "inter-all-reduce");
  } else if (D > 1) {
    b.add_tree("inter-all-reduce", "inter-all-reduce", positions, tree, slice / 2);
  }
  if (d > 1 && inner == "ring") {
    b.m.shared = {{rs0, next()}};
    b.add("intra-all-gather", inner_ring, slice, d - 1);
  } else if (d > 1 && D > 1) {
    const int outer_last = next() - 1;
    b.m.nvls_blocks = {rs0, rs1, outer_first, outer_last, next(), next() + 1};
    b.add("intra-all-gather", up, slice);
    b.add("intra-all-gather", fan, slice);
  } else if (d > 1) {  // one domain: the plane reduces and multicasts each slice to every GPU
    std::vector<const FlowCoster::Path*> all;
    for (int l = 0; l < d; ++l) all.insert(all.end(), down.begin(), down.end());
    b.add_switch("intra-all-gather", all, slice, g.domain_ids[0], d, true);
  }
  const ItemCounts counts = hierarchical_counts(b.request, b.graph);
  b.m.tasks_per_item = counts.tasks;
  b.m.transfers_per_item = counts.transfers;
}


void fabric_round_trip(CostBuilder& b, const CollnetGroups& c, double bytes, const std::string& up_phase,
                       const std::string& down_phase) {
  const DomainGroups& g = c.groups;
  std::vector<const FlowCoster::Path*> up, down;
  std::map<int, int> positions_per_rail;  // in one domain
  for (int r : g.ranks.front()) ++positions_per_rail[c.rail[r]];
  for (const auto& group : g.ranks)
    for (int r : group) {
      up.push_back(&b.fc.gpu_to_fabric(b.v(r)));
      down.push_back(&b.fc.fabric_to_gpu(b.v(r)));
    }
  b.add(up_phase, up, bytes);
  if (StageModel* s = b.add(down_phase, down, bytes)) {
    double most = 0;
    for (const auto& [rail, count] : positions_per_rail) most = std::max(most, count * b.fc.fabric_reduce_s_per_byte(rail));
    s->reduce_s_per_byte = most;
    s->serial = false;
  }
}

CostModel finish(CostBuilder& b) {
  if (b.n == 1) b.m.tasks_per_item = b.m.tasks_fixed = b.m.transfers_per_item = b.m.transfers_fixed = 0;  // nothing moves
  return b.m;
}

}  // namespace racksim
