#include "models/nccl/nccl_graphs.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace racksim::nccl {

namespace {

std::span<const double> speed_array(bool inter, int compcap, TunerRelease release) {
  // search.cc:1062-1069: the array is picked by whether the system has a network and by compute capability;
  // Blackwell's by release too.
  if (inter) {
    if (compcap >= 100) return tuner_tables(release).sm100_inter_speeds;
    if (compcap >= 90) return kSpeedInterSm90;
    return kSpeedInter;
  }
  if (compcap >= 100) return tuner_tables(release).sm100_intra_speeds;
  if (compcap >= 90) return kSpeedIntraSm90;
  return kSpeedIntra;
}

// How many channels of `pattern` one node carries when each takes `intra` GB/s on the links between its
// GPUs and `inter` GB/s on a NIC, before the graph's own channel cap. This is what the recursive search
// (search.cc ncclTopoSearchRec) finds on racksim's topologies:
//  * ring / tree through an NVSwitch: every channel enters and leaves every GPU once, so a GPU's NVLink
//    bandwidth holds floor(bw / intra) channels (followPath subtracts the channel's bw per link,
//    search.cc:322-357);
//  * NVLS: channel h's head GPU pulls twice and every other GPU once in each direction
//    (ncclTopoSearchTryNvls, search.cc:386-405), so h heads fit when (h + 1) x intra <= bw;
//  * over PCIe through an Intel root complex, GPU-to-GPU traffic costs 6/5 of its bandwidth
//    (INTEL_P2P_OVERHEAD, topo.h:36; search.cc:305-312);
//  * with a network every channel enters and leaves the node through a NIC (search.cc:620-660). The NIC's
//    own speed pays the channel's bwInter truncated to an int, whatever the pattern (`const int bw =
//    graph->bwInter`, `if (net->net.bw < bw) continue`, `net.bw -= bw`, v2.28.9 search.cc:670, 680, 690;
//    the same in 2.25-2.29); the GPU's path to it pays bwInter both ways: a balanced tree sends half of it
//    from each of its first two GPUs (search.cc:610-627), which share that path. NVLS heads are one GPU
//    per NIC (search.cc:694-705).
int channels_at(const NcclSystem& s, Pattern pattern, double intra, double inter) {
  constexpr double eps = 1e-6;
  const int ngpus = s.min_local_ranks;
  int cap = 1 << 20;
  if (ngpus > 1) {
    if (s.nvswitch) {
      int per_gpu = static_cast<int>(std::floor(s.nvlink_bw / intra + eps));
      if (pattern == Pattern::nvls) per_gpu -= 1;
      cap = std::min(cap, per_gpu);
    } else {
      const bool intel_rc = s.intra_path == kPathPhb && s.cpu_isa == "x86_64" && s.cpu_vendor == "intel";
      const double need = intel_rc ? intra * 6 / 5 : intra;
      cap = std::min(cap, static_cast<int>(std::floor(s.intra_pci_bw / need + eps)));
    }
  }
  if (s.n_nodes > 1) {
    const int net_bw_per_channel = static_cast<int>(inter);
    const int per_nic_net =
        net_bw_per_channel > 0 ? static_cast<int>(std::floor(s.net_bw / net_bw_per_channel + eps)) : 1 << 20;
    int per_nic = std::min(per_nic_net, static_cast<int>(std::floor(s.gpu_nic_bw / inter + eps)));
    if (pattern == Pattern::nvls) per_nic = std::min(per_nic, 1);
    cap = std::min(cap, s.nics_per_node * per_nic);
  }
  if (pattern == Pattern::nvls) cap = std::min(cap, ngpus);
  return std::max(cap, 0);
}

// ncclTopoCompute (search.cc:991-1199) on the capacity model above.
Graph search(const NcclSystem& s, Pattern pattern, int min_channels, int max_channels) {
  Graph g;
  g.pattern = pattern;
  const bool inter = s.n_nodes > 1;
  const int ngpus = s.min_local_ranks;
  g.type_intra = ngpus == 1 ? kPathLoc : s.nvswitch ? kPathNvl : s.intra_path;
  g.type_inter = inter ? s.gpu_nic_path : kPathPix;
  g.latency_inter = inter ? s.net_latency_us : 0;
  if (pattern == Pattern::nvls) {
    // search.cc:1036-1046: NVLS needs an NVSwitch and sm90+; heads are at most 32 GPUs; inside one node
    // it must pull from every GPU (min = max channels).
    if (!s.nvls_support || ngpus < 2) return g;
    max_channels = std::min(kMaxNvlsArity, ngpus);
    if (!inter) min_channels = max_channels;
  }
  if (ngpus == 1 && pattern != Pattern::ring) pattern = g.pattern = Pattern::tree;  // search.cc:1041
  const auto speeds = speed_array(inter, s.min_compcap, s.release);
  const int nspeeds = static_cast<int>(speeds.size());
  // system->maxBw / totalBw (search.cc:17-51): the best path towards the peers (GPUs, or NICs with a
  // network) and the GPU's summed NVLink (or its PCIe) bandwidth.
  const double link_bw = s.nvswitch ? s.nvlink_bw : s.intra_pci_bw;
  double max_bw = inter ? std::min(s.gpu_nic_bw, s.net_bw) : ngpus == 1 ? kLocBw : link_bw;
  double total_bw = (!inter && ngpus == 1) ? kLocBw : std::max(link_bw, s.intra_pci_bw);
  if (total_bw <= 0) total_bw = max_bw;
  double total_scaled = total_bw;
  if (ngpus > 1 && pattern != Pattern::ring) total_scaled *= ngpus * 1.0 / (ngpus - 1);
  int idx = 0;
  while ((speeds[idx] > max_bw || speeds[idx] * min_channels > total_scaled) && idx < nspeeds - 1) ++idx;

  auto found = [&](double intra, double inter_bw) {
    int ch = std::min(channels_at(s, pattern, intra, inter_bw), max_channels);
    return ch < std::max(min_channels, 1) ? 0 : ch;
  };
  auto better = [&](int ch, double bw, const Graph& ref) {  // ncclTopoCompareGraphs, search.cc:420-437
    if (ref.n_channels == 0) return true;
    if (pattern == Pattern::nvls)
      return (ch > ref.n_channels && ch <= ngpus) || ch * bw > ref.n_channels * ref.bw_inter;
    return ch * bw > ref.n_channels * ref.bw_intra;
  };
  // Pass 1: from the fastest admissible speed down, while the next speed is more than .49 of the best.
  for (;;) {
    const int ch = found(speeds[idx], speeds[idx]);
    if (ch > 0 && better(ch, speeds[idx], g)) {
      g.n_channels = ch;
      g.bw_intra = g.bw_inter = speeds[idx];
    }
    if (g.n_channels > 0 && g.n_channels * g.bw_inter >= total_bw) break;  // search.cc:1099
    if (idx < nspeeds - 1 && (g.n_channels == 0 || speeds[idx + 1] / g.bw_inter > .49)) {
      ++idx;
      continue;
    }
    break;
  }
  if (g.n_channels == 0) {
    if (pattern == Pattern::nvls) return g;
    // search.cc:1189-1197: no path found, one channel at 0.1 GB/s through the system.
    g.n_channels = 1;
    g.bw_intra = g.bw_inter = 0.1;
    g.type_intra = g.type_inter = kPathSys;
    return g;
  }
  // Duplicate fast channels (ncclTopoDupChannels, search.cc:961-974).
  if (pattern != Pattern::nvls && g.bw_intra >= 25.0 &&
      !(s.min_compcap > 80 && g.bw_intra < 50.0 && g.n_channels > 4)) {
    const int dup = std::min(g.n_channels * 2, max_channels);
    const int div = (dup + g.n_channels - 1) / g.n_channels;
    g.bw_intra /= div;
    g.bw_inter /= div;
    g.n_channels = dup;
  }
  // Pass 2 (search.cc:1167-1186): raise the bandwidth while the same number of channels still fits.
  idx = 0;
  while (speeds[idx] > g.bw_inter && idx < nspeeds - 1) ++idx;
  while (idx > 0) {
    const double faster = speeds[idx - 1];
    if (pattern == Pattern::ring) {
      if (found(faster, faster) < g.n_channels) break;
      g.bw_intra = g.bw_inter = faster;
    } else if (pattern == Pattern::nvls) {
      if (!(g.bw_inter < g.bw_intra * 2)) break;
      if (inter && found(g.bw_intra, faster) < g.n_channels) break;
      g.bw_inter = faster;
    } else {
      if (!(g.bw_intra < g.bw_inter * 2)) break;
      if (found(faster, g.bw_inter) < g.n_channels) break;
      g.bw_intra = faster;
    }
    --idx;
  }
  return g;
}

// NCCL 2.30's NVLS tuning on Blackwell across nodes (ncclNvlsTreeSm100Tuning, transport/nvls.cc at
// v2.30.7-1:161-199): CTAs, chunk and NVLS-tree's largest chunk from the node count, the fewest GPUs a node
// has, the slowest GPU -> NIC path (comm->minNetBw, topo.cc:379-398: its links and the NIC's speed) and that
// path's type. Where none of its cases applies it leaves them as before (0: not set).
struct Sm100NvlsTuning {
  int channels = 0, chunk = 0, tree_max_chunk = 0;
};
Sm100NvlsTuning sm100_nvls_tuning(const NcclSystem& s, int gpu_to_nic_path) {
  Sm100NvlsTuning t;
  const int nodes = s.n_nodes, ppn = s.min_local_ranks;
  const double nic_bw = s.gpu_nic_bw > 0 && s.net_bw > 0 ? std::min(s.gpu_nic_bw, s.net_bw) : std::max(s.gpu_nic_bw, s.net_bw);
  t.chunk = 128 * 1024;
  if (nodes == 2 && nic_bw >= 48.0) {
    t.channels = 32;
    t.tree_max_chunk = 128 * 1024;
    if (ppn <= 4) {
      t.chunk = 256 * 1024;
      t.tree_max_chunk = 256 * 1024;
    } else if (ppn >= 16 || (ppn <= 8 && gpu_to_nic_path <= kPathPxb && nic_bw < 96.0)) {
      t.tree_max_chunk = 64 * 1024;
    }
  } else if (nic_bw >= 96.0) {
    if (ppn <= 8) {
      t.channels = 24;
      t.chunk = 256 * 1024;
      t.tree_max_chunk = 256 * 1024;
    } else {
      t.channels = 32;
      t.tree_max_chunk = ppn < 32 ? 128 * 1024 : 64 * 1024;
    }
  } else if (nic_bw >= 48.0) {
    t.channels = 24;
    t.tree_max_chunk = gpu_to_nic_path <= kPathPxb ? 64 * 1024 : 128 * 1024;
  }
  return t;
}

}  // namespace

Graphs compute_graphs(const NcclSystem& s, const ChannelLimits& limits) {
  Graphs out;
  // init.cc:1016-1060: ring first (1 .. MAXCHANNELS/2 channels), then the tree with exactly the ring's
  // channel count, then NVLS.
  out.ring = search(s, Pattern::ring, 1, kMaxChannels / 2);
  out.tree = search(s, Pattern::balanced_tree, out.ring.n_channels, out.ring.n_channels);
  if (out.tree.n_channels == 0 || out.tree.bw_intra <= 0.1) {
    // ccMin >= 90 falls back to the simpler tree pattern (search.cc:1117-1121).
    const Graph simple = search(s, Pattern::tree, out.ring.n_channels, out.ring.n_channels);
    if (simple.n_channels > 0) out.tree = simple;
  }
  out.nvls = search(s, Pattern::nvls, 1, kMaxChannels);
  // comm->nChannels (init.cc:1090, connect.cc:452, 483-491).
  int ch = std::min(out.tree.n_channels, out.ring.n_channels);
  ch = std::min(kMaxChannels, ch * 2);
  if (s.min_compcap >= 90 && s.n_nodes > 1 && out.ring.bw_intra > 45.0 && ch < 16) ch *= 2;
  out.default_comm_channels = ch;
  if (limits.max_channels > 0) ch = std::min(ch, limits.max_channels);
  if (limits.min_channels > 0) ch = std::max(ch, std::min(limits.min_channels, kMaxChannels));
  out.comm_channels = ch;
  if (out.nvls.n_channels > 0) {
    // transport/nvls.cc:185-199: 16 CTAs on Hopper; on Blackwell 24 inside one node or MNNVL domain, 32
    // when the communicator spans several.
    int nvls = s.min_compcap >= 100 ? (s.n_nodes > 1 ? kNvlsChannelsSm100 : kNvlsChannelsSm100Nvl) : kNvlsChannelsSm90;
    int chunk = 0, tree_max_chunk = 0;
    if (tuner_tables(s.release).nvls_sm100_tuning && s.min_compcap >= 100 && s.n_nodes > 1) {  // nvls.cc:216-218
      const Sm100NvlsTuning t = sm100_nvls_tuning(s, out.nvls.type_inter);
      if (t.channels > 0) nvls = t.channels;
      chunk = t.chunk;
      tree_max_chunk = t.tree_max_chunk;
    }
    if (limits.max_channels > 0) nvls = std::min(nvls, limits.max_channels);
    if (limits.min_channels > 0) nvls = std::max(nvls, std::min(limits.min_channels, kMaxChannels));
    out.nvls_channels = nvls;
    // nvls.cc at v2.30.7-1:222-231: NCCL_NVLS_CHUNKSIZE (128 KiB) where the tuning set none; NVLS-tree's
    // largest chunk 64 KiB from 4 nodes on, else the chunk (as enqueue.cc at v2.29.7-1:2174-2175 had it).
    out.nvls_chunk = chunk > 0 ? chunk : kNvlsChunkSize;
    out.nvls_tree_max_chunk = tree_max_chunk > 0 ? tree_max_chunk : (s.n_nodes >= 4 ? 65536 : out.nvls_chunk);
  }
  return out;
}

}  // namespace racksim::nccl
