#pragma once
// The message sizes of a sweep, as nccl-tests' -b/-e/-f make them: min, min*f, min*f^2, ... while <= max,
// each rounded to the nearest byte; at most 1000 sizes. Shared by `racksim sweep` and racksim.System.sweep.
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"

namespace racksim {

struct SweepSizeNames {  // how the caller calls its three inputs, for error messages
  std::string min = "--min-bytes", max = "--max-bytes", factor = "--step-factor";
};

// InputError (naming the input) when min is 0, min > max, or the factor is not a finite number > 1.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double step_factor,
                                       const SweepSizeNames& names = {});

// The size nccl-tests runs and prints for its size argument `bytes` (nccl-tests' src/common.cu setupArgs and
// each test's getCollByteCount): count = bytes / element; all_gather, reduce_scatter and alltoall give each of
// the `ranks` count / ranks elements, so what moves is whole elements per rank: 1 KiB of floats on 72 ranks is
// 864 B, 5 B of doubles none. 0 when not one element (per rank) fits.
std::uint64_t nccl_tests_bytes(CollectiveOp op, std::uint64_t bytes, std::uint64_t element_bytes, int ranks);
// nccl_tests_bytes of `bytes` for request `r` (its op, dtype and ranks); InputError naming `where` when no
// element fits (100 B of all_gather over 72 ranks).
std::uint64_t nccl_tests_bytes_of(const CollectiveRequest& r, std::uint64_t bytes, const std::string& where);
// The least size nccl_tests_bytes keeps: one element, per rank where the op splits over the ranks.
std::uint64_t least_nccl_tests_bytes(CollectiveOp op, std::uint64_t element_bytes, int ranks);

// A sweep's sizes as nccl-tests runs them (nccl_tests_bytes), those that come to 0 left out, as are repeats.
// InputError naming `min_name` when none is left (a sweep whose every size is below one element per rank).
// `left_out`, when given, receives the sizes asked for that came to 0.
std::vector<std::uint64_t> nccl_tests_sizes(const std::vector<std::uint64_t>& sizes, CollectiveOp op, std::uint64_t element_bytes,
                                            int ranks, const std::string& min_name, std::vector<std::uint64_t>* left_out = nullptr);

}  // namespace racksim
