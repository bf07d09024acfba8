#pragma once
// Runs Schedules as activity DAGs on a SimGrid engine created in THIS process. SimGrid allows one engine
// per process and never resets its clock, so only a process without an engine may call this: Simulation
// calls it in a forked worker (engine_process.hpp). Activities are created when their dependencies
// complete, not all up front (SimGrid 3.32 keeps started activities in a list that is scanned on every
// completion, which made a pre-built 40 000-comm DAG quadratic).
//
// What one Task becomes:
//   [step overhead: a delay on the delay host] -> [in-switch reduction: an Exec on the switch-plane host,
//   when the task leaves a switch plane that received reducing transfers] -> one Comm per destination
//   (a multicast from the switch plane = N comms started together) -> [optional GPU reduction kernel].
// A task is complete when all its parts are. The collective's launch overhead delays its first tasks.
#include <vector>

#include "models/collectives/schedule.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/platform/platform_model.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

// Fills every RunResult field except the configuration echo (system, racks, calibration, failures).
// Throws InputError for a malformed schedule, SimulationError when a route crosses a failed link.
// `rank_hosts`, when given, maps each schedule's ranks to PlatformModel hosts (any GPU or CPU) instead of
// request.gpus: device-level transfers (Simulation::run_transfers) use it.
std::vector<RunResult> execute_schedules(const PlatformModel& model, const Calibration& calibration,
                                         const std::vector<const Schedule*>& schedules, const RunOptions& options,
                                         const std::vector<std::vector<int>>* rank_hosts = nullptr);

}  // namespace racksim
