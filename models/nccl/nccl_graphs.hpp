#pragma once
// NCCL's channel graphs for a communicator: how many channels its topology search finds for rings, trees
// and NVLS, at what per-channel bandwidth (src/graph/search.cc ncclTopoCompute, init.cc:1016-1060,
// connect.cc:452-491). racksim does not run NCCL's recursive search: on the topologies it models (GPUs on
// an NVSwitch or on PCIe under their CPU, NICs on the GPU's PCIe or on its CPU) the search reduces to
// counting how many channels fit on each link at a given speed, which this file does with the same speed
// arrays, the same order of attempts, the same acceptance and duplication rules.
#include "models/nccl/nccl_system.hpp"

namespace racksim::nccl {

enum class Pattern { ring, balanced_tree, tree, nvls };

struct Graph {
  Pattern pattern = Pattern::ring;
  int n_channels = 0;        // 0: the search found nothing (NVLS unsupported)
  double bw_intra = 0;       // GB/s per channel on intra-node links
  double bw_inter = 0;       // GB/s per channel on the network
  int type_intra = kPathNvl; // path types the channels use
  int type_inter = kPathPix;
  double latency_inter = 0;  // the NIC latency attribute (us)
  bool same_channels = true;
};

struct Graphs {
  Graph ring, tree, nvls;    // CollNet's graphs (search.cc's COLLNET patterns) are not searched: its algorithms
                             // use the tree graph (graph_of, nccl_tuner.cpp)
  int comm_channels = 0;     // comm->nChannels: 2 x min(ring, tree) channels, doubled again on Hopper+ multi-node
                             // when ring bwIntra > 45 GB/s and fewer than 16 (connect.cc:452, 483), then the
                             // user's NCCL_MIN/MAX_NCHANNELS (connect.cc:490-491)
  int default_comm_channels = 0;  // comm->nChannels without the user's limits: what NCCL's per-channel constants
                                  // were tuned against (algo_terms scales its caps by comm / default channels)
  int nvls_channels = 0;     // comm->nvlsChannels: CTAs NVLS runs on (transport/nvls.cc:148-199), 0 without NVLS
  // comm->nvlsChunkSize and NVLS-tree's largest chunk (NCCL_NVLSTREE_MAX_CHUNKSIZE's default): 128 KiB, and 64 KiB
  // from 4 nodes on (enqueue.cc at v2.29.7-1:2173-2176); from 2.30 on Blackwell across nodes, what
  // ncclNvlsTreeSm100Tuning sets (transport/nvls.cc at v2.30.7-1:161-199, 226-231).
  int nvls_chunk = kNvlsChunkSize;
  int nvls_tree_max_chunk = kNvlsChunkSize;
};

struct ChannelLimits {       // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (0: not set)
  int min_channels = 0, max_channels = 0;
};

Graphs compute_graphs(const NcclSystem& system, const ChannelLimits& limits = {});

}  // namespace racksim::nccl
