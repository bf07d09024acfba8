#include "models/analytic/analytic_model.hpp"
#include "models/collectives/registry.hpp"
#include "sim/topo/topology_graph.hpp"
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

// The closed form's estimate (models/analytic/analytic_model.hpp) as a result of the same shape as the
// engine's, so that JSON readers and the table see one format: no links, and `engine.mode` "analytic" with
// `why` in its note (the engine did not run).
RunResult analytic_run_result(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                              const std::string& why) {
  const AnalyticEstimate e = analytic_collective(graph, request, calibration);
  RunResult r;
  r.system = graph.spec().id;
  r.racks = graph.racks();
  r.op = to_string(request.op);
  r.algorithm = e.algorithm;
  r.algorithm_note = e.note;
  r.protocol = e.protocol;
  r.channels = e.channels;
  r.warnings = e.warnings;
  r.gpus = static_cast<int>(request.gpus.size());
  r.bytes = request.bytes;
  r.chunk_bytes = request.chunk_bytes;
  r.time_s = e.time_s;
  r.algbw_Bps = e.time_s > 0 ? static_cast<double>(r.bytes) / e.time_s : 0.0;
  r.busbw_Bps = r.algbw_Bps * busbw_factor(request.op, r.gpus);
  r.phases = e.phases;
  r.calibration = calibration.name;
  r.heldout_error = collective_heldout_error(graph, calibration, request, e.algorithm);
  r.engine.mode = "analytic";
  r.engine.note = why;
  return r;
}

}  // namespace racksim
