#include "models/calibration/heldout_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "sim/core/errors.hpp"

namespace racksim::calibration {

namespace {

double rounded4(double x) { return std::round(x * 1e4) / 1e4; }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Nearest rank: the smallest value with at least 90 % of the values at or below it.
double p90_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

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
    std::vector<double> abs_errors;
    for (double e : pool.signed_errors) abs_errors.push_back(std::fabs(e));
    c.error.points = static_cast<int>(pool.signed_errors.size());
    c.error.systems.assign(pool.systems.begin(), pool.systems.end());
    c.error.min_gpus = pool.min_gpus;
    c.error.max_gpus = pool.max_gpus;
    c.error.median_abs = rounded4(median_of(abs_errors));
    c.error.p90_abs = rounded4(p90_of(abs_errors));
    c.error.worst_abs = rounded4(*std::max_element(abs_errors.begin(), abs_errors.end()));
    c.error.median_signed = rounded4(median_of(pool.signed_errors));
    t.classes.push_back(std::move(c));
  }
  return t;
}

}  // namespace racksim::calibration
