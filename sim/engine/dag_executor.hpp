#pragma once
// Runs Schedules as activity DAGs on a SimGrid engine created in THIS process. SimGrid allows one engine
// per process and never resets its clock, so only a process without an engine may run this: Simulation
// compiles the run in the caller's process (compiled_run.hpp) and executes it in a forked engine process
// (engine_process.hpp). Activities are created when their dependencies complete, not all up front
// (SimGrid 3.32 keeps live host-to-host comms in a list it scans on every completion, which made a
// pre-built 40 000-comm DAG quadratic).
//
// What one task becomes: [step overhead: a timer] -> [in-switch reduction: an Exec on the switch-plane
// host, when the task leaves a plane that received reducing transfers] -> one Comm per destination (a
// multicast from a switch plane: ONE comm to its group, over every member's port) -> [optional GPU
// reduction kernel: an Exec on the receiving GPU]. A task is complete when all its parts are; the
// collective's launch overhead delays its first tasks.
#include <vector>

#include "sim/engine/compiled_run.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/platform/platform_model.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

// Runs a compiled run (compiled_run.hpp) as it is, full or a quotient (aggregation.hpp's engine_run
// decides), and fills every RunResult field except the configuration echo (system, racks, calibration,
// failures). `model` must be the one the run was compiled against.
std::vector<RunResult> execute_compiled(const PlatformModel& model, const CompiledRun& run, const RunOptions& options);

// compile_run + engine_run + execute_compiled in this process (tests and tools that already are an engine process).
std::vector<RunResult> execute_schedules(const PlatformModel& model, const Calibration& calibration,
                                         const std::vector<const Schedule*>& schedules, const RunOptions& options,
                                         const std::vector<std::vector<int>>* rank_hosts = nullptr);

}  // namespace racksim
