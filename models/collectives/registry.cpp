#include "models/collectives/registry.hpp"

#include <cmath>
#include <cstdio>

#include "models/analytic/auto_select.hpp"
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/algorithms.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

const std::vector<AlgorithmInfo>& algorithm_table() {
  static const std::vector<AlgorithmInfo> table = {
      {CollectiveOp::all_reduce, "ring", "ring reduce-scatter then all-gather, 2(n-1) steps of S/n", &build_all_reduce_ring},
      {CollectiveOp::all_reduce, "nvls", "NVLink SHARP: the switch reduces and multicasts, one round trip, pipelined",
       &build_all_reduce_nvls},
      {CollectiveOp::all_reduce, "tree", "NCCL double binary tree, half the data per tree, pipelined reduce up and broadcast down",
       &build_all_reduce_tree},
      {CollectiveOp::all_reduce, "hierarchical",
       "reduce-scatter in each NVLink domain, all-reduce of S/d slices across domains over NICs, all-gather in the domain",
       &build_all_reduce_hierarchical},
      {CollectiveOp::all_gather, "ring", "ring all-gather, n-1 steps of S/n", &build_all_gather_ring},
      {CollectiveOp::all_gather, "nvls", "each rank's piece goes to the switch once and is multicast to the others",
       &build_all_gather_nvls},
      {CollectiveOp::reduce_scatter, "ring", "ring reduce-scatter, n-1 steps of S/n", &build_reduce_scatter_ring},
      {CollectiveOp::reduce_scatter, "nvls", "the switch reduces every rank's input and returns each rank its share",
       &build_reduce_scatter_nvls},
      {CollectiveOp::all_to_all, "direct", "every rank sends S/n to every other rank at once (expert parallel)",
       &build_all_to_all_direct},
      {CollectiveOp::broadcast, "ring", "pipelined chain from the root", &build_broadcast_ring},
      {CollectiveOp::send_recv, "ring", "rank r sends its buffer to rank r+1 (pipeline-parallel stage to stage)",
       &build_send_recv_ring},
  };
  return table;
}

std::vector<std::string> algorithm_names(CollectiveOp op) {
  std::vector<std::string> names;
  for (const auto& a : algorithm_table())
    if (a.op == op) names.push_back(a.name);
  return names;
}

const AlgorithmInfo& find_algorithm(CollectiveOp op, const std::string& name) {
  for (const auto& a : algorithm_table())
    if (a.op == op && a.name == name) return a;
  std::string allowed = "auto";
  for (const auto& n : algorithm_names(op)) allowed += ", " + n;
  throw InputError("--algo", "", "'" + name + "'", "one of " + allowed + " for " + to_string(op));
}

Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph) {
  return build_schedule(request, graph, Calibration::none());
}

namespace {

std::string sci(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", v);
  return text;
}

// Refuses, before anything is built, a schedule too big for memory or for the engine's time
// (kMaxTransfers, kMaxEngineWork in algorithm_support.hpp), with the estimate and what would fit.
void check_schedule_size(const CollectiveRequest& request, const TopologyGraph& graph) {
  const CostModel m = make_cost_model(graph, request, Calibration::none());
  const bool chunked = request.chunk_bytes > 0;
  const long depth = chunked ? pieces_for_chunk(m.unit_bytes, request.chunk_bytes) : choose_depth(m, request).depth;
  const auto transfers = [&](double d) { return static_cast<double>(m.transfers_fixed) + static_cast<double>(m.transfers_per_item) * d; };
  // Transfers in flight at once: an all-to-all starts all of them together; otherwise each rank has about
  // one piece per pipeline item moving (the pieces of a chunked ring travel together).
  const double ranks = static_cast<double>(request.gpus.size());
  const auto in_flight = [&](double d) { return request.op == CollectiveOp::all_to_all ? transfers(d) : ranks * d; };
  const auto work = [&](double d) { return transfers(d) * in_flight(d); };
  const double t = transfers(static_cast<double>(depth)), w = work(static_cast<double>(depth));
  if (t <= static_cast<double>(kMaxTransfers) && w <= kMaxEngineWork) return;
  const std::string what = m.algorithm + " on " + std::to_string(request.gpus.size()) + " GPUs, " +
                           units::format_bytes(request.bytes) + (chunked ? " in " + std::to_string(depth) + " pieces" : "") +
                           ": " + std::to_string(static_cast<long long>(t)) + " transfers, up to " +
                           std::to_string(static_cast<long long>(in_flight(static_cast<double>(depth)))) +
                           " at once (~" + sci(w) + " engine steps, ~" + sci(w * kEngineSecondsPerWork) + " s)";
  const std::string limits = "at most " + std::to_string(kMaxTransfers) + " transfers and " + sci(kMaxEngineWork) +
                             " engine steps (transfers x transfers in flight, ~" + sci(kMaxEngineWork * kEngineSecondsPerWork) +
                             " s) in one run";
  if (chunked) {
    long fit = 1;  // the deepest pipeline within both limits
    while (fit < depth && transfers(2.0 * fit) <= static_cast<double>(kMaxTransfers) && work(2.0 * fit) <= kMaxEngineWork) fit *= 2;
    const double min_chunk = std::ceil(m.unit_bytes / static_cast<double>(fit));
    throw InputError("--chunk-bytes", "", std::to_string(request.chunk_bytes) + " (" + what + ")",
                     limits + ": a chunk of at least " + std::to_string(static_cast<long long>(min_chunk)) + " bytes, or none");
  }
  throw InputError("--gpus", "", what, limits + "; fewer GPUs, or the analytic model (racksim.analytic)");
}

}  // namespace

Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration) {
  validate_request(request, graph);
  if (request.algorithm == "auto") {
    const AutoChoice choice = select_algorithm(graph, request, calibration);
    CollectiveRequest resolved = request;
    resolved.algorithm = choice.algorithm;
    check_schedule_size(resolved, graph);
    Schedule s = find_algorithm(request.op, choice.algorithm).build(resolved, graph);
    s.note = s.note.empty() ? choice.note : choice.note + "; " + s.note;
    return s;
  }
  const AlgorithmInfo& algorithm = find_algorithm(request.op, request.algorithm);
  check_schedule_size(request, graph);
  return algorithm.build(request, graph);
}

}  // namespace racksim
