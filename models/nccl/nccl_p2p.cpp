#include "models/nccl/nccl_p2p.hpp"

#include <algorithm>
#include <cmath>

namespace racksim::nccl {

namespace {
int pow2_up(int v) {
  int r = 1;
  while (r < v) r <<= 1;
  return r;
}
}  // namespace

P2pPlan p2p_plan(const NcclSystem& s, const Graphs& g, double bytes_per_peer) {
  P2pPlan p;
  const int n = s.n_ranks;
  if (n < 2) return p;
  // p2pnChannels: the collective channels, within NCCL_MIN/MAX_P2P_NCHANNELS (1, MAXCHANNELS), as a power of
  // two (paths.cc:866-867, 883, 885).
  int p2p = std::clamp(g.comm_channels, 1, kMaxChannels);
  // Channels per peer: the fewest any peer gets (paths.cc:870-878). An NVLink peer 2 x its links
  // (paths.cc:829-831), a PCIe peer 2 (833), a peer across the network 2 per NIC, halved while
  // 2 x nRanks > 4 x p2pnChannels, but at least the NICs needed to drive the GPU's bandwidth (837-849).
  int min_peer = p2p;
  if (s.max_local_ranks > 1) {
    const double per_link = nvlink_bw_per_link(s.min_compcap);
    const int intra = s.intra_path == kPathNvl ? 2 * std::max(1, static_cast<int>(s.nvlink_bw / per_link)) : 2;
    min_peer = std::min(min_peer, intra);
  }
  if (s.n_nodes > 1) {
    int net = 2;
    while (net * n > p2p * 4 && net > 1) net /= 2;
    // getLocalNetCountByBw (topo.cc:1576-1594): the GPU's own NICs, as many as its bandwidth needs; racksim
    // counts the NICs of a node per GPU.
    const int nics_per_gpu = std::max(1, s.nics_per_node / std::max(1, s.max_local_ranks));
    min_peer = std::min(min_peer, std::max(nics_per_gpu, net));
  }
  p.channels_per_peer = pow2_up(min_peer);
  p.p2p_channels = pow2_up(p2p);
  p.channels_per_peer = std::min(p.channels_per_peer, p.p2p_channels);
  // nChannelsMin: all channels, one per operation (enqueue.cc:1054-1056).
  p.min_channels_per_op = p.channels_per_peer;
  while (p.min_channels_per_op * n > p.p2p_channels && p.min_channels_per_op > 1) p.min_channels_per_op /= 2;
  // The chunk: across nodes the network's, else NVLink's or PCIe's (init.cc:716-718); NCCL's default Simple
  // buffer (4 MiB, 8 steps) holds all three (init.cc:721).
  p.chunk_bytes = s.n_nodes > 1 ? kP2pNetChunkBytes : s.intra_path == kPathNvl ? kP2pNvlChunkBytes : kP2pPciChunkBytes;
  // One operation's channels (enqueue.cc:891-900): a part of at least half a chunk across nodes (an eighth
  // inside one), at most one chunk across nodes (32 inside one), doubling the channels while a part is larger
  // and the doubling stays within nChannelsMax.
  const double min_part = s.n_nodes > 1 ? p.chunk_bytes / 2.0 : p.chunk_bytes / 8.0;
  const double max_part = s.n_nodes > 1 ? static_cast<double>(p.chunk_bytes) : p.chunk_bytes * 32.0;
  if (bytes_per_peer <= 0) {
    p.op_channels = 1;
  } else {
    p.op_channels = static_cast<int>(std::min<double>(p.min_channels_per_op, std::ceil(bytes_per_peer / min_part)));
    double part = std::max(min_part, std::ceil(bytes_per_peer / p.op_channels));
    while (part > max_part && p.op_channels <= p.channels_per_peer / 2) {
      p.op_channels *= 2;
      part = std::ceil(bytes_per_peer / p.op_channels);
    }
  }
  p.concurrent_pipelines =
      std::min((n - 1) * p.op_channels, p.p2p_channels * kMaxP2pOpsPerChannelBatch);
  return p;
}

}  // namespace racksim::nccl
