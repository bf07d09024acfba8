#include "models/calibration/collective_models.hpp"

#include "models/analytic/analytic_model.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim::calibration {

CollectiveModel analytic_collective_model() {
  return [](const TopologyGraph& g, const CollectiveRequest& r, const Calibration& c) {
    return analytic_collective(g, r, c).time_s;
  };
}

CollectiveModel engine_collective_model() {
  return [](const TopologyGraph& g, const CollectiveRequest& r, const Calibration& c) {
    return simulate_collective(g, r, c).time_s;
  };
}

}  // namespace racksim::calibration
