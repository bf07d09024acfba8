#include "models/collectives/registry.hpp"

#include <cmath>
#include <cstdio>

#include "models/analytic/cost_model.hpp"
#include "models/analytic/flow_cost.hpp"
#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/exec_terms.hpp"
#include "models/collectives/nccl_choice.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

const std::vector<AlgorithmInfo>& algorithm_table() {
  using Op = CollectiveOp;
  static const std::vector<AlgorithmInfo> table = {
      {Op::all_reduce, "ring", "Ring", "ring reduce-scatter then all-gather, 2(n-1) steps of S/n", &build_all_reduce_ring,
       &cost_all_reduce_ring, &quotient_all_reduce_ring},
      {Op::all_reduce, "nvls", "NVLS", "NVLink SHARP: the switch reduces and multicasts, one round trip, pipelined",
       &build_all_reduce_nvls, &cost_all_reduce_nvls},
      {Op::all_reduce, "tree", "Tree",
       "NCCL's tree: a chain inside each NVLink domain, a double binary tree across, pipelined reduce up and broadcast down",
       &build_all_reduce_tree, &cost_all_reduce_tree},
      {Op::all_reduce, "nvls_tree", "NVLSTree",
       "NVLS inside each NVLink domain, NCCL's double binary tree across domains between the head GPUs",
       &build_all_reduce_nvls_tree, &cost_all_reduce_nvls_tree},
      {Op::all_reduce, "collnet_direct", "CollNetDirect",
       "IB SHARP: each GPU of a node heads 1/ppn of the buffer, the network's switches add the nodes' sums (NCCL_COLLNET_ENABLE)",
       &build_all_reduce_collnet_direct, &cost_all_reduce_collnet_direct},
      {Op::all_reduce, "collnet_chain", "CollNetChain",
       "IB SHARP: a chain inside each node up to the channel's head, the network's switches add the nodes' sums (NCCL_COLLNET_ENABLE)",
       &build_all_reduce_collnet_chain, &cost_all_reduce_collnet_chain},
      {Op::all_reduce, "nvls_collnet", "NVLS",
       "NVLS inside each NVLink domain, IB SHARP across: the heads' slices reduced in the network (NCCL's NVLS across nodes, NCCL_COLLNET_ENABLE)",
       &build_all_reduce_nvls_collnet, &cost_all_reduce_nvls_collnet},
      {Op::all_reduce, "hierarchical", "",
       "reduce-scatter in each NVLink domain, all-reduce of S/d slices across domains over NICs, all-gather in the domain",
       &build_all_reduce_hierarchical, &cost_all_reduce_hierarchical},
      {Op::all_gather, "ring", "Ring", "ring all-gather, n-1 steps of S/n", &build_all_gather_ring, &cost_all_gather_ring,
       &quotient_all_gather_ring},
      {Op::all_gather, "nvls", "NVLS", "each rank's piece goes to the switch once and is multicast to the others",
       &build_all_gather_nvls, &cost_all_gather_nvls},
      {Op::reduce_scatter, "ring", "Ring", "ring reduce-scatter, n-1 steps of S/n", &build_reduce_scatter_ring,
       &cost_reduce_scatter_ring, &quotient_reduce_scatter_ring},
      {Op::reduce_scatter, "nvls", "NVLS", "the switch reduces every rank's input and returns each rank its share",
       &build_reduce_scatter_nvls, &cost_reduce_scatter_nvls},
      {Op::all_to_all, "direct", "", "every rank sends S/n to every other rank at once (expert parallel)",
       &build_all_to_all_direct, &cost_all_to_all_direct},
      {Op::broadcast, "ring", "Ring", "pipelined chain from the root", &build_broadcast_ring, &cost_broadcast_ring},
      {Op::reduce, "ring", "Ring", "pipelined chain towards the root, each rank adding its data (the broadcast's reversed)",
       &build_reduce_ring, &cost_reduce_ring},
      {Op::send_recv, "ring", "", "rank r sends its buffer to rank r+1 (pipeline-parallel stage to stage)",
       &build_send_recv_ring, &cost_send_recv_ring},
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

// Refuses, before anything is built, a schedule too big for memory, with the estimate and what would fit:
// its tasks and transfers at kScheduleBytesPerTask / kScheduleBytesPerTransfer (algorithm_support.hpp),
// beside the graph already built (estimate_graph) and the process itself, against the memory budget
// (sim/core/memory_budget.hpp). The engine's time budget is checked on what it would simulate, after
// aggregation (sim/engine/aggregation.hpp). `request` is resolved (NCCL's pipeline item may set its
// chunk); `chunked`: the user gave --chunk-bytes.
// The memory a schedule may take: the budget less the process and the graph already built.
double schedule_room(const TopologyGraph& graph, double& graph_bytes) {
  graph_bytes = estimate_graph(graph.spec(), graph.racks()).bytes;
  return static_cast<double>(memory_budget().bytes) - kProcessBaseBytes - graph_bytes;
}

// `listed`: the schedule runs listed by its symmetry (its own size already held to the budget), so only a
// --chunk-bytes over the transfer cap is refused here, as it would be for the full schedule.
void check_schedule_size(const CollectiveRequest& request, const TopologyGraph& graph, bool chunked, bool listed) {
  const MemoryBudget& budget = memory_budget();
  double graph_bytes = 0;
  const double room = schedule_room(graph, graph_bytes);
  struct Shape {
    std::string algorithm;
    double unit_bytes = 0;
    long tasks_fixed = 0, tasks_per_item = 0, transfers_fixed = 0, transfers_per_item = 0;
  } m;
  long depth = 1;
  // A hierarchical all-reduce whose blocks each have more transfers than its pipeline's budget is planned
  // at depth 1 (choose_depth); its counts need no pricing, so one over the memory even so is refused here,
  // with the same numbers, before its flows are priced (the ring across 1 389 racks: 285 M transfers,
  // refused in seconds instead of after pricing 0.2 M flows; issue 14).
  if (!chunked && request.op == CollectiveOp::all_reduce && request.algorithm == "hierarchical") {
    const ItemCounts c = hierarchical_counts(request, graph);
    if (c.transfers > kHierarchicalTransferBudget &&
        schedule_bytes(static_cast<double>(c.tasks), static_cast<double>(c.transfers)) > room)
      m = {"all_reduce/hierarchical", 0, 0, c.tasks, 0, c.transfers};
  }
  if (m.algorithm.empty()) {
    // The task and transfer counts are the traffic's shape, the same in the nominal model as with any
    // calibration and protocol terms: the plan the builder reads next (kept by build_schedule's scope).
    NominalPlan own;
    const NominalPlan& plan = nominal_plan(graph, request, own);
    const CostModel& p = plan.model;
    m = {p.algorithm, p.unit_bytes, p.tasks_fixed, p.tasks_per_item, p.transfers_fixed, p.transfers_per_item};
    depth = chunked ? pieces_for_chunk(m.unit_bytes, request.chunk_bytes) : plan.depth.depth;
  }
  const auto transfers = [&](double d) { return static_cast<double>(m.transfers_fixed) + static_cast<double>(m.transfers_per_item) * d; };
  const auto tasks = [&](double d) { return static_cast<double>(m.tasks_fixed) + static_cast<double>(m.tasks_per_item) * d; };
  const auto bytes = [&](double d) { return schedule_bytes(tasks(d), transfers(d)); };
  const double t = transfers(static_cast<double>(depth));
  const double need = bytes(static_cast<double>(depth));
  // A --chunk-bytes deeper than kMaxTransfers allows would be lowered by choose_depth (the builders plan
  // their depth with it): refused instead, so that what runs is what was asked for.
  const bool over_cap = chunked && t > static_cast<double>(kMaxTransfers);
  const bool fits = listed || need <= room;
  if (fits && !over_cap) return;
  const std::string what = m.algorithm + " on " + std::to_string(request.gpus.size()) + " GPUs, " +
                           units::format_bytes(request.bytes) + (chunked ? " in " + std::to_string(depth) + " pieces" : "") +
                           ": " + std::to_string(static_cast<long long>(t)) + " transfers, " +
                           std::to_string(static_cast<long long>(tasks(static_cast<double>(depth)))) + " tasks (~" +
                           format_MB(need + graph_bytes + kProcessBaseBytes) + " with the " + format_MB(graph_bytes) +
                           " graph)";
  const std::string limits =
      over_cap && fits
          ? "at most " + std::to_string(kMaxTransfers) + " transfers in one pipelined schedule (kMaxTransfers)"
          : "at most " + format_MB(static_cast<double>(budget.bytes)) + " in all (memory budget: " + budget.basis + ")";
  if (chunked) {
    long fit = 1;  // the deepest pipeline within both limits
    while (fit < depth && (listed || bytes(2.0 * fit) <= room) && transfers(2.0 * fit) <= static_cast<double>(kMaxTransfers)) fit *= 2;
    const double min_chunk = std::ceil(m.unit_bytes / static_cast<double>(fit));
    throw InputError("--chunk-bytes", "", std::to_string(request.chunk_bytes) + " (" + what + ")",
                     limits + ": a chunk of at least " + std::to_string(static_cast<long long>(min_chunk)) + " bytes, or none");
  }
  throw EngineLimitError("--gpus", "", what, limits + "; fewer GPUs or racks, or the analytic model (--model analytic, racksim.analytic)");
}

}  // namespace

FlowTerms engine_terms(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                       const ExecTerms& e) {
  if (!e.engine_sums_step_latency) return e.flow;
  // A ring's latency: the closed form sums its steps' (NCCL's (steps - inter) x intra + inter x net,
  // tuning.cc:376-377, each step no faster than its wire); the engine charges that sum at launch and runs the
  // steps at their contended bandwidth alone, each connection's steps in order (building_blocks.hpp), so that
  // where nothing contends both give the same time (test_engine_vs_analytic). Waiting each step's latency on
  // its transfer instead let the engine hide it behind the next step on the NIC hop (8 H100 nodes, 1 GiB:
  // 6.5 % faster than the closed form) while NCCL's terms, which the calibration fits, pay it. Priced here,
  // for the engine's runs only: the closed form's callers (validate, the planner's search) pay nothing more.
  const AlgorithmInfo& algo = find_algorithm(request.op, request.algorithm);
  FlowTerms bandwidth_only = e.flow;
  bandwidth_only.no_latency = true;
  const double stepwise_s = algo.cost(graph, request, calibration, e.flow).time(e.depth);
  const double bandwidth_s = algo.cost(graph, request, calibration, bandwidth_only).time(e.depth);
  FlowTerms run = e.flow;
  run.launch_s = std::max(0.0, stepwise_s - bandwidth_s);
  run.intra_step_s = run.net_step_s = 0;
  run.latency_at_launch = true;
  return run;
}

namespace {

Schedule build_resolved(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration,
                        bool quotient) {
  validate_request(request, graph);
  NominalPlan::Memo nominal;  // one pricing of the nominal model for the size check, builder and exec_terms
  const NominalPlan::Scope nominal_scope(nominal);
  // The routes, paths and per-link flow counts that the nominal model and exec_terms' bandwidth pass both
  // price (at 100 008 GPUs each pricing finds 0.2 M routes), unless the caller's search holds a cache of
  // this graph already (models/planner/comm_cost.cpp). Same arithmetic, the same results to the bit.
  const FlowCacheUnlessActive flows(graph);
  if (request.algorithm != "auto") find_algorithm(request.op, request.algorithm);  // unknown names first
  const NcclChoice choice = resolve_request(request, graph);
  const AlgorithmInfo& info = find_algorithm(choice.request.op, choice.request.algorithm);
  std::optional<Schedule> listed;
  if (quotient && info.quotient != nullptr) listed = info.quotient(choice.request, graph);
  if (listed) {  // the listed schedule within the same memory budget as any, else the full one's check decides
    double graph_bytes = 0;
    const double listed_tasks = static_cast<double>(listed->tasks.size());
    if (schedule_bytes(listed_tasks, listed_tasks) > schedule_room(graph, graph_bytes)) listed.reset();
  }
  if (!listed || request.chunk_bytes > 0) check_schedule_size(choice.request, graph, request.chunk_bytes > 0, listed.has_value());
  Schedule s = listed ? std::move(*listed) : info.build(choice.request, graph);
  s.request = choice.request;
  s.note = s.note.empty() ? choice.note : choice.note + "; " + s.note;
  // The same protocol terms and calibration as the algorithm's closed form (exec_terms.hpp).
  const ExecTerms e = exec_terms(graph, choice.request, calibration);
  const FlowTerms run = engine_terms(graph, choice.request, calibration, e);
  s.exec = {true, run.nvlink_efficiency(), run.launch_s, run.intra_step_s, run.net_step_s, run.arch,
            run.latency_at_launch, run.network_efficiency()};
  s.warnings.insert(s.warnings.begin(), e.warnings.begin(), e.warnings.end());  // then the builder's own
  if (!e.note.empty()) s.note += "; " + e.note;
  return s;
}

}  // namespace

Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration) {
  return build_resolved(request, graph, calibration, false);
}

Schedule build_schedule_quotient(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration) {
  return build_resolved(request, graph, calibration, true);
}

}  // namespace racksim
