#include "models/analytic/cost_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/exec_terms.hpp"
#include "models/collectives/registry.hpp"
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
    // A stage whose items go as soon as their data is there (a fabric plane's multicast, --outer sharp)
    // overlaps its reduction with the previous item's transfer: its link occupancy or its reduction bounds
    // the cycle, whichever is longer, not their sum.
    const StageModel& st = m.stages[static_cast<std::size_t>(i)];
    const double item = st.bytes / k;
    c3 = std::max(c3, st.serial ? t(i) : std::max(st.occupancy(item), st.repeats * item * st.reduce_s_per_byte));
  }
  if (h.outer_first >= 0 && h.outer_last > h.outer_first)
    for (const auto& s : m.steady) c3 = std::max(c3, s.time(s.bytes / k));
  if (h.outer_first >= 0 && h.outer_last == h.outer_first) c3 = t3;
  const auto& up = m.stages[h.ag_up];
  const double y = up.occupancy(up.bytes / k);  // the all-gather up transfer's bytes at port speed
  // U[j]: block j's reduce-scatter up ends. The ups follow one another on the GPU's port, and block b's
  // all-gather up transfer (at O_b) shares that port with whichever up is in flight then: block b + 1's
  // when the outer phase is short, a later block's when it is long (8 H100s per node: the outer phase
  // outlasts one up, so it meets block b + 2's). That up ends y later, and so do the ones after it: the
  // port carries both transfers' bytes every block, as in the engine. Only an all-gather up that starts
  // after the last reduce-scatter up has the port to itself. O_b only grows with b, so the up it meets
  // does too (`running`), and each is found once: O(k).
  std::vector<double> U(static_cast<std::size_t>(k));
  U[0] = t1;
  int laid = 0;     // U[0..laid] are laid out (an extra y lands only on the one in flight, the last laid)
  int running = 1;  // the first up that may still be in flight at the next O
  Timeline tl;
  double O_prev = 0, G_prev = 0;
  for (int b = 0; b < k; ++b) {
    const double R = U[b] + t2;
    const double O = std::max(R + t3, O_prev + c3);
    // The up in flight at O: the first j > b whose up ends after O (the one before it ended by O).
    running = std::max(running, b + 1);
    for (; running < k; ++running) {
      for (; laid < running; ++laid) U[laid + 1] = U[laid] + t1;
      if (U[running] > O) break;
    }
    const bool overlap = running < k;
    if (overlap) U[running] += y;  // the ups after it are laid out from it
    const double A = O + t4 + (overlap ? y : 0);
    const double R_next = b + 1 < k ? U[b + 1] + t2 : 0;
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
    O_prev = O;
    G_prev = G;
  }
  return tl;
}

// t: the n stage times at depth k.
double cycle_of(const CostModel& m, const double* t, std::size_t n, int k) {
  double cycle = 0;
  for (std::size_t i = 0; i < n; ++i)
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
  // The stage times on the stack for the usual handful of stages: the planner prices collectives hundreds
  // of thousands of times a search, and a vector here was a tenth of its allocations (heaptrack).
  std::array<double, 16> few;
  std::vector<double> many;
  double* t = few.data();
  if (stages.size() > few.size()) {
    many.resize(stages.size());
    t = many.data();
  }
  for (std::size_t i = 0; i < stages.size(); ++i) {
    t[i] = stage_time(i, k);
    sum += t[i];
  }
  return launch_s + sum + (k - 1) * cycle_of(*this, t, stages.size(), k);
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
  const double cycle = cycle_of(*this, t.data(), t.size(), k);
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

CostModel make_cost_model(const TopologyGraph& graph, const CollectiveRequest& request,
                          const Calibration& calibration) {
  // Each algorithm's cost model lives in its own file next to its schedule builder (registry.cpp); the
  // NCCL protocol terms and the calibration of the GPU architecture come from exec_terms.
  const ExecTerms e = exec_terms(graph, request, calibration);
  CostModel m = find_algorithm(request.op, request.algorithm).cost(graph, request, calibration, e.flow);
  m.terms = e.flow;
  m.warnings = e.warnings;
  return m;
}

DepthChoice choose_depth(const CostModel& m, const CollectiveRequest& request) {
  DepthChoice c;
  const long per_item = std::max(1L, m.transfers_per_item);
  const long unit_cap = static_cast<long>(std::max(1.0, std::min(std::floor(m.unit_bytes), 1e9)));
  if (request.chunk_bytes > 0) {
    const long wanted = pieces_for_chunk(m.unit_bytes, request.chunk_bytes);
    const long cap = std::max(1L, (kMaxTransfers - m.transfers_fixed) / per_item);
    c.depth = static_cast<int>(std::min({wanted, cap, unit_cap}));
    c.model_depth = static_cast<int>(std::min({wanted, unit_cap, static_cast<long>(std::numeric_limits<int>::max())}));
    c.note = "chunk_bytes " + std::to_string(request.chunk_bytes) + ": depth " + std::to_string(c.depth);
    if (wanted > cap) c.nccl_chunks = wanted;
    if (wanted > cap) c.note += " (lowered from " + std::to_string(wanted) + " to stay within " +
                                std::to_string(kMaxTransfers) + " transfers; the closed form prices depth " +
                                std::to_string(c.model_depth) + ")";
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
  c.model_depth = c.depth;
  c.note = "pipeline depth " + std::to_string(c.depth) + " (fastest nominal depth up to " + std::to_string(cap) + ")";
  return c;
}

const NominalPlan& nominal_plan(const TopologyGraph& graph, const CollectiveRequest& request, NominalPlan& own) {
  NominalPlan::Memo* memo = NominalPlan::Scope::active();
  if (memo != nullptr && memo->plan && memo->graph == &graph && memo->request == request) return *memo->plan;
  // Nominal links, no protocol terms: the depth depends on the traffic's shape and on --chunk-bytes
  // (NCCL's chunk once the request is resolved), not on the calibration.
  own.model = find_algorithm(request.op, request.algorithm).cost(graph, request, Calibration::none(), FlowTerms{});
  own.depth = choose_depth(own.model, request);
  own.depth.tasks = own.model.tasks(own.depth.depth);
  if (memo == nullptr) return own;
  memo->graph = &graph;
  memo->request = request;
  memo->plan = std::make_unique<NominalPlan>(std::move(own));
  return *memo->plan;
}

DepthChoice planned_depth(const TopologyGraph& graph, const CollectiveRequest& request) {
  NominalPlan own;
  return nominal_plan(graph, request, own).depth;
}

}  // namespace racksim
