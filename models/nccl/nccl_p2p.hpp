#pragma once
// How NCCL 2.28.9 splits a group of point-to-point operations (an all-to-all: one send and one receive per
// peer) over its channels, from src/graph/paths.cc (the communicator's p2p channels), src/init.cc (the chunk)
// and src/enqueue.cc (each operation's channels). Plain arithmetic on NcclSystem and Graphs, like the tuner.
//
// Why it matters for time: each (peer, channel) part is its own pipeline of chunk-sized steps, and one such
// pipeline moves data at a bounded rate, whatever the link could carry (the CTA's copy loop and its flag
// handshake per step). NCCL stripes a peer's bytes over more channels only as they grow (enqueue.cc:891-900),
// so an all-to-all of 64 MiB on 8 GPUs runs 28 pipelines per GPU and one of 4 GiB 224: measured all-to-all
// bus bandwidth rises by 10-25 % between them on H100 and GB300 where the links' share per GPU is the same
// (docs/model.md, all_to_all).
#include "models/nccl/nccl_graphs.hpp"
#include "models/nccl/nccl_system.hpp"

namespace racksim::nccl {

inline constexpr int kMaxP2pOpsPerChannelBatch = 8;    // NCCL_MAX_DEV_WORK_P2P_PER_BATCH, device.h:364
inline constexpr long kP2pNetChunkBytes = 1L << 17;   // NCCL_P2P_NET_CHUNKSIZE default, init.cc:704
inline constexpr long kP2pPciChunkBytes = 1L << 17;   // NCCL_P2P_PCI_CHUNKSIZE default, init.cc:705
inline constexpr long kP2pNvlChunkBytes = 1L << 19;   // NCCL_P2P_NVL_CHUNKSIZE default, init.cc:706

struct P2pPlan {
  int p2p_channels = 1;            // comm->p2pnChannels (paths.cc:866-885)
  int channels_per_peer = 1;       // comm->p2pnChannelsPerPeer (paths.cc:870-886): nChannelsMax of enqueue.cc
  int min_channels_per_op = 1;     // nChannelsMin (enqueue.cc:1053-1056): all channels, one per operation
  long chunk_bytes = 0;            // comm->p2pChunkSize (init.cc:716-718): Simple's step
  int op_channels = 0;             // channels one operation of `bytes_per_peer` is striped over (enqueue.cc:891-900)
  // Pipelines a GPU runs at once: its n - 1 operations x op_channels, up to 8 operations per channel at a
  // time (enqueue.cc:961-965: each channel runs up to NCCL_MAX_DEV_WORK_P2P_PER_BATCH tasks concurrently).
  int concurrent_pipelines = 0;
};

// The plan of an all-to-all among s.n_ranks ranks sending `bytes_per_peer` to each peer, on the communicator
// whose channel graphs are `g`. n_ranks < 2: an empty plan (no pipelines).
P2pPlan p2p_plan(const NcclSystem& s, const Graphs& g, double bytes_per_peer);

}  // namespace racksim::nccl
