#pragma once
// The one table of collective algorithms ("all_reduce/ring", "all_reduce/nvls", ...). Each algorithm
// lives in models/collectives/<op>/<algorithm>.cpp with both its schedule builder (what the engine runs)
// and its cost model (the closed form of the same traffic), and is listed once in registry.cpp. A row
// cannot be written without both: AlgorithmInfo has no default constructor. `auto`, the CLI's choices,
// the calibration's key check and the tests iterate this table. An unknown name is an InputError listing
// the valid ones for that op.
#include <optional>
#include <string>
#include <vector>

#include "models/analytic/cost_model.hpp"
#include "models/collectives/schedule.hpp"

namespace racksim {

class TopologyGraph;
struct Calibration;
struct ExecTerms;

using ScheduleBuilderFn = Schedule (*)(const CollectiveRequest& request, const TopologyGraph& graph);
// The schedule as its own quotient under a symmetry the algorithm knows (Schedule::symmetry), or nothing where
// this request has none: what the engine simulates in place of the full schedule (issue 14).
using QuotientBuilderFn = std::optional<Schedule> (*)(const CollectiveRequest& request, const TopologyGraph& graph);
using CostModelFn = CostModel (*)(const TopologyGraph& graph, const CollectiveRequest& request,
                                  const Calibration& calibration, const FlowTerms& terms);

struct AlgorithmInfo {
  AlgorithmInfo(CollectiveOp op_, std::string name_, std::string nccl_name_, std::string description_,
                ScheduleBuilderFn build_, CostModelFn cost_, QuotientBuilderFn quotient_ = nullptr)
      : op(op_), name(std::move(name_)), nccl_name(std::move(nccl_name_)), description(std::move(description_)),
        build(build_), cost(cost_), quotient(quotient_) {}
  CollectiveOp op;
  std::string name;          // "ring"; full name "all_reduce/ring"
  std::string nccl_name;     // NCCL's algorithm ("Ring", "NVLSTree"), or "" for racksim's own (never auto)
  std::string description;   // one line: what it models
  // Builds the schedule. Throws InputError when the algorithm cannot run on this request and topology
  // (e.g. nvls on a system without multicast_reduction), saying why.
  ScheduleBuilderFn build;
  // The same algorithm's closed form (same traffic, no contention), same InputErrors.
  CostModelFn cost;
  // Optional: the same schedule's quotient under its symmetry, same InputErrors as `build` (null: none).
  QuotientBuilderFn quotient;
};

const std::vector<AlgorithmInfo>& algorithm_table();
// Finds op/name; InputError listing the valid names for the op (plus "auto") when unknown.
const AlgorithmInfo& find_algorithm(CollectiveOp op, const std::string& name);
std::vector<std::string> algorithm_names(CollectiveOp op);  // without "auto"

// Checks the request against the graph (ranks distinct and present, bytes in (0, 1 TiB], chunk size,
// root, protocol, channels), resolves "auto" the way NCCL would (models/collectives/nccl_choice.hpp:
// algorithm, protocol, channel count; --algo/--protocol/--channels override like NCCL_ALGO, NCCL_PROTO
// and NCCL_MIN/MAX_NCHANNELS) and builds the schedule; Schedule::note says what was chosen and why.
// The calibration picks the algorithm-independent parts only (NCCL's decision does not depend on it), but
// the schedule carries the run's efficiencies (kappa, NCCL's caps scaled on that calibration's links): the
// two-argument form builds with Calibration::none(), so run it on a Simulation with Calibration::none() too.
// A schedule built without a calibration and run with one prices a different run (two H100 nodes' NVLS-tree,
// run with the NICs slowed: 23 % from the closed form of the same calibration).
Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration);
// The same, as its quotient (Schedule::symmetry set) where the resolved algorithm has a quotient builder and the
// request a symmetry; otherwise exactly build_schedule's schedule. For the engine only: a quotient dumps to no
// JSON and runs alone (compile_run checks that the topology keeps the symmetry).
Schedule build_schedule_quotient(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration);

// The terms the engine runs a resolved request with (Schedule::exec): exec_terms' own, except a ring's, whose
// per-step latencies it takes summed at launch (ExecTerms::engine_sums_step_latency).
FlowTerms engine_terms(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                       const ExecTerms& e);

}  // namespace racksim
