#pragma once
// Small statistics shared by the fits and their reports (calibration, validation, the planner's training fit).
#include <algorithm>
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

}  // namespace racksim
