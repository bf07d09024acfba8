#pragma once
// The discrete-event engine: runs Schedules on a SimGrid platform built from a TopologyGraph, with a
// calibration and a failure scenario. SimGrid stays inside sim/platform and sim/engine .cpp files.
#include <memory>
#include <vector>

#include "models/collectives/schedule.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/failure_scenario.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

class TopologyGraph;

struct RunOptions {
  bool record_trace = false;
};

class Simulation {
 public:
  // Throws InputError for failures that name nothing in the graph.
  Simulation(const TopologyGraph& graph, Calibration calibration, FailureScenario failures = {});
  ~Simulation();

  // One schedule alone on the platform. SimulationError if it needs a failed GPU (naming the tray).
  RunResult run(const Schedule& schedule, const RunOptions& options = {}) const;
  // Several schedules started together, sharing links (contention is simulated).
  std::vector<RunResult> run_concurrent(const std::vector<Schedule>& schedules, const RunOptions& options = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience used by the CLI and the bindings: build the schedule (resolving "auto") and run it.
RunResult simulate_collective(const TopologyGraph& graph, const CollectiveRequest& request,
                              const Calibration& calibration, const FailureScenario& failures = {},
                              const RunOptions& options = {});

}  // namespace racksim
