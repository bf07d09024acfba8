#include "models/collectives/registry.hpp"

#include "models/analytic/auto_select.hpp"
#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/algorithms.hpp"
#include "sim/core/errors.hpp"
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

Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration) {
  validate_request(request, graph);
  if (request.algorithm == "auto") {
    const AutoChoice choice = select_algorithm(graph, request, calibration);
    CollectiveRequest resolved = request;
    resolved.algorithm = choice.algorithm;
    Schedule s = find_algorithm(request.op, choice.algorithm).build(resolved, graph);
    s.note = s.note.empty() ? choice.note : choice.note + "; " + s.note;
    return s;
  }
  return find_algorithm(request.op, request.algorithm).build(request, graph);
}

}  // namespace racksim
