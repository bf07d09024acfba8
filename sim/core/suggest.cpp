#include "sim/core/suggest.hpp"

#include <algorithm>

namespace racksim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance: three rows suffice.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest_name(std::string_view wrong, const std::vector<std::string>& valid) {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& name : valid) {
    if (name == wrong) continue;
    const std::size_t longer = std::max(name.size(), wrong.size());
    const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(longer / 3, 4));
    const std::size_t d = edit_distance(wrong, name);
    if (d <= limit && (best.empty() || d < best_distance)) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& valid) {
  const std::string near = nearest_name(wrong, valid);
  return near.empty() ? "" : " (did you mean '" + near + "'?)";
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace racksim
