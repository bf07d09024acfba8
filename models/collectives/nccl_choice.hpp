#pragma once
// From a user's request to what NCCL would run: the algorithm, protocol and channel count NCCL 2.28
// picks for this collective, size and rank placement (models/nccl), or the user's overrides of them
// (--algo, --protocol, --channels, like NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS). racksim's own
// algorithms that NCCL does not have (hierarchical, all_to_all direct) are never picked by "auto".
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/nccl/nccl_constants.hpp"
#include "models/nccl/nccl_system.hpp"

namespace racksim {

class TopologyGraph;

struct NcclChoice {
  CollectiveRequest request;   // algorithm, protocol and channels resolved (never "auto"/0)
  std::uint64_t nccl_chunk_bytes = 0;  // NCCL's chunk per channel and step (calcCollChunking)
  int nvls_heads = 0;          // NVLS / NVLS-tree head GPUs per node
  double nccl_time_us = 0;     // NCCL's own estimate for the pick (tuning.cc:587-600), 0 for racksim-only
  bool by_nccl = false;        // the algorithm is one of NCCL's (its tuner decided or was overridden)
  std::string note;            // "NCCL 2.28: NVLS/Simple on 16 channels (its estimate 3973 us; ...)"
};

// Resolves request.algorithm "auto", protocol "auto" and channels 0. InputError for an override NCCL
// cannot honour here (naming what it can run).
NcclChoice resolve_request(const CollectiveRequest& request, const TopologyGraph& graph);

// NCCL's view of the request's ranks with the tuner tables of its NCCL version (request.nccl_version).
nccl::NcclSystem nccl_system_of(const TopologyGraph& graph, const CollectiveRequest& request);

// NCCL's collective for an op (ncclFunc_t); false for all_to_all and send/recv, which NCCL runs as
// point-to-point with no algorithm choice.
bool nccl_func(CollectiveOp op, nccl::Func& f);

// The registry name of NCCL's algorithm for an op ("ring", "tree", "nvls", "nvls_tree"; PAT runs as
// "ring" with a warning since no shipped system has one GPU per node across nodes).
bool is_nccl_algorithm(const std::string& name);
// NCCL's algorithms that need NCCL_COLLNET_ENABLE (IB SHARP): collnet_direct, collnet_chain, nvls_collnet.
bool is_collnet_algorithm(const std::string& name);

}  // namespace racksim
