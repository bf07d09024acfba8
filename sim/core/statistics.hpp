#pragma once
// Small statistics shared by the fits and their reports (calibration, validation, the planner's training fit).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace racksim {

// The median of v (the mean of the two middle values for an even count); 0 for an empty vector.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The q-quantile (0 < q <= 1) by nearest rank: the smallest value with at least q of the values at or below
// it (no interpolation, so it is always a measured value); 0 for an empty vector.
inline double nearest_rank_quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// A fraction as per cent to a tenth, halves away from zero (0.0785 -> 7.9): how results print error figures.
inline double percent_to_tenth(double fraction) { return std::round(fraction * 1000.0) / 10.0; }

// Held-out errors (predicted / measured - 1) summarised as the held-out error tables print them
// (sim/calib/heldout_errors.hpp, models/planner/training_heldout.hpp), each rounded to `decimals`.
struct ErrorSummary {
  double median_abs = 0, p90_abs = 0, worst_abs = 0, median_signed = 0;
  bool operator==(const ErrorSummary&) const = default;
};
inline ErrorSummary summarize_errors(const std::vector<double>& signed_errors, int decimals) {
  std::vector<double> abs_errors;
  for (double e : signed_errors) abs_errors.push_back(std::fabs(e));
  const double scale = std::pow(10.0, decimals);
  auto round = [scale](double x) { return std::round(x * scale) / scale; };
  ErrorSummary s;
  s.median_abs = round(median(abs_errors));
  s.p90_abs = round(nearest_rank_quantile(abs_errors, 0.9));
  s.worst_abs = round(abs_errors.empty() ? 0 : *std::max_element(abs_errors.begin(), abs_errors.end()));
  s.median_signed = round(median(signed_errors));
  return s;
}

}  // namespace racksim
