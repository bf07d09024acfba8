#pragma once
// The layout of a Schedule's logical chunks (Task::chunk), per op: what buffer the chunks partition, how
// many bytes each has and which rank a chunk belongs to. Algorithms, the symbolic checker, the JSON
// loader and the analytic model all read chunk sizes from here, so "every byte sent is received" can be
// checked against one rule.
//
//  all_reduce, broadcast,  the per-rank buffer of `bytes`; chunk c has piece_bytes(bytes, chunks, c).
//  reduce                  (the root's result has the same layout)
//  reduce_scatter          the per-rank input of `bytes` (nccl-tests' size); all_gather: the output of
//                          `bytes`. chunks is a multiple of n and chunk c belongs to rank c % n (the
//                          rank that ends with it reduced / that contributes it). Pieces are interleaved
//                          so that pipeline piece j of every owner is the contiguous range [j*n, (j+1)*n).
//  all_to_all              chunks = n*n; chunk s*n + d is what rank s sends to rank d:
//                          piece_bytes(bytes, n, d) (nccl-tests: bytes / n to each peer).
//  send_recv               chunks = n*k; chunk r*k + j is piece j of rank r's own buffer:
//                          piece_bytes(bytes, k, j).
// piece_bytes splits a total into nearly equal integers: the first (total % pieces) pieces get one byte
// more, so sizes not divisible by n are exact and no byte is lost.
#include <cstdint>

#include "models/collectives/collective.hpp"

namespace racksim {

std::uint64_t piece_bytes(std::uint64_t total, std::uint64_t pieces, std::uint64_t index);
// Sum of piece_bytes over [first, first + count).
std::uint64_t piece_range_bytes(std::uint64_t total, std::uint64_t pieces, std::uint64_t first, std::uint64_t count);

std::uint64_t chunk_size_bytes(CollectiveOp op, std::uint64_t bytes, int ranks, int chunks, int chunk);
std::uint64_t chunk_range_bytes(CollectiveOp op, std::uint64_t bytes, int ranks, int chunks, int first, int count);
// The rank a chunk belongs to (reduce_scatter / all_gather: c % n; all_to_all: the sender c / n;
// send_recv: c / (chunks / n)); -1 for all_reduce, broadcast and reduce, whose chunks belong to everyone.
int chunk_owner(CollectiveOp op, int ranks, int chunks, int chunk);
// Empty when `chunks` fits the op's layout for n ranks, else what is wrong.
const char* chunk_layout_problem(CollectiveOp op, int ranks, int chunks);

}  // namespace racksim
