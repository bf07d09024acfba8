#pragma once
// Work units: the pieces a sweep or a goodput Monte Carlo splits into so that they can run anywhere, one
// at a time or on a Dask cluster (docs/dask.md). A unit is JSON text that carries every input it needs
// (the topology, the calibration and the request themselves, never a file path), so a worker on another
// machine needs only racksim's Python package. Its result is text too: the exact bytes of what it
// computed (RunResults through sim/engine/result_wire.hpp, goodput trials as their doubles), hex-encoded,
// so the caller reassembles bit-identical numbers and prints byte-identical output, whatever ran where.
//
//   units = collective_units(...)            // the caller: one unit per sweep size
//   results[i] = run_work_unit(units[i])     // anywhere: in this process, a Dask worker, ...
//   collective_unit_results(results)         // the caller, in the units' order
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/failures/goodput.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/failure_scenario.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

class TopologyGraph;

// One unit per request (e.g. one per size of a sweep) on `graph` (its spec, racks and NVLink partitions
// travel with the unit), each simulated alone as Simulation::run.
std::vector<std::string> collective_units(const TopologyGraph& graph, const Calibration& calibration,
                                          const FailureScenario& failures, const std::vector<CollectiveRequest>& requests);
// The RunResults of run_work_unit on each unit, in order. SimulationError for a result that is not one.
std::vector<RunResult> collective_unit_results(const std::vector<std::string>& results);

// The trials of each request's Monte Carlo in ranges of at most `trials_per_unit` (0: about 32 units per
// request), in order.
std::vector<std::string> goodput_units(const std::vector<GoodputRequest>& requests, int trials_per_unit = 0);
// run_goodput of each request with the trials the units computed (results in the units' order).
std::vector<GoodputResult> goodput_unit_results(const std::vector<GoodputRequest>& requests,
                                                const std::vector<std::string>& results);

// Runs one unit. InputError for text that is not a unit (naming what is wrong); the unit's own
// InputError or SimulationError otherwise.
std::string run_work_unit(const std::string& unit);

}  // namespace racksim
