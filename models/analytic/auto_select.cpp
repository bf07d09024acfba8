#include "models/analytic/auto_select.hpp"

#include <fmt/format.h>

#include "models/analytic/cost_model.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim {

AutoChoice select_algorithm(const TopologyGraph& graph, const CollectiveRequest& request,
                            const Calibration& calibration) {
  AutoChoice c;
  double best = 0;
  for (const auto& name : algorithm_names(request.op)) {
    CollectiveRequest r = request;
    r.algorithm = name;
    try {
      const DepthChoice depth = planned_depth(graph, r);
      const double t = make_cost_model(graph, r, calibration).time(depth.depth);
      c.times.emplace_back(name, t);
      if (c.algorithm.empty() || t < best) {
        best = t;
        c.algorithm = name;
      }
    } catch (const InputError& e) {
      c.skipped.emplace_back(name, e.what());
    }
  }
  if (c.algorithm.empty()) {
    std::string why;
    for (const auto& [name, reason] : c.skipped) why += (why.empty() ? "" : "; ") + name + ": " + reason;
    throw InputError("--algo", "", "'auto'", "a request some algorithm can run (" + why + ")");
  }
  c.note = fmt::format("auto picked {} ({:.4g} us", c.algorithm, units::s_to_us(best));
  for (const auto& [name, t] : c.times)
    if (name != c.algorithm) c.note += fmt::format("; {} {:.4g} us", name, units::s_to_us(t));
  c.note += ")";
  for (const auto& [name, reason] : c.skipped) c.note += "; " + name + " not applicable";
  return c;
}

}  // namespace racksim
