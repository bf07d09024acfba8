#pragma once
// NCCL's tuner: its bandwidth and latency table per (collective, algorithm, protocol) (tuning.cc
// ncclTopoTuneModel, :230-560), its time estimate (ncclTopoGetAlgoTime, :587-600), the choice of the fastest
// enabled pair and of channels and threads (enqueue.cc topoGetAlgoInfo, :1822-1916) and the chunk size
// (enqueue.cc calcCollChunking, :1963-2085). `decide` is what `--algo auto` means in racksim: what NCCL would
// run; the overrides play NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/nccl/nccl_graphs.hpp"

namespace racksim::nccl {

inline constexpr int kNumFuncs = 5;

struct TuneTables {
  // NCCL's comm->bandwidths (GB/s of algorithm bandwidth: bus bandwidth x the algorithm's ratio) and
  // comm->latencies (us); bandwidth 0 = not available (disabled or not applicable).
  float bandwidth[kNumFuncs][kNumAlgos][kNumProtos] = {};
  float latency[kNumFuncs][kNumAlgos][kNumProtos] = {};
  int max_threads[kNumAlgos][kNumProtos] = {};
  long thread_threshold[kNumAlgos][kNumProtos] = {};
  bool tree_pattern_simple = false;  // comm->maxTreePattern == TREE (the .85 penalty, tuning.cc:309)
};

struct Overrides {
  std::vector<Algo> algos;    // empty: all (NCCL_ALGO)
  std::vector<Proto> protos;  // empty: all, LL128 where NCCL enables it by default (NCCL_PROTO)
  ChannelLimits channels;     // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS
  // NCCL_COLLNET_ENABLE=1 with the SHARP network plugin loaded (comm->config.collnetEnable): off by default,
  // as in NCCL, so `auto` never picks CollNet unless asked.
  bool collnet = false;
  // What the element type allows (the request's --dtype; every release racksim knows): NVLS reduces only
  // 32/64-bit integers, half, bfloat16, float and double (ncclNvlsSupported, device.h at v2.28.9-1:544-559,
  // applied at enqueue.cc:384), so an int8 or fp8 reduction runs neither NVLS nor NVLS-tree (an all-gather does);
  // an fp8 collective over more than 8 ranks relegates Ring behind every other algorithm (x1024,
  // enqueue.cc:1809-1815, for the precision loss of reductions, but tested on the datatype alone).
  bool nvls_reduces_type = true;
  bool fp8 = false;
};

TuneTables tune_model(const NcclSystem& system, const Graphs& graphs, const Overrides& overrides = {});

// One network step's latency for (algorithm, protocol), us: NCCL's hwLat[NET] plus the latency the net plugin
// reports (twice with Simple), or, in the timing view of a topology that names its transport, the transport's.
float net_step_latency_us(const NcclSystem& system, const Graph& graph, Algo algo, Proto proto);

// ncclTopoGetAlgoTime: NCCL's estimate in us, or -1 when the pair is unavailable.
double algo_time_us(const NcclSystem& system, const Graphs& graphs, const TuneTables& tables, Func func, Algo algo,
                    Proto proto, std::uint64_t bytes);

struct Candidate {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  double time_us = -1;        // NCCL's estimate; -1: unavailable
  std::string why_not;        // when unavailable: what disables it
};

struct Decision {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  int channels = 1;           // CTAs the collective runs on (nMaxChannels)
  int threads = 0;            // threads per CTA (nWarps x 32)
  std::uint64_t chunk_bytes = 0;  // per channel and step (calcCollChunking)
  long loops = 1;             // loop iterations per channel
  int nvls_heads = 0;         // NVLS / NVLS-tree: head GPUs (channels of the NVLS graph)
  double nccl_time_us = 0;    // NCCL's own estimate for the pick
  std::vector<Candidate> candidates;  // every pair NCCL considers for this collective, in its order
};

// `bytes` is NCCL's nBytes: the larger of the send and receive buffers of one rank (all_reduce: the buffer;
// all_gather: the gathered output; reduce_scatter: the input). InputError when the overrides leave nothing
// that can run (listing what could).
Decision decide(const NcclSystem& system, const Graphs& graphs, const TuneTables& tables, Func func,
                std::uint64_t bytes, const Overrides& overrides = {});

// Everything in one call (system -> graphs -> tables -> decision).
Decision decide(const NcclSystem& system, Func func, std::uint64_t bytes, const Overrides& overrides = {});

Algo algo_from_string(const std::string& text);     // "ring", "tree", "nvls", "nvls_tree", "pat", "collnet_direct", "collnet_chain"
Proto proto_from_string(const std::string& text);   // "LL", "LL128", "Simple" (any case)
std::string algo_key(Algo a);                        // racksim's name: "ring", "nvls_tree", ...

}  // namespace racksim::nccl

namespace racksim::nccl {

// What racksim's cost models and engine take from NCCL's tuner for one (collective, algorithm, protocol):
// NCCL's latency terms split into the collective's fixed part and its per-step part by hop type, and the
// explicit bandwidth limits NCCL's model applies on top of the links (per-channel caps measured by NVIDIA:
// perChMax* and llMaxBws, tuning.cc:169-198; the NVLS head/efficiency structure, tuning.cc:285-300).
struct AlgoTerms {
  double launch_us = 0;         // once per collective (baseLat, plus NVLS' switch round trip)
  double intra_step_us = 0;     // per dependent step inside a node (hwLat NVLink or PCI)
  double net_step_us = 0;       // per step that crosses the network (hwLat NET + the NIC's latency, x2 Simple)
  double payload_fraction = 1;  // protocol: LL 0.5 (half of each line is flags, tuning.cc:304), LL128 0.92 (:305)
  double algbw_cap_GBps = 0;    // NCCL's explicit cap as algorithm bandwidth, 0 = none
  std::string cap_source;       // which constant limits ("perChMaxTreeBw Blackwell N4 24 GB/s x 16 channels")
};
AlgoTerms algo_terms(const NcclSystem& system, const Graphs& graphs, Func func, Algo algo, Proto proto);

}  // namespace racksim::nccl
