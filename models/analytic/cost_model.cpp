#include "models/analytic/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "models/collectives/algorithm_support.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

double StageModel::occupancy(double item_bytes) const {
  double per_byte = reduce_s_per_byte;
  for (const auto& line : cost.lines) per_byte = std::max(per_byte, line.second);
  return repeats * item_bytes * per_byte;
}

double CostModel::stage_time(std::size_t i, int depth) const {
  const StageModel& s = stages[i];
  const int k = pipelined ? std::max(depth, 1) : 1;
  return s.time(s.bytes / k);
}


namespace {

// Block-by-block timeline of hierarchical NVLS (the schedule of all_reduce/hierarchical.cpp):
//   U_b  reduce-scatter up ends: U_0 = t1, U_b = U_{b-1} + t1 (+ y when block b-1's all-gather up
//        transfer, y = its bytes / B, shares the port with it);
//   R_b  the plane's scatter ends: U_b + t2;  O_b  outer all-reduce ends: max(R_b + t3, O_{b-1} + c3)
//        (c3: how soon a block's outer phase may follow the previous one's);
//   A_b  all-gather up ends: O_b + t4 (+ y when it overlaps the next reduce-scatter up);
//   G_b  multicast ends: max(A_b, R_{b+1}, G_{b-1}) + t5 (it waits for the next block's scatter, and
//        multicasts into the same ports finish one after another).
struct Timeline {
  double end = 0, rs_end = 0, outer_start = 0, outer_end = 0, ag_start = 0;
};
Timeline hierarchical_timeline(const CostModel& m, int k) {
  const auto& h = m.nvls_blocks;
  auto t = [&](int i) { return i < 0 ? 0.0 : m.stage_time(static_cast<std::size_t>(i), k); };
  const double t1 = t(h.rs_up), t2 = t(h.rs_down), t4 = t(h.ag_up), t5 = t(h.ag_down);
  // The outer phase of one block, and how soon the next block's may follow: a ring's members send one
  // block's steps after the other's (c3 = t3); a tree's levels pipeline (c3 = its slowest level, or all
  // its levels' flows on the NICs at once).
  double t3 = 0, c3 = 0;
  for (int i = h.outer_first; i >= 0 && i <= h.outer_last; ++i) {
    t3 += t(i);
    c3 = std::max(c3, t(i));
  }
  if (h.outer_first >= 0 && h.outer_last > h.outer_first)
    for (const auto& s : m.steady) c3 = std::max(c3, s.time(s.bytes / k));
  if (h.outer_first >= 0 && h.outer_last == h.outer_first) c3 = t3;
  const auto& up = m.stages[h.ag_up];
  const double y = up.occupancy(up.bytes / k);  // the all-gather up transfer's bytes at port speed
  Timeline tl;
  double U = t1, O_prev = 0, G_prev = 0;
  for (int b = 0; b < k; ++b) {
    const double R = U + t2;
    const double O = std::max(R + t3, O_prev + c3);
    const bool overlap = b + 1 < k && O < U + t1;  // the up transfer meets the next reduce-scatter up
    const double A = O + t4 + (overlap ? y : 0);
    const double U_next = U + t1 + (overlap ? y : 0);
    const double R_next = b + 1 < k ? U_next + t2 : 0;
    const double G = std::max({A, R_next, G_prev}) + t5;
    if (b == 0) {
      tl.outer_start = R;
      tl.ag_start = O;
    }
    if (b + 1 == k) {
      tl.rs_end = R;
      tl.outer_end = O;
      tl.end = G;
    }
    U = U_next;
    O_prev = O;
    G_prev = G;
  }
  return tl;
}

double cycle_of(const CostModel& m, const std::vector<double>& t, int k) {
  double cycle = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    cycle = std::max(cycle, m.stages[i].serial ? t[i] : m.stages[i].occupancy(m.stages[i].bytes / k));
  for (const auto& group : m.shared) {  // stages on the same ports: their link occupancy adds up
    double g = 0;
    for (int i : group) g += m.stages[i].occupancy(m.stages[i].bytes / k);
    cycle = std::max(cycle, g);
  }
  for (const auto& s : m.steady) cycle = std::max(cycle, s.time(s.bytes / k));
  return cycle;
}

}  // namespace

double CostModel::time(int depth) const {
  const int k = pipelined ? std::max(depth, 1) : 1;
  if (nvls_blocks.ag_down >= 0) return launch_s + hierarchical_timeline(*this, k).end;
  double sum = 0;
  std::vector<double> t(stages.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    t[i] = stage_time(i, k);
    sum += t[i];
  }
  return launch_s + sum + (k - 1) * cycle_of(*this, t, k);
}

std::vector<PhaseTime> CostModel::phases(int depth) const {
  const int k = pipelined ? std::max(depth, 1) : 1;
  if (nvls_blocks.ag_down >= 0) {
    const Timeline tl = hierarchical_timeline(*this, k);
    std::vector<PhaseTime> out{{stages[nvls_blocks.rs_up].phase, tl.rs_end}};
    if (nvls_blocks.outer_first >= 0) out.push_back({stages[nvls_blocks.outer_first].phase, tl.outer_end - tl.outer_start});
    out.push_back({stages[nvls_blocks.ag_down].phase, tl.end - tl.ag_start});
    return out;
  }
  std::vector<double> t(stages.size());
  for (std::size_t i = 0; i < stages.size(); ++i) t[i] = stage_time(i, k);
  const double cycle = cycle_of(*this, t, k);
  // Phase span: from its first stage's first item start to its last stage's last item end.
  std::vector<PhaseTime> out;
  double start = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (out.empty() || out.back().name != stages[i].phase) {
      out.push_back({stages[i].phase, 0});
      out.back().time_s = -start;  // completed below
    }
    start += t[i];
    const bool last_of_phase = i + 1 == stages.size() || stages[i + 1].phase != stages[i].phase;
    if (last_of_phase) out.back().time_s += start + (k - 1) * cycle;
  }
  return out;
}

namespace {

struct Builder {
  const TopologyGraph& graph;
  const CollectiveRequest& request;
  FlowCoster fc;
  CostModel m;
  int n;

  Builder(const TopologyGraph& g, const CollectiveRequest& r, const Calibration& c, const std::string& key)
      : graph(g), request(r), fc(g, c, key, static_cast<double>(r.bytes)), n(static_cast<int>(r.gpus.size())) {
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
  std::vector<int> all_ranks() const {
    std::vector<int> r(n);
    for (int i = 0; i < n; ++i) r[i] = i;
    return r;
  }
};

double ceil_div(double total, double parts) { return parts > 0 ? std::ceil(total / parts) : 0; }

void ring_model(Builder& b, bool reduce_scatter, bool all_gather) {
  const double S = static_cast<double>(b.request.bytes);
  const int n = b.n;
  const double seg = ceil_div(S, n);
  const auto flows = b.ring_flows(b.all_ranks());
  if (reduce_scatter) b.add("reduce-scatter", flows, seg, n - 1);
  if (all_gather) b.add("all-gather", flows, seg, n - 1);
  b.m.pipelined = false;
  b.m.unit_bytes = seg;
  b.m.tasks_per_item = b.m.transfers_per_item = static_cast<long>((reduce_scatter + all_gather) * (n - 1)) * n;
}

void nvls_model(Builder& b) {
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

void tree_model(Builder& b) {
  const double S = static_cast<double>(b.request.bytes);
  const DoubleTree t = double_binary_tree(b.n);
  b.add_tree("reduce-up", "broadcast-down", {b.all_ranks()}, t, S / 2);
  b.m.unit_bytes = S / 2;
  b.m.tasks_per_item = b.m.transfers_per_item = 4L * (b.n - 1);
  b.m.detail = "tree height " + std::to_string(t.height);
}

void hierarchical_model(Builder& b) {
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
  long tasks = 0, transfers = 0;
  int rs0 = -1, rs1 = -1;
  if (d > 1 && inner == "ring") {
    rs0 = next();
    b.add("intra-reduce-scatter", inner_ring, slice, d - 1);
    tasks += 2L * D * d * (d - 1);
    transfers += 2L * D * d * (d - 1);
  } else if (d > 1) {
    rs0 = next();
    b.add("intra-reduce-scatter", up, S);
    if (D > 1) {
      rs1 = next();
      // Every domain's plane reduces its d slices (D planes work in parallel).
      b.add_switch("intra-reduce-scatter", down, slice, g.domain_ids[0], d, true);
    }
    tasks += (D > 1 ? 4L : 2L) * D * d;
    transfers += D > 1 ? (3L + d - 1) * D * d : (1L + d) * d;
  }
  const int outer_first = next();
  if (D > 1 && outer == "ring") {
    b.add("inter-all-reduce", outer_flows, slice / D, 2 * (D - 1));
    tasks += 2L * d * D * (D - 1);
    transfers += 2L * d * D * (D - 1);
  } else if (D > 1) {
    b.add_tree("inter-all-reduce", "inter-all-reduce", positions, tree, slice / 2);
    tasks += 4L * d * (D - 1);
    transfers += 4L * d * (D - 1);
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
  b.m.tasks_per_item = tasks;
  b.m.transfers_per_item = std::max(1L, transfers);
}

}  // namespace

CostModel make_cost_model(const TopologyGraph& graph, const CollectiveRequest& request,
                          const Calibration& calibration) {
  const std::string key = std::string(to_string(request.op)) + "/" + request.algorithm;
  Builder b(graph, request, calibration, key);
  const double S = static_cast<double>(request.bytes);
  const int n = b.n;
  switch (request.op) {
    case CollectiveOp::all_reduce:
      if (request.algorithm == "ring") ring_model(b, true, true);
      else if (request.algorithm == "nvls") nvls_model(b);
      else if (request.algorithm == "tree") tree_model(b);
      else if (request.algorithm == "hierarchical") hierarchical_model(b);
      break;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      if (request.algorithm == "ring") ring_model(b, request.op == CollectiveOp::reduce_scatter,
                                                 request.op == CollectiveOp::all_gather);
      else if (request.algorithm == "nvls") nvls_model(b);
      break;
    case CollectiveOp::all_to_all: {
      std::vector<const FlowCoster::Path*> flows;
      for (int s = 0; s < n; ++s)
        for (int d = 0; d < n; ++d)
          if (s != d) flows.push_back(&b.fc.gpu_to_gpu(b.v(s), b.v(d)));
      b.add("all-to-all", flows, ceil_div(S, n));
      b.m.pipelined = false;
      b.m.unit_bytes = ceil_div(S, n);
      b.m.tasks_fixed = b.m.transfers_fixed = static_cast<long>(n) * (n - 1);
      break;
    }
    case CollectiveOp::broadcast: {
      for (int h = 0; h + 1 < n; ++h) {
        const int src = (request.root + h) % n, dst = (request.root + h + 1) % n;
        b.add("broadcast", {&b.fc.gpu_to_gpu(b.v(src), b.v(dst))}, S);
      }
      b.m.unit_bytes = S;
      b.m.tasks_per_item = b.m.transfers_per_item = n - 1;
      break;
    }
    case CollectiveOp::send_recv: {
      std::vector<const FlowCoster::Path*> flows;
      for (int r = 0; r < n; ++r) flows.push_back(&b.fc.gpu_to_gpu(b.v(r), b.v((r + 1) % n)));
      b.add("send-recv", flows, S);
      b.m.unit_bytes = S;
      b.m.tasks_per_item = b.m.transfers_per_item = n;
      break;
    }
  }
  if (n == 1) b.m.tasks_per_item = b.m.tasks_fixed = b.m.transfers_per_item = b.m.transfers_fixed = 0;  // nothing moves
  return b.m;
}

DepthChoice choose_depth(const CostModel& m, const CollectiveRequest& request) {
  DepthChoice c;
  const long per_item = std::max(1L, m.transfers_per_item);
  const long unit_cap = static_cast<long>(std::max(1.0, std::min(std::floor(m.unit_bytes), 1e9)));
  if (request.chunk_bytes > 0) {
    const long wanted = pieces_for_chunk(m.unit_bytes, request.chunk_bytes);
    const long cap = std::max(1L, (kMaxTransfers - m.transfers_fixed) / per_item);
    c.depth = static_cast<int>(std::min({wanted, cap, unit_cap}));
    c.note = "chunk_bytes " + std::to_string(request.chunk_bytes) + ": depth " + std::to_string(c.depth);
    if (wanted > cap) c.note += " (lowered from " + std::to_string(wanted) + " to stay within " +
                                std::to_string(kMaxTransfers) + " transfers)";
    return c;
  }
  if (!m.pipelined || m.stages.empty()) return c;
  if (m.pipeline_on_request) {
    c.note = "one block: phases in sequence (--chunk-bytes pipelines them)";
    return c;
  }
  const long cap = std::max(1L, std::min((m.transfer_budget - m.transfers_fixed) / per_item, unit_cap));
  double best = m.time(1);
  for (long k = 2; k <= cap; ++k) {
    const double t = m.time(static_cast<int>(k));
    if (t < best * (1 - 1e-12)) {
      best = t;
      c.depth = static_cast<int>(k);
    }
  }
  c.note = "pipeline depth " + std::to_string(c.depth) + " (fastest nominal depth up to " + std::to_string(cap) + ")";
  return c;
}

DepthChoice planned_depth(const TopologyGraph& graph, const CollectiveRequest& request) {
  const CostModel m = make_cost_model(graph, request, Calibration::none());
  DepthChoice c = choose_depth(m, request);
  c.tasks = m.tasks(c.depth);
  return c;
}

}  // namespace racksim
