#include <cmath>

#include <fmt/format.h>

#include "models/analytic/analytic_model.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {

// Kept apart from simulation.cpp so that the engine links without the algorithm registry.
Schedule schedule_for_engine(const Simulation& simulation, const TopologyGraph& graph, const CollectiveRequest& request,
                             const Calibration& calibration, const RunOptions& options) {
  // Where the algorithm lists its schedule by a symmetry (NCCL's rings, across racks or inside one domain), the engine runs that
  // quotient, never building the full schedule (issue 14: a flat ring over 8 GB200 racks is 10.6 M transfers),
  // unless this run breaks the symmetry; then the full schedule, as always.
  if (!options.aggregate || options.record_trace) return build_schedule(request, graph, calibration);
  Schedule listed = build_schedule_quotient(request, graph, calibration);  // the full one where there is none
  if (!listed.symmetry || simulation.quotient_refused(listed, options).empty()) return listed;
  return build_schedule(request, graph, calibration);
}

RunResult simulate_collective(const TopologyGraph& graph, const CollectiveRequest& request,
                              const Calibration& calibration, const FailureScenario& failures,
                              const RunOptions& options) {
  Simulation simulation(graph, calibration, failures);  // checks the failure items first
  const Schedule schedule = schedule_for_engine(simulation, graph, request, calibration, options);  // auto picks with it
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
  r.rack_unit = graph.spec().rack.unit;
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

bool check_model_choice(const std::string& where, const std::string& model, const std::vector<std::string>& engine_only) {
  if (model != "auto" && model != "engine" && model != "analytic") throw InputError(where, "", model, "auto, engine or analytic");
  if (model == "analytic" && !engine_only.empty()) {
    std::string names;
    for (const auto& n : engine_only) names += (names.empty() ? "" : ", ") + n;
    throw InputError(where, "", "analytic with " + names,
                     "engine or auto there (the closed form has no failures, timeline, aggregation or engine processes)");
  }
  return !engine_only.empty();
}

void note_coarse_pipeline(RunResult& result, const Schedule& schedule, const TopologyGraph& graph,
                          const Calibration& calibration) {
  // Schedule::nccl_chunks: choose_depth lowered the builder's depth below the chunk's own pieces.
  if (result.time_s <= 0 || schedule.nccl_chunks <= 0) return;
  const AnalyticEstimate e = analytic_collective(graph, schedule.request, calibration);
  if (e.time_s <= 0) return;
  const double engine_over = result.time_s / e.time_s - 1;
  if (std::fabs(engine_over) < kCoarsePipelineNote) return;
  const double busbw_GBps = units::Bps_to_GBps(static_cast<double>(result.bytes) / e.time_s * busbw_factor(schedule.request.op, result.gpus));
  result.warnings.push_back(fmt::format(
      "the engine ran this pipeline in {} pieces where NCCL runs {} chunks (to stay within its transfer "
      "budget), and its fill grows with the pieces: the closed form at NCCL's depth gives {:.6g} us, {:.6g} GB/s busbw "
      "(the engine's time {:+.1f} % from it; --model analytic)",
      schedule.pipeline_pieces, schedule.nccl_chunks, units::s_to_us(e.time_s), busbw_GBps, 100 * engine_over));
}

}  // namespace racksim
