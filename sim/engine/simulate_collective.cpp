#include "models/collectives/registry.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {

// Kept apart from simulation.cpp so that the engine links without the algorithm registry.
RunResult simulate_collective(const TopologyGraph& graph, const CollectiveRequest& request,
                              const Calibration& calibration, const FailureScenario& failures,
                              const RunOptions& options) {
  Simulation simulation(graph, calibration, failures);  // checks the failure items first
  const Schedule schedule = build_schedule(request, graph, calibration);  // auto picks with this calibration
  return simulation.run(schedule, options);
}

}  // namespace racksim
