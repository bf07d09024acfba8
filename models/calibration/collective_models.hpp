#pragma once
// The collective models a Predictor can use: racksim's analytic alpha-beta model (fast: the default
// for fitting and validation) and the discrete-event engine (slower: validation of a subset).
#include "models/calibration/predictor.hpp"

namespace racksim::calibration {

CollectiveModel analytic_collective_model();  // analytic_collective(...).time_s
CollectiveModel engine_collective_model();    // simulate_collective(...).time_s

}  // namespace racksim::calibration
