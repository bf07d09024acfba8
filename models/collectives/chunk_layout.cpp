#include "models/collectives/chunk_layout.hpp"

#include <algorithm>

namespace racksim {

std::uint64_t piece_bytes(std::uint64_t total, std::uint64_t pieces, std::uint64_t index) {
  if (pieces == 0 || index >= pieces) return 0;
  return total / pieces + (index < total % pieces ? 1 : 0);
}

std::uint64_t piece_range_bytes(std::uint64_t total, std::uint64_t pieces, std::uint64_t first, std::uint64_t count) {
  if (pieces == 0 || first >= pieces) return 0;
  const std::uint64_t end = std::min(pieces, first + count);
  const std::uint64_t rem = total % pieces;
  const std::uint64_t extra = rem > first ? std::min(end, rem) - first : 0;
  return (end - first) * (total / pieces) + extra;
}

std::uint64_t chunk_size_bytes(CollectiveOp op, std::uint64_t bytes, int ranks, int chunks, int chunk) {
  if (chunk < 0 || chunk >= chunks || ranks < 1) return 0;
  switch (op) {
    case CollectiveOp::all_to_all: return piece_bytes(bytes, ranks, chunk % ranks);
    case CollectiveOp::send_recv: {
      const int k = chunks / ranks;
      return piece_bytes(bytes, k, chunk % k);
    }
    default: return piece_bytes(bytes, chunks, chunk);
  }
}

std::uint64_t chunk_range_bytes(CollectiveOp op, std::uint64_t bytes, int ranks, int chunks, int first, int count) {
  if (first < 0 || count < 1) return 0;
  if (op != CollectiveOp::all_to_all && op != CollectiveOp::send_recv)
    return piece_range_bytes(bytes, chunks, first, count);
  std::uint64_t sum = 0;
  for (int c = first; c < first + count && c < chunks; ++c) sum += chunk_size_bytes(op, bytes, ranks, chunks, c);
  return sum;
}

int chunk_owner(CollectiveOp op, int ranks, int chunks, int chunk) {
  if (ranks < 1 || chunk < 0 || chunk >= chunks) return -1;
  switch (op) {
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather: return chunk % ranks;
    case CollectiveOp::all_to_all: return chunk / ranks;
    case CollectiveOp::send_recv: return chunk / (chunks / ranks);
    default: return -1;
  }
}

const char* chunk_layout_problem(CollectiveOp op, int ranks, int chunks) {
  if (ranks < 1) return "no ranks";
  if (chunks < 1) return "chunks must be >= 1";
  switch (op) {
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::send_recv:
      return chunks % ranks == 0 ? "" : "chunks must be a multiple of the rank count";
    case CollectiveOp::all_to_all:
      return static_cast<long>(chunks) == static_cast<long>(ranks) * ranks ? "" : "chunks must be ranks * ranks";
    default: return "";
  }
}

}  // namespace racksim
