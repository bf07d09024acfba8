#pragma once
// A schedule built as its own quotient (Schedule::symmetry: one task per orbit of a group of rank permutations)
// compiled straight into the engine's quotient run, the run that exact aggregation (aggregation.hpp) derives from a
// full run's classes of copies: one flow per orbit of transfers, one link per orbit of links carrying the orbit's
// flows with their multiplicity. The full schedule is never built: a flat ring over 8 GB200 racks lists 165 600
// of its 10.6 M transfers (issue 14). What the algorithm's group says of ranks is checked here of the platform:
// every image of a listed transfer's route must cross, position by position, links of the same bandwidth, latency
// and kind, each link mapped to one link by each permutation (the group acts on the links the run uses), and no
// route may be broken; otherwise the caller builds the full schedule.
#include <string>

#include "models/collectives/schedule.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/compiled_run.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim {

// Why the platform does not keep the schedule's symmetry; empty when it does (or the schedule has none).
std::string symmetry_breaks(const PlatformModel& model, const Schedule& schedule);

// The quotient run of a symmetric schedule (alone: no other schedule, no start dependencies). SimulationError
// naming the reason where symmetry_breaks has one.
CompiledRun compile_symmetric(const PlatformModel& model, const Calibration& calibration, const Schedule& schedule);

}  // namespace racksim
