#pragma once
// Exact aggregation of symmetric work (issue 14). Most transfers of a collective are copies of one
// another: the channels of a rail-aligned ring, the GPUs of one NVLS phase, the racks of a hierarchical
// run. This finds the classes of copies and builds a smaller run that simulates each class once.
//
// How: colour refinement (1-dimensional Weisfeiler-Leman) over the run's incidence structure (tasks and
// their dependencies, transfers and the directed links and hosts they use) until the partition is
// equitable: every member of a class has the same number of neighbours in every class, and the same
// bytes, latency, bandwidth and delays. Max-min fair sharing (progressive filling) then gives every member
// of a class the same rate at every instant (the links of one class load and saturate together), and by
// induction over events every member of a task class starts and ends at the same time. The quotient run
// keeps one representative link per link class at its full capacity and lets each transfer class load
// it with its multiplicity there: a class F whose members cross a link of class K b times in all puts
// weight b on K's representative (SimGrid sums a variable's repeated elements in a constraint; the
// route lists the link b times). Executions (in-switch and GPU reductions) run on the representative host
// of their host's class, at 1/c of its speed when each of their classes has c copies on one host. So the quotient is exact, not an approximation;
// tests/cli/test_aggregation_exact.py checks it against the full run. The classes are found in copy_classes.cpp.
//
// Where the symmetry is broken (a failure, a partition, a concurrent job, an uneven placement) the
// classes are small; when they do not shrink the run by at least half, the full run is simulated.
#include <string>

#include "sim/engine/compiled_run.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim {

struct AggregationOutcome {
  bool aggregated = false;
  CompiledRun quotient;  // valid when aggregated
  std::string reason;    // why not, when not aggregated
};

// The quotient of `full` (compiled against `model`), or the reason there is none worth running.
// `gpu_reduce_kernel`: the run charges GPU reduction kernels (RunOptions), executions to aggregate too.
AggregationOutcome aggregate_run(const PlatformModel& model, const CompiledRun& full, bool gpu_reduce_kernel);

// The engine's time budget for one run. SimGrid re-solves the bandwidth sharing of every live comm at each
// completion, so a run costs about transfers x transfers in flight (in flight ~ transfers / DAG levels: an
// all-to-all has one level, a ring one per step). Measured on the 2-core dev machine at load ~9:
// 1.6-1.9e-8 s per unit on all_to_all 72/144 and an 8-GPU ring chunked to depth 256/512 (about 6e-9 s
// idle); 5e9 units is about 30 s idle. all_to_all on 288 GPUs in full (6.8e9) took over 2 minutes.
inline constexpr double kMaxEngineWork = 5e9;
inline constexpr double kEngineSecondsPerWork = 6e-9;  // idle 2-core dev machine, for the estimate shown

// What the engine simulates for `full`: its quotient when options.aggregate and the symmetry pays
// (aggregate_run), otherwise `full` itself with the reason in engine_note. InputError (naming --gpus, with
// the estimate) when what would be simulated is over kMaxEngineWork.
CompiledRun engine_run(const PlatformModel& model, CompiledRun full, const RunOptions& options);

}  // namespace racksim
