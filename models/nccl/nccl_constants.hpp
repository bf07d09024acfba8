#pragma once
// NCCL 2.28.9's tuning constants, copied with the file and line they come from (tag v2.28.9-1 of
// github.com/NVIDIA/nccl; the device machine this project calibrates on runs NCCL 2.28). racksim's model of
// what NCCL runs (nccl_graphs, nccl_tuner) uses these and nothing else for its decisions; what calibration
// then corrects is in sim/calib. Units as NCCL has them: bandwidths in GB/s (1e9 B/s), latencies in us.
#include <array>
#include <span>

namespace racksim::nccl {

// Algorithms and protocols in NCCL's own order (src/include/plugin/nccl_tuner.h:26-38: NCCL_ALGO_TREE 0 .. PAT 6;
// NCCL_PROTO_LL 0, LL128 1, SIMPLE 2), so the tables below index like NCCL's.
enum class Algo { tree = 0, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat };
enum class Proto { ll = 0, ll128, simple };
inline constexpr int kNumAlgos = 7;
inline constexpr int kNumProtos = 3;
// NCCL's collective functions that have algorithms (ncclFunc_t order: Broadcast, Reduce, AllGather,
// ReduceScatter, AllReduce). all_to_all and send/recv are point-to-point in NCCL: no algorithm choice.
enum class Func { broadcast = 0, reduce, all_gather, reduce_scatter, all_reduce };

const char* to_string(Algo a);   // NCCL's names: "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"
const char* to_string(Proto p);  // "LL", "LL128", "Simple"

// Compute-capability index of the per-architecture tables (tuning.cc:249).
enum CompCapIndex { kVolta = 0, kAmpere = 1, kHopper = 2, kBlackwell = 3 };
inline int compcap_index(int min_compcap) {
  return min_compcap >= 100 ? kBlackwell : min_compcap >= 90 ? kHopper : min_compcap >= 80 ? kAmpere : kVolta;
}

// Per-link NVLink bandwidth NCCL assumes, GB/s (src/graph/topo.h:16-21; topo.h:276 picks it by compute
// capability). A GPU's NVLink bandwidth to the NVSwitch is links x this.
inline double nvlink_bw_per_link(int compcap) {
  if (compcap >= 100) return 40.1;  // SM100_NVLINK_BW, topo.h:21
  if (compcap >= 90) return 20.6;   // SM90_NVLINK_BW, topo.h:19
  if (compcap == 86) return 12.0;   // SM86_NVLINK_BW, topo.h:20
  if (compcap >= 80) return 20.0;   // SM80_NVLINK_BW, topo.h:18
  if (compcap >= 70) return 20.0;   // SM70_NVLINK_BW, topo.h:17
  return 18.0;                      // SM60_NVLINK_BW, topo.h:16
}
inline constexpr double kLocBw = 5000.0;  // LOC_BW, topo.h:15 (a GPU alone in its node)
// PCIe link bandwidth NCCL reads from sysfs: width x speed / 80 GB/s with speed per lane in 100 Mb/s
// (topo.cc:489-491, kvDictPciGen topo.cc:423-425): Gen4 x16 = 24, Gen5 x16 = 48, Gen6 x16 = 96.
inline double pcie_bw(int gen, int width) {
  const int speed = gen >= 6 ? 480 : gen == 5 ? 240 : gen == 4 ? 120 : gen == 3 ? 60 : 30;
  return width * speed / 80.0;
}
// Network bandwidth: the NIC's speed in Mb/s / 8000 (topo.cc:373): 400 Gb/s -> 50 GB/s.
inline double net_bw_from_gbps(double gbit_per_s) { return gbit_per_s * 1000.0 / 8000.0; }

// NCCL's path types (topo.h:62-98), closest first.
enum PathType { kPathLoc = 0, kPathNvl = 1, kPathNvb = 2, kPathC2c = 3, kPathPix = 4, kPathPxb = 5, kPathP2c = 6,
                kPathPxn = 7, kPathPhb = 8, kPathSys = 9, kPathNet = 10, kPathDis = 11 };
const char* path_type_name(int type);  // "NVL", "PIX", "P2C", ... (topo.cc:26)

// Search speeds, GB/s per channel (search.cc:976-987): intra-node graphs, then graphs with a network.
inline constexpr std::array<double, 13> kSpeedIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
inline constexpr std::array<double, 19> kSpeedInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                                       7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 11> kSpeedIntraSm90 = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
inline constexpr std::array<double, 17> kSpeedInterSm90 = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                           15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 11> kSpeedIntraSm100 = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
inline constexpr std::array<double, 12> kSpeedIntraSm100V2_29 = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                                                40.0, 30.0, 24.0, 20.0, 19.0, 18.0};  // search.cc at v2.29.7-1:987
inline constexpr std::array<double, 17> kSpeedInterSm100V2_27 = {47.9, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                                15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};  // search.cc at v2.27.3-1:913
inline constexpr std::array<double, 18> kSpeedInterSm100 = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                                            17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 19> kSpeedInterSm100V2_29 = {96.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0,
                                                                24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                                                3.0,  2.4,  1.2,  0.24, 0.12};  // search.cc at v2.29.7-1:988
inline constexpr std::array<double, 20> kSpeedInterSm100V2_30 = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                                                30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                                6.0,  3.0,  2.4,  1.2,  0.24, 0.12};  // search.cc at v2.30.7-1:1064-1065

inline constexpr int kMaxChannels = 64;          // MAXCHANNELS, device.h:86; rings search up to half (init.cc:1019)
inline constexpr int kMaxNvlsArity = 32;         // NCCL_MAX_NVLS_ARITY, device.h:207
inline constexpr int kMaxDirectArity = 7;        // NCCL_MAX_DIRECT_ARITY, device.h at v2.28.9-1:193: CollNet's heads per node - 1
inline constexpr int kMaxNvlsTreeArity = 3;      // NCCL_MAX_NVLS_TREE_ARITY, device.h:208
inline constexpr int kNvlsChannelsSm90 = 16;     // NVLS_NCHANNELS_SM90, transport/nvls.cc:148
inline constexpr int kNvlsChannelsSm100 = 32;    // NVLS_NCHANNELS_SM100 (multi-node), nvls.cc:149
inline constexpr int kNvlsChannelsSm100Nvl = 24; // NVLS_NCHANNELS_SM100_NVL (one node or MNNVL domain), nvls.cc:150
inline constexpr int kNvlsChunkSize = 128 * 1024;  // NCCL_NVLS_CHUNKSIZE default, nvls.cc:153

// Threads and buffers (device.h, comm.h, init.cc, collectives.h).
inline constexpr int kWarpSize = 32;
inline constexpr int kSteps = 8;                     // NCCL_STEPS, device.h:24
inline constexpr int kMaxNthreads = 640;             // NCCL_MAX_NTHREADS, device.h:88
inline constexpr int kSimpleMaxNthreads = 512;       // NCCL_SIMPLE_MAX_NTHREADS, device.h:90
inline constexpr int kLlMaxNthreads = 512;           // NCCL_LL_MAX_NTHREADS, device.h:92
inline constexpr int kLl128MaxNthreads = 640;        // NCCL_LL128_MAX_NTHREADS, device.h:109
inline constexpr int kLlThreadThreshold = 8;         // NCCL_LL_THREAD_THRESHOLD, comm.h:41
inline constexpr int kLl128ThreadThreshold = 8;      // NCCL_LL128_THREAD_THRESHOLD, comm.h:42
inline constexpr int kSimpleThreadThreshold = 64;    // NCCL_SIMPLE_THREAD_THRESHOLD, comm.h:43
// Buffer per protocol and connection (init.cc:697-699): LL 8 lines x 512 threads x 8 steps x 16 B;
// LL128 120 elements x 640 threads x 8 steps x 8 B; Simple 4 MiB.
inline constexpr long kLlBuffSize = 8L * 512 * 8 * 16;
inline constexpr long kLl128BuffSize = 120L * 640 * 8 * 8;
inline constexpr long kSimpleBuffSize = 1L << 22;
inline constexpr int kAllReduceChunkSteps = kSteps / 2;  // ALLREDUCE_CHUNKSTEPS, collectives.h:18
inline constexpr int kAllReduceSliceSteps = kSteps / 4;  // ALLREDUCE_SLICESTEPS, collectives.h:17
inline constexpr int kLl128LineElems = 16;               // NCCL_LL128_LINESIZE 128 B / 8 (device.h:106)
inline constexpr int kLl128DataElems = 15;               // one of 16 words is a flag (device.h:107)

// The tuner's constants (tuning.cc:133-199). Latencies in us, bandwidths in GB/s.
inline constexpr std::array<float, 4> kNvlsEfficiency = {0.0f, 0.0f, 0.85f, 0.74f};  // tuning.cc:134-139
enum HwType { kHwNvlink = 0, kHwPci = 1, kHwNet = 2 };

// The tuner's tables of one NCCL release. NCCL 2.25.1 to 2.27.x have one set (tuning.cc of v2.25.1-1 and
// v2.27.3-1 differ only in error handling there); 2.28 lowered Blackwell's Tree and LL128 caps, raised
// NVLS-tree's network latency and priced NVLS by nvlsEfficiency (below); 2.29 set Blackwell's ring LL128 cap to
// 40 GB/s per channel, corrects NVLS-tree's estimate by size on x86 Blackwell as the Tree's, and searches two
// more speeds (tuning.cc and search.cc at v2.29.7-1); 2.30 raised Blackwell's NVLS-tree cap beyond two nodes, added a
// speed and tunes NVLS's CTAs and chunks on Blackwell across nodes (v2.30.7-1). Later releases (2.31: no source
// here) take 2.30's.
// v2_26 (2.25 and 2.26) takes 2.27's tables; what sets it apart is the path a NIC behind a C2C-attached CPU
// gets (NcclSystem::gpu_nic_path): 2.27 added PATH_P2C (topo.h at v2.27.3-1:83), 2.26 had none (topo.h at
// v2.26.2-1:59-92), so GB200's GPU -> C2C -> Grace -> PCIe -> CX-7 path was PHB and LL128 stayed off across nodes.
enum class TunerRelease { v2_26 = 0, v2_27 = 1, v2_28 = 2, v2_29 = 3, v2_30 = 4 };
struct TunerTables {
  float base_lat[kNumAlgos][kNumProtos];    // baseLatencies[algo][proto]
  float hw_lat[3][kNumAlgos][kNumProtos];   // hwLatencies[hw][algo][proto]
  // [compcap index or CPU index][node index: 1 node, 2 nodes, more]
  double ll_max_bw[4][3];
  double per_ch_max_ring_ll128_bw[4][3];
  double per_ch_max_tree_ll128_bw[4][3];
  double per_ch_max_tree_bw[4][3];
  double per_ch_max_nvls_tree_bw[4][3];     // 2.28 on; 2.27 has no per-channel NVLS-tree figure (0: none)
  // 2.28: NVLS's bus bandwidth per channel is bwIntra x nvlsEfficiency x (heads - 1) / heads (x 2 for
  // all-reduce), NVLS-tree's also bounded by bwInter (x 2 on two nodes) and perChMaxNVLSTreeBw, and both turn
  // bus into algorithm bandwidth with nRanks / nsteps (tuning.cc:285-300, 345-347). 2.27: NVLS all-reduce
  // min(bwIntra, bwInter), all-gather / reduce-scatter min(bwIntra (ppn - 1) / ppn, 0.9 bwInter), NVLS-tree
  // min(bwIntra, bwInter, or bwInter / 2 beyond two nodes), both x 5/6 (tuning.cc at v2.27.3-1:265-275, 324).
  bool nvls_efficiency_model;
  // search.cc's speeds for Blackwell graphs inside a node and with a network: 2.27's network speeds start at
  // 47.9 (search.cc at v2.27.3-1:912-913), 2.28's at 96 and 48 (search.cc:986-987), 2.29 adds 45 inside and 80
  // with a network (search.cc at v2.29.7-1:987-988).
  std::span<const double> sm100_intra_speeds;
  std::span<const double> sm100_inter_speeds;
  // 2.29: NVLS-tree all-reduce's bandwidth is corrected by size like the Tree's on sm100+ with an x86 CPU
  // (tuning.cc at v2.29.7-1:596).
  bool nvls_tree_size_correction_x86_sm100;
  // 2.30: NVLS's CTAs, chunk and NVLS-tree's largest chunk on Blackwell across nodes follow the node count,
  // the GPUs per node, the NIC's speed and the GPU's path to it (ncclNvlsTreeSm100Tuning, transport/nvls.cc at
  // v2.30.7-1:161-199; NvlsTuning in nccl_graphs.hpp).
  bool nvls_sm100_tuning;
};

// NCCL 2.28.9: tuning.cc:143-199.
inline constexpr TunerTables kTunerV2_28 = {
    {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0f, 8.0f, 8.0f}},
    {{{.6f, 1.25f, 4.0f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0f}},
     {{1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0f}},
     {{5.0f, 8.5f, 14}, {2.7f, 4.0f, 14.0f}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9f}, {0, 0, 14}}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {2 * 36.7, 34.6, 2 * 36.7}},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}},
    true,
    kSpeedIntraSm100,
    kSpeedInterSm100,
    false,
    false};

// NCCL 2.29.7 (tuning.cc and search.cc at v2.29.7-1): 2.28.9's tables with the four things 2.29 changed.
constexpr TunerTables tuner_v2_29_from(TunerTables t) {
  for (double& cap : t.per_ch_max_ring_ll128_bw[3]) cap = 40.0;  // Blackwell {40, 40, 40} (:180)
  t.sm100_intra_speeds = kSpeedIntraSm100V2_29;                    // search.cc:987
  t.sm100_inter_speeds = kSpeedInterSm100V2_29;                    // search.cc:988
  t.nvls_tree_size_correction_x86_sm100 = true;                   // :596
  return t;
}
inline constexpr TunerTables kTunerV2_29 = tuner_v2_29_from(kTunerV2_28);

// NCCL 2.30.7 (tuning.cc, search.cc and transport/nvls.cc at v2.30.7-1): 2.29.7's tables with what 2.30 changed
// there (the rest of tuning.cc is reformatted, not changed).
constexpr TunerTables tuner_v2_30_from(TunerTables t) {
  t.per_ch_max_nvls_tree_bw[3][2] = 80.0;        // Blackwell beyond two nodes, 43.8 in 2.28-2.29 (tuning.cc:211)
  t.sm100_inter_speeds = kSpeedInterSm100V2_30;  // 86 between 96 and 80 (search.cc:1064-1065)
  t.nvls_sm100_tuning = true;                    // transport/nvls.cc:161-199, 216-218
  return t;
}
inline constexpr TunerTables kTunerV2_30 = tuner_v2_30_from(kTunerV2_29);

// NCCL 2.25.1-2.27.x: tuning.cc at v2.27.3-1: baseLat :134-137 (PAT's 8 us in its latency formula),
// hwLat :143-156 (no PAT row: 0), llMaxBws :165-170, perChMaxRingLL128Bws :172-177, perChMaxTreeLL128Bws
// :178-183, perChMaxTreeBws :184-189 (Blackwell = 2 x Hopper throughout).
inline constexpr TunerTables kTunerV2_27 = {
    {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0f, 8.0f, 8.0f}},
    {{{.6f, 1.25f, 4.0f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25}, {0, 0, 25}, {0, 0, 0}},
     {{1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{5.0f, 8.5f, 14}, {2.7f, 4.0f, 14.0f}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {2 * 36.7, 2 * 36.7, 2 * 36.7}},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {2 * 36.7, 2 * 36.7, 2 * 29.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {2 * 38.7, 2 * 41.4, 2 * 36.0}},
    {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    false,
    kSpeedIntraSm100,
    kSpeedInterSm100V2_27,
    false,
    false};

inline const TunerTables& tuner_tables(TunerRelease r) {
  switch (r) {
    case TunerRelease::v2_26:
    case TunerRelease::v2_27: return kTunerV2_27;
    case TunerRelease::v2_28: return kTunerV2_28;
    case TunerRelease::v2_29: return kTunerV2_29;
    case TunerRelease::v2_30: return kTunerV2_30;
  }
  return kTunerV2_28;
}
const char* release_name(TunerRelease r);  // "2.26", "2.27", "2.28", "2.29", "2.30" (2.26 with 2.27's tables)

// Tree correction by log2(bytes / 64), 64 B .. 512 MiB, per protocol (tuning.cc:578-582; 2.29 adds the 24th
// entry, tuning.cc at v2.29.7-1:581-585). The Tree reads the first 23 in every release, NVLS-tree all 24.
inline constexpr float kTreeCorrection[kNumProtos][24] = {
    {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f, .4f, .4f, .5f, .6f, .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f},
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f, .6f, .6f, .6f, .6f, .8f, .9f, .9f, .9f, .9f, 1.0f, 1.0f, 1.0f},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f, .9f}};

}  // namespace racksim::nccl
