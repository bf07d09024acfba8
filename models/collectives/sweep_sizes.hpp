#pragma once
// The message sizes of a sweep, as nccl-tests' -b/-e/-f make them: min, min*f, min*f^2, ... while <= max,
// each rounded to the nearest byte; at most 1000 sizes. Shared by `racksim sweep` and racksim.System.sweep.
#include <cstdint>
#include <string>
#include <vector>

namespace racksim {

struct SweepSizeNames {  // how the caller calls its three inputs, for error messages
  std::string min = "--min-bytes", max = "--max-bytes", factor = "--step-factor";
};

// InputError (naming the input) when min is 0, min > max, or the factor is not a finite number > 1.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double step_factor,
                                       const SweepSizeNames& names = {});

}  // namespace racksim
