#include "models/collectives/sweep_sizes.hpp"

#include <cmath>

#include "sim/core/errors.hpp"

namespace racksim {

std::vector<std::uint64_t> sweep_sizes(std::uint64_t lo, std::uint64_t hi, double step_factor,
                                       const SweepSizeNames& names) {
  if (lo == 0) throw InputError(names.min, "", "0", "a size in [1 B, 1 TiB] per rank");
  if (lo > hi)
    throw InputError(names.max, "", std::to_string(hi),
                     ">= " + names.min + " (" + std::to_string(lo) + " bytes)");
  if (!(step_factor > 1) || !std::isfinite(step_factor))
    throw InputError(names.factor, "", number_text(step_factor), "a number > 1 (nccl-tests -f)");
  std::vector<std::uint64_t> sizes;
  for (double x = static_cast<double>(lo); x <= static_cast<double>(hi) * (1 + 1e-12); x *= step_factor) {
    sizes.push_back(static_cast<std::uint64_t>(std::llround(x)));
    if (sizes.size() > 1000)
      throw InputError(names.factor, "", number_text(step_factor), "a factor giving at most 1000 sizes");
  }
  return sizes;
}

}  // namespace racksim
