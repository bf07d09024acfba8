#include "models/calibration/heldout_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "sim/core/errors.hpp"
#include "sim/core/statistics.hpp"

namespace racksim::calibration {

namespace {

struct Pool {
  std::vector<double> signed_errors;
  std::set<std::string> systems;
  int min_gpus = 0, max_gpus = 0;
};

}  // namespace

HeldoutTable heldout_table_of(const CrossValidation& by_system) {
  if (by_system.by != "system")
    throw InputError("held-out error table", "", "'" + by_system.by + "'", "the leave-one-system-out predictions");
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // arch, collective, scope, size
  std::map<Key, Pool> pools;
  for (const HeldOutPrediction& p : by_system.predictions) {
    if (p.measured_s <= 0 || p.arch.empty()) continue;
    const double error = p.predicted_s / p.measured_s - 1;
    const std::string scope = heldout_scope(p.domains > 1), size = heldout_size_band(p.bytes);
    const std::string op = p.key.substr(0, p.key.find('/'));
    for (const auto& [arch, collective] : std::vector<std::pair<std::string, std::string>>{
             {p.arch, p.key}, {p.arch, op + "/*"}, {"*", op + "/*"}, {"*", "*"}}) {
      Pool& pool = pools[{arch, collective, scope, size}];
      pool.signed_errors.push_back(error);
      pool.systems.insert(p.system);
      pool.min_gpus = pool.min_gpus == 0 ? p.gpus : std::min(pool.min_gpus, p.gpus);
      pool.max_gpus = std::max(pool.max_gpus, p.gpus);
    }
  }
  HeldoutTable t;
  t.basis = "leave one system out: each racksim system's records predicted by a calibration fitted without it "
            "(racksim validate, cross_validation.json); error = predicted time / measured time - 1";
  t.min_points = kHeldoutMinPoints;
  for (const auto& [key, pool] : pools) {
    HeldoutClass c;
    std::tie(c.arch, c.collective, c.scope, c.size) = key;
    c.error.points = static_cast<int>(pool.signed_errors.size());
    c.error.systems.assign(pool.systems.begin(), pool.systems.end());
    c.error.min_gpus = pool.min_gpus;
    c.error.max_gpus = pool.max_gpus;
    static_cast<ErrorSummary&>(c.error) = summarize_errors(pool.signed_errors, 4);
    t.classes.push_back(std::move(c));
  }
  return t;
}

}  // namespace racksim::calibration
