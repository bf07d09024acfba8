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

namespace {
bool split_over_ranks(CollectiveOp op) {
  return op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_to_all;
}
}  // namespace

std::uint64_t nccl_tests_bytes(CollectiveOp op, std::uint64_t bytes, std::uint64_t element_bytes, int ranks) {
  if (element_bytes == 0) return bytes;
  std::uint64_t count = bytes / element_bytes;
  if (split_over_ranks(op) && ranks > 0) count = count / static_cast<std::uint64_t>(ranks) * static_cast<std::uint64_t>(ranks);
  return count * element_bytes;
}

std::uint64_t least_nccl_tests_bytes(CollectiveOp op, std::uint64_t element_bytes, int ranks) {
  return element_bytes * static_cast<std::uint64_t>(split_over_ranks(op) && ranks > 0 ? ranks : 1);
}

std::uint64_t nccl_tests_bytes_of(const CollectiveRequest& r, std::uint64_t bytes, const std::string& where) {
  const std::uint64_t element = dtype_size_bytes(r.dtype, "dtype");
  const int ranks = static_cast<int>(r.gpus.size());
  const std::uint64_t b = nccl_tests_bytes(r.op, bytes, element, ranks);
  if (b == 0)
    throw InputError(where, "", std::to_string(bytes) + " B of " + r.dtype + " for " + to_string(r.op) + " on " + std::to_string(ranks) + " ranks",
                     "at least one element per rank: " + std::to_string(least_nccl_tests_bytes(r.op, element, ranks)) + " B, as nccl-tests counts them");
  return b;
}

std::vector<std::uint64_t> nccl_tests_sizes(const std::vector<std::uint64_t>& sizes, CollectiveOp op, std::uint64_t element_bytes,
                                            int ranks, const std::string& min_name, std::vector<std::uint64_t>* left_out) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : sizes) {
    const std::uint64_t b = nccl_tests_bytes(op, s, element_bytes, ranks);
    if (b == 0 && left_out) left_out->push_back(s);
    if (b > 0 && (out.empty() || out.back() != b)) out.push_back(b);
  }
  if (out.empty() && !sizes.empty())
    throw InputError(min_name, "", std::to_string(sizes.front()) + " B (up to " + std::to_string(sizes.back()) + " B)",
                     "sizes with at least one element per rank: " + std::to_string(least_nccl_tests_bytes(op, element_bytes, ranks)) +
                         " B here, as nccl-tests counts them");
  return out;
}

}  // namespace racksim
