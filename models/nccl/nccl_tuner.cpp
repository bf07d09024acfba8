#include "models/nccl/nccl_tuner.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "sim/core/errors.hpp"

namespace racksim::nccl {

namespace {

int log2i(long n) {  // NCCL's log2i: floor(log2(n)), 0 for n <= 1
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

const Graph& graph_of(const Graphs& g, Algo a) {
  switch (a) {
    case Algo::ring: return g.ring;
    case Algo::nvls:
    case Algo::nvls_tree: return g.nvls;
    default: return g.tree;  // tree, PAT (init.cc:854: PAT uses the tree graph); CollNet unused
  }
}

bool contains_algo(const std::vector<Algo>& v, Algo a) { return v.empty() || std::find(v.begin(), v.end(), a) != v.end(); }
bool contains_proto(const std::vector<Proto>& v, Proto p) { return v.empty() || std::find(v.begin(), v.end(), p) != v.end(); }

// PAT needs one GPU per node and no network offload (tuning.cc:201-209).
bool pat_enabled(const NcclSystem& s) { return s.min_compcap >= 60 && s.n_nodes == s.n_ranks; }

// tuning.cc:214-220: network post overhead in us.
float net_overhead(const NcclSystem& s) {
  if (s.cpu_isa == "x86_64" && s.cpu_vendor == "amd") return 2.0f;
  return 1.0f;
}

}  // namespace

std::string algo_key(Algo a) {
  static const char* keys[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  return keys[static_cast<int>(a)];
}

Algo algo_from_string(const std::string& text) {
  if (text == "nvls_collnet") return Algo::nvls;  // NCCL's NVLS across nodes, over CollNet (racksim's name)
  for (int a = 0; a < kNumAlgos; ++a) {
    std::string name = to_string(static_cast<Algo>(a)), lower;
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (text == algo_key(static_cast<Algo>(a)) || text == name || text == lower) return static_cast<Algo>(a);
  }
  throw InputError("--algo", "", "'" + text + "'", "one of ring, tree, nvls, nvls_tree, pat, collnet_direct, collnet_chain");
}

Proto proto_from_string(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "ll") return Proto::ll;
  if (lower == "ll128") return Proto::ll128;
  if (lower == "simple") return Proto::simple;
  throw InputError("--protocol", "", "'" + text + "'", "one of LL, LL128, Simple (or auto)");
}

// One network step's latency (tuning.cc:352-357): hwLat[NET] of the algorithm (the tree's with one rank per
// node) plus the latency the net plugin reports (graph latencyInter), twice with Simple. In the timing view
// of a system whose topology names its transport (scale_out.transport), the transport's own figure instead:
// the plugin's reported latency steers NCCL's choice, as its authors mean it (aws-ofi-nccl's tuner models EFA
// at 20 us a step while its net plugin reports 75 to NCCL), and is not a time.
float net_step_latency_us(const NcclSystem& s, const Graph& gr, Algo a, Proto p) {
  const int pi = static_cast<int>(p);
  if (s.timing && s.transport_step_us)
    return static_cast<float>(*s.transport_step_us + (p == Proto::simple ? s.transport_simple_overhead_us : 0.0));
  const TunerTables& T = tuner_tables(s.release);
  float lat = s.ppn() == 1 ? T.hw_lat[kHwNet][int(Algo::tree)][pi] : T.hw_lat[kHwNet][static_cast<int>(a)][pi];
  lat += static_cast<float>(gr.latency_inter) * (p == Proto::simple ? 2 : 1);
  return lat;
}

TuneTables tune_model(const NcclSystem& s, const Graphs& g, const Overrides& ov) {
  TuneTables t;
  const int n_ranks = s.n_ranks, n_nodes = s.n_nodes;
  // Threads (tuning.cc:230-243): Simple rings get 256 threads when the ring is slower than PCIe Gen3.
  const int simple_default = g.ring.bw_intra * g.ring.n_channels <= 12.0 ? 256 : kSimpleMaxNthreads;
  t.max_threads[int(Algo::ring)][int(Proto::simple)] = simple_default;
  t.max_threads[int(Algo::tree)][int(Proto::simple)] = kSimpleMaxNthreads;
  for (Algo a : {Algo::collnet_direct, Algo::collnet_chain, Algo::nvls, Algo::nvls_tree})
    t.max_threads[int(a)][int(Proto::simple)] = kMaxNthreads;
  for (Algo a : {Algo::ring, Algo::tree}) {
    t.max_threads[int(a)][int(Proto::ll)] = kLlMaxNthreads;
    t.max_threads[int(a)][int(Proto::ll128)] = kLl128MaxNthreads;
  }
  t.max_threads[int(Algo::pat)][int(Proto::simple)] = kMaxNthreads;
  // Thread thresholds (tuning.cc:524-532).
  for (int a = 0; a < kNumAlgos; ++a) {
    t.thread_threshold[a][int(Proto::ll)] = kLlThreadThreshold;
    t.thread_threshold[a][int(Proto::ll128)] = kLl128ThreadThreshold;
    t.thread_threshold[a][int(Proto::simple)] = kSimpleThreadThreshold;
  }
  t.thread_threshold[int(Algo::ring)][int(Proto::ll)] *= n_ranks;
  t.thread_threshold[int(Algo::collnet_direct)][int(Proto::simple)] = 512;
  t.thread_threshold[int(Algo::collnet_chain)][int(Proto::simple)] = 512;
  if (n_ranks <= 1) return t;

  const int cc = compcap_index(s.min_compcap);
  const int index2 = n_nodes <= 2 ? n_nodes - 1 : 2;                                   // tuning.cc:250
  const int index1 = n_nodes == 1 ? cc : (s.cpu_vendor == "amd" ? 1 : 0);              // tuning.cc:252
  const TunerTables& T = tuner_tables(s.release);
  const double ll_max_bw = T.ll_max_bw[index1][index2];
  const double per_ch_tree = T.per_ch_max_tree_bw[cc][index2];
  const double per_ch_ring_ll128 = T.per_ch_max_ring_ll128_bw[cc][index2];
  const double per_ch_tree_ll128 = T.per_ch_max_tree_ll128_bw[cc][index2];
  const double per_ch_nvls_tree = T.per_ch_max_nvls_tree_bw[cc][index2];
  const float ppn = static_cast<float>(n_ranks) / n_nodes;
  t.tree_pattern_simple = g.tree.pattern == Pattern::tree;

  int intra_hw[kNumAlgos], hw[kNumAlgos];
  for (int a = 0; a < kNumAlgos; ++a) {
    intra_hw[a] = graph_of(g, static_cast<Algo>(a)).type_intra == kPathNvl ? kHwNvlink : kHwPci;
    hw[a] = n_nodes == 1 ? intra_hw[a] : kHwNet;
  }
  for (int coll = 0; coll < kNumFuncs; ++coll) {
    const Func f = static_cast<Func>(coll);
    const bool rs_ag = f == Func::reduce_scatter || f == Func::all_gather;
    const int nsteps = f == Func::all_reduce ? 2 * (n_ranks - 1) : rs_ag ? n_ranks - 1 : n_ranks;
    for (int ai = 0; ai < kNumAlgos; ++ai) {
      const Algo a = static_cast<Algo>(ai);
      const Graph& gr = graph_of(g, a);
      if ((f == Func::broadcast || f == Func::reduce) && a != Algo::ring) continue;
      if (rs_ag && a != Algo::pat && a != Algo::ring && a != Algo::nvls && a != Algo::collnet_direct) continue;
      if (f == Func::all_reduce && a == Algo::pat) continue;
      for (int pi = 0; pi < kNumProtos; ++pi) {
        const Proto p = static_cast<Proto>(pi);
        if ((a == Algo::nvls || a == Algo::nvls_tree) && p != Proto::simple) continue;
        if (rs_ag && a == Algo::pat && (p != Proto::simple || !pat_enabled(s))) continue;
        const bool collnet = a == Algo::collnet_direct || a == Algo::collnet_chain;
        float bw = static_cast<float>(n_nodes <= 2 || collnet ? gr.bw_intra : gr.bw_inter);
        if ((a == Algo::nvls || a == Algo::nvls_tree) && !T.nvls_efficiency_model) {
          // NCCL 2.25-2.27 (tuning.cc at v2.27.3-1:265-275).
          if (a == Algo::nvls)
            bw = f == Func::all_reduce ? static_cast<float>(std::min(gr.bw_intra, gr.bw_inter))
                                       : static_cast<float>(std::min(gr.bw_intra * (ppn - 1.0) / ppn, gr.bw_inter * 0.9));
          else
            bw = static_cast<float>(std::min(gr.bw_intra, n_nodes <= 2 ? gr.bw_inter : gr.bw_inter / 2));
        } else if (a == Algo::nvls || a == Algo::nvls_tree) {
          if (gr.n_channels < 2) continue;  // tuning.cc:286
          // tuning.cc:289-300: NVLS bus bandwidth per channel.
          float intra_bw = static_cast<float>(gr.bw_intra * kNvlsEfficiency[cc] * (gr.n_channels - 1) / gr.n_channels);
          if (f == Func::all_reduce) intra_bw *= 2.0f;
          else intra_bw *= (ppn - 1) / ppn;
          const float inter_bw = static_cast<float>(gr.bw_inter * ((n_nodes <= 2 && a == Algo::nvls_tree) ? 2 : 1));
          bw = std::min({intra_bw, inter_bw,
                         a == Algo::nvls_tree ? static_cast<float>(per_ch_nvls_tree) : std::numeric_limits<float>::max()});
        }
        float bus_bw = gr.n_channels * bw;
        // Refinements, tuning.cc:304-310.
        if (a == Algo::ring && p == Proto::ll) bus_bw = std::min(static_cast<float>(ll_max_bw), bus_bw * .5f);
        if (a == Algo::ring && p == Proto::ll128)
          bus_bw = std::min(bus_bw * 0.92f, static_cast<float>(gr.n_channels * per_ch_ring_ll128));
        if (a == Algo::tree && f == Func::all_reduce) bus_bw = std::min(bus_bw * .92f, static_cast<float>(gr.n_channels * per_ch_tree));
        if (a == Algo::tree && p == Proto::ll) bus_bw = std::min(bus_bw * 1.0f / 3.8f, static_cast<float>(ll_max_bw));
        if (a == Algo::tree && p == Proto::ll128)
          bus_bw = std::min(bus_bw * (n_nodes == 1 ? 7.0f / 9.0f : 120.0f / 128.0f), static_cast<float>(gr.n_channels * per_ch_tree_ll128));
        if (a == Algo::tree && t.tree_pattern_simple) bus_bw *= .85f;
        if (a == Algo::pat) bus_bw *= .75f;
        if (collnet && p != Proto::simple) bus_bw = 0;  // tuning.cc:338-339: Simple only
        if (a == Algo::collnet_direct && p == Proto::simple) {
          if (rs_ag) {
            // tuning.cc:341-342: heads x min(bwIntra, 0.9 bwInter)
            bus_bw = ppn * std::min(static_cast<float>(gr.bw_intra), static_cast<float>(gr.bw_inter) * 0.9f);
          } else {
            // tuning.cc:344-348: full speed needs a NIC per GPU; Hopper and later x 0.85
            float factor = ppn / (1.0f * gr.n_channels);
            factor -= (factor - 1) / 2;
            bus_bw /= factor;
            if (s.min_compcap >= 90) bus_bw *= .85f;
          }
        }
        // NVLS all-gather / reduce-scatter across nodes needs CollNet (tuning.cc:320-335).
        if (a == Algo::nvls && rs_ag && n_nodes > 1) bus_bw = 0;
        // Bus to algorithm bandwidth (tuning.cc:344-351).
        if (!(a != Algo::ring && rs_ag)) {
          float ratio = 1.0f;
          if (a == Algo::ring || ((a == Algo::nvls || a == Algo::nvls_tree) && T.nvls_efficiency_model))
            ratio *= (1.0f * n_ranks) / nsteps;
          else if (a == Algo::nvls || a == Algo::nvls_tree)
            ratio *= 5.0f / 6.0f;  // NCCL 2.25-2.27 (tuning.cc at v2.27.3-1:324)
          else
            ratio *= .5f;
          bus_bw *= ratio;
        }
        t.bandwidth[coll][ai][pi] = bus_bw;
        // Latencies, tuning.cc:352-401.
        float lat = T.base_lat[ai][pi];
        float intra_lat = T.hw_lat[intra_hw[ai]][ai][pi];
        float inter_lat = net_step_latency_us(s, gr, a, p);
        if (a == Algo::ring) {
          float hwl = T.hw_lat[hw[ai]][ai][pi];
          if (f == Func::reduce || f == Func::broadcast) {
            if (gr.same_channels) {
              lat += hwl;
            } else {
              if (p == Proto::simple) hwl = T.hw_lat[hw[ai]][int(Algo::tree)][pi];
              lat += nsteps * hwl;
            }
          } else {
            float overhead = 0;
            if (n_nodes > 1) {
              overhead = net_overhead(s);
              if (p == Proto::simple) overhead *= 3;
            }
            intra_lat = std::max(intra_lat, overhead);
            const int inter_steps = n_nodes == 1 ? 0 : f == Func::all_reduce ? 2 * (n_nodes - 1) : n_nodes - 1;
            lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
          }
        } else if (a == Algo::tree) {
          if (f == Func::all_reduce) lat += 2 * ((n_ranks / n_nodes - 1) * intra_lat + log2i(n_nodes) * inter_lat);
        } else if (a == Algo::collnet_direct) {
          // tuning.cc:418-421: + 0.4 us arity serialisation per local rank
          lat += 2 * (std::min(1.0f, ppn - 1) * intra_lat + (ppn - 1) * 0.4f) + inter_lat;
        } else if (a == Algo::collnet_chain) {
          lat += 2 * (ppn - 1) * intra_lat + inter_lat;  // tuning.cc:422-423
        } else if (a == Algo::nvls) {
          lat = intra_lat;
          if (n_nodes > 1) lat += inter_lat;
        } else if (a == Algo::nvls_tree) {
          lat += intra_lat + 2 * log2i(n_nodes) * inter_lat;
        } else if (a == Algo::pat) {
          if (rs_ag) lat += log2i(n_nodes) * (inter_lat / 3.5f) + n_ranks * 2.8f;
        }
        t.latency[coll][ai][pi] = lat;
      }
    }
  }
  // Enable / disable (tuning.cc:404-499): user lists, NVLS-tree off on one node, CollNet off, NVLS off
  // across nodes without CollNet; LL128 by default only on sm90+ up to P2C/PXN, over NVLink, one arch.
  for (int coll = 0; coll < kNumFuncs; ++coll)
    for (int ai = 0; ai < kNumAlgos; ++ai)
      for (int pi = 0; pi < kNumProtos; ++pi) {
        const Algo a = static_cast<Algo>(ai);
        const Proto p = static_cast<Proto>(pi);
        const Graph& gr = graph_of(g, a);
        bool enable = contains_algo(ov.algos, a) && contains_proto(ov.protos, p);
        if (n_nodes == 1 && a == Algo::nvls_tree) enable = false;
        // tuning.cc:502-509: CollNet (and NVLS across nodes, which runs over CollNet) only with collnetEnable;
        // CollNet needs a network to reduce in (a scale-out fabric, several nodes) and Direct an NVSwitch.
        const bool collnet_on = ov.collnet && s.collnet_fabric && n_nodes > 1;
        if ((a == Algo::collnet_direct || a == Algo::collnet_chain) && !collnet_on) enable = false;
        if (a == Algo::collnet_direct && !s.nvswitch) enable = false;
        if (a == Algo::nvls && n_nodes > 1 && !collnet_on) enable = false;  // NVLS across nodes runs over CollNet
        if (p == Proto::ll128 && ov.protos.empty()) {
          bool on = s.min_compcap >= 90 ? gr.type_inter <= kPathPxn : gr.type_inter <= kPathPxb;
          on = on && gr.type_intra <= kPathNvb && s.min_compcap == s.max_compcap && s.min_compcap >= 70;
          if (!on) enable = false;
        }
        if (!enable) t.bandwidth[coll][ai][pi] = 0;
      }
  return t;
}

double algo_time_us(const NcclSystem& s, const Graphs& g, const TuneTables& t, Func func, Algo algo, Proto proto,
                    std::uint64_t bytes) {
  double bw = t.bandwidth[int(func)][int(algo)][int(proto)];
  double lat = t.latency[int(func)][int(algo)][int(proto)];
  if (bw <= 0) return -1;
  const int log_size = log2i(static_cast<long>(bytes >> 6));
  if (algo == Algo::tree && func == Func::all_reduce && log_size >= 0 && log_size < 23)
    bw *= kTreeCorrection[int(proto)][log_size];
  // 2.29: NVLS-tree too, on Blackwell with an x86 CPU (tuning.cc at v2.29.7-1:596).
  if (algo == Algo::nvls_tree && func == Func::all_reduce && log_size >= 0 && log_size < 24 &&
      tuner_tables(s.release).nvls_tree_size_correction_x86_sm100 && s.min_compcap >= 100 && s.cpu_isa == "x86_64")
    bw *= kTreeCorrection[int(proto)][log_size];
  if (algo == Algo::ring && proto == Proto::simple && s.n_nodes > 1 && func == Func::all_reduce &&
      bytes / (static_cast<std::uint64_t>(g.comm_channels) * s.n_ranks) >= 64)
    lat *= s.min_compcap < 80 ? 1.9 : 1.4;  // tuning.cc:593-596, the ring's plateau
  return lat + static_cast<double>(bytes) / (1000.0 * bw);
}

namespace {

std::string why_unavailable(const NcclSystem& s, const Graphs& g, Func f, Algo a, Proto p, const Overrides& ov) {
  if (!contains_algo(ov.algos, a)) return "not in --algo";
  if (!contains_proto(ov.protos, p)) return "not in --protocol";
  if (a == Algo::collnet_direct || a == Algo::collnet_chain) {
    if (!ov.collnet) return "CollNet is off (NCCL_COLLNET_ENABLE=0, NCCL's default; --algo collnet_direct or collnet_chain asks for it)";
    if (!s.collnet_fabric) return "CollNet needs an InfiniBand scale-out fabric with a NIC per GPU (SHARP reduces in its switches)";
    if (s.n_nodes == 1) return "CollNet reduces across nodes: one node has nothing to reduce in the network";
    if (a == Algo::collnet_direct && !s.nvswitch) return "CollNet Direct needs NVSwitch inside the node (tuning.cc:508-509)";
  }
  if ((a == Algo::nvls || a == Algo::nvls_tree) && g.nvls.n_channels == 0) {
    if (!s.nvswitch) return "no NVLink switch between the GPUs";
    if (!s.nvls_support) return "the NVSwitches cannot reduce (the system's multicast_reduction is false, or compute capability < 90)";
    return "fewer than 2 GPUs per node";
  }
  if (a == Algo::nvls_tree && s.n_nodes == 1) return "NVLS-tree is off on one node (tuning.cc:465)";
  if (a == Algo::nvls && s.n_nodes > 1)
    return "NVLS spans one NVLink domain; across domains NCCL runs nvls_tree, or NVLS over CollNet with "
           "NCCL_COLLNET_ENABLE=1 (tuning.cc:502-506: --collnet on, or --algo nvls_collnet), racksim also has hierarchical";
  if (a == Algo::pat && !pat_enabled(s)) return "PAT needs one GPU per node (tuning.cc:206)";
  if (p == Proto::ll128) return "LL128 is off on this path (tuning.cc:479-494)";
  (void)f;
  return "not applicable";
}

}  // namespace

Decision decide(const NcclSystem& s, const Graphs& g, const TuneTables& t, Func func, std::uint64_t bytes,
                const Overrides& ov) {
  Decision d;
  if (s.n_ranks <= 1) {  // enqueue.cc:1793-1796: one rank copies
    d.channels = 1;
    d.candidates.push_back({Algo::ring, Proto::simple, 0, ""});
    return d;
  }
  // updateCollCostTable (enqueue.cc:1793-1820) then the fastest pair (topoGetAlgoInfo, :1826-1838).
  double best = std::numeric_limits<double>::max();
  bool found = false;
  for (int ai = 0; ai < kNumAlgos; ++ai) {
    const Algo a = static_cast<Algo>(ai);
    const bool rs_ag = func == Func::reduce_scatter || func == Func::all_gather;
    if ((func == Func::broadcast || func == Func::reduce) && a != Algo::ring) continue;
    if (rs_ag && a != Algo::pat && a != Algo::ring && a != Algo::nvls && a != Algo::collnet_direct) continue;
    if (func == Func::all_reduce && a == Algo::pat) continue;
    for (int pi = 0; pi < kNumProtos; ++pi) {
      const Proto p = static_cast<Proto>(pi);
      if ((a == Algo::nvls || a == Algo::nvls_tree) && p != Proto::simple) continue;
      if (rs_ag && a == Algo::pat && p != Proto::simple) continue;
      bool allowed = true;
      if ((a == Algo::nvls || a == Algo::nvls_tree) && func != Func::all_reduce && s.max_local_ranks > kMaxNvlsArity) allowed = false;
      double time = allowed ? algo_time_us(s, g, t, func, a, p, bytes) : -1;
      Candidate c{a, p, time, time < 0 ? why_unavailable(s, g, func, a, p, ov) : ""};
      if (!allowed) c.why_not = "NVLS all-gather/reduce-scatter needs at most 32 GPUs per node (enqueue.cc:1806)";
      // The element type (Overrides::nvls_reduces_type, fp8): said only where the pair would otherwise run.
      if (time >= 0 && (a == Algo::nvls || a == Algo::nvls_tree) && func != Func::all_gather && !ov.nvls_reduces_type) {
        time = c.time_us = -1;
        c.why_not = "the switches do not reduce this element type (ncclNvlsSupported: 32/64-bit integers, half, bfloat16, "
                    "float and double; enqueue.cc:384)";
      }
      // enqueue.cc:1809-1815: fp8 rings of more than 8 ranks go last, whatever the collective (NCCL's comment says
      // reductions; its test is the datatype alone).
      if (time >= 0 && a == Algo::ring && ov.fp8 && s.n_ranks > 8) time = c.time_us = time * 1024.0;
      // enqueue.cc at v2.28.9-1:1798-1801: CollNet Direct runs at most 8 GPUs per node (its heads; every release
      // racksim knows), and CollNet Chain too from 2.28.3 on ("Disable CollNet Chain for more than 8 local GPUs"):
      // a GB200 NVL72 rack, one node of 72, runs neither, whatever NCCL_ALGO asks. Said only where the pair
      // would otherwise run (CollNet enabled and asked for).
      if (time >= 0 && s.max_local_ranks > kMaxDirectArity + 1 &&
          (a == Algo::collnet_direct || (a == Algo::collnet_chain && s.release >= TunerRelease::v2_28))) {
        time = c.time_us = -1;
        c.why_not = std::string(a == Algo::collnet_direct ? "CollNet Direct" : "CollNet Chain (from NCCL 2.28)") +
                    " runs at most 8 GPUs per node, here " + std::to_string(s.max_local_ranks) + " (enqueue.cc:1798-1801)";
      }
      d.candidates.push_back(c);
      if (time >= 0 && time < best) {
        best = time;
        d.algo = a;
        d.proto = p;
        found = true;
      }
    }
  }
  if (!found) {
    // Name why each requested pair is out (the ones the overrides left in): Simple's first (every algorithm has
    // it, and a long message is cut in the middle), the protocols an algorithm never runs ("not applicable") only
    // when nothing else is said.
    std::string why;
    auto name = [&](bool simple, bool inapplicable) {
      for (const auto& c : d.candidates)
        if (c.why_not != "not in --algo" && c.why_not != "not in --protocol" && !c.why_not.empty() &&
            (c.proto == Proto::simple) == simple && (c.why_not == "not applicable") == inapplicable)
          why += std::string(why.empty() ? "" : "; ") + to_string(c.algo) + "/" + to_string(c.proto) + ": " + c.why_not;
    };
    name(true, false);
    name(false, false);
    if (why.empty()) {
      name(true, true);
      name(false, true);
    }
    throw InputError("--algo/--protocol", "", "the requested algorithm and protocol" + (why.empty() ? "" : " (" + why + ")"),
                     "a pair NCCL can run here; on this system " + s.describe() +
                         ", see `--algo auto --protocol auto` for the candidates");
  }
  d.nccl_time_us = best;
  // Channels and threads (enqueue.cc:1866-1914).
  int nc = g.comm_channels;
  int nt = t.max_threads[int(d.algo)][int(d.proto)];
  const long threshold = t.thread_threshold[int(d.algo)][int(d.proto)];
  const auto nbytes = static_cast<long double>(bytes);
  if (d.algo == Algo::nvls || d.algo == Algo::nvls_tree) {
    nc = (s.n_nodes > 1 && d.algo == Algo::nvls) ? std::min(g.nvls_channels, g.comm_channels) : g.nvls_channels;
  } else {
    while (nbytes < static_cast<long double>(nc) * nt * threshold) {
      if (nc >= 2) --nc;
      else break;
    }
    while (nbytes < static_cast<long double>(nc) * nt * threshold) {
      if (nt % 128 == 0) nt /= 2;
      else break;
    }
  }
  if (d.proto == Proto::simple) {
    if (d.algo == Algo::ring) nt += kWarpSize;
    if (d.algo == Algo::tree) nt += 4 * kWarpSize;
  }
  if (nt / kWarpSize < 3) nt = 3 * kWarpSize;
  if (d.algo == Algo::tree || d.algo == Algo::pat) nt = kMaxNthreads;
  d.channels = std::max(nc, 1);
  d.threads = nt;
  d.nvls_heads = g.nvls.n_channels;
  // Chunk size (calcCollChunking, enqueue.cc:1963-2085).
  const long buff = d.proto == Proto::ll ? kLlBuffSize : d.proto == Proto::ll128 ? kLl128BuffSize : kSimpleBuffSize;
  const long step = buff / kSteps;
  const int chunk_steps = (d.proto == Proto::simple && d.algo == Algo::ring) ? kAllReduceChunkSteps : 1;
  long chunk = step * chunk_steps;
  if (d.proto == Proto::ll) chunk /= 2;
  if (d.proto == Proto::ll128) chunk = (chunk / kLl128LineElems) * kLl128DataElems;
  const auto co = static_cast<std::uint64_t>(d.channels) * std::max(1, d.nvls_heads);
  if (d.algo == Algo::nvls) {
    long max_chunk = g.nvls_chunk;  // comm->nvlsChunkSize (enqueue.cc at v2.30.7-1:2262)
    if (s.n_nodes > 1 && t.bandwidth[int(Func::all_reduce)][int(Algo::nvls)][int(Proto::simple)] < 150) max_chunk = 32768;
    chunk = std::min(chunk, max_chunk);
    if (bytes < 64 * co * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 8 * co * chunk && chunk > 32768) chunk = 32768;
    if (bytes < 2 * co * chunk && chunk > 16384) chunk = 16384;
  } else if (d.algo == Algo::nvls_tree) {
    chunk = std::min(g.nvls_chunk, g.nvls_tree_max_chunk);  // enqueue.cc at v2.30.7-1:2281 (2.29: :2173-2176)
    if (bytes < 32 * co * chunk && chunk > 262144) chunk = 262144;
    if (bytes < 16 * co * chunk && chunk > 131072) chunk = 131072;
    if (bytes < 4 * co * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 1 * co * chunk && chunk > 32768) chunk = 32768;
  } else if (d.algo == Algo::tree && d.proto == Proto::ll128) {
    const double ppn = s.ppn();
    const double nsteps_ll128 = 1 + log2i(s.n_nodes) + 0.1 * ppn;
    while (bytes / (static_cast<std::uint64_t>(d.channels) * chunk) < nsteps_ll128 * 64 / ppn && chunk > 131072) chunk /= 2;
    while (bytes / (static_cast<std::uint64_t>(d.channels) * chunk) < nsteps_ll128 * 16 / ppn && chunk > 32768) chunk /= 2;
  } else if (d.algo == Algo::pat && func == Func::all_gather) {
    while (static_cast<std::uint64_t>(chunk) * d.channels * 32 > bytes && chunk > 65536) chunk /= 2;
  } else if (d.algo == Algo::pat && func == Func::reduce_scatter) {
    while (static_cast<std::uint64_t>(chunk) * d.channels * 16 > bytes && chunk > 65536) chunk /= 2;
  }
  d.chunk_bytes = static_cast<std::uint64_t>(std::max(chunk, 1L));
  long chunks_per_loop = 1;
  if (d.algo == Algo::ring) chunks_per_loop = s.n_ranks;
  else if (d.algo == Algo::nvls || d.algo == Algo::nvls_tree) chunks_per_loop = std::max(1, d.nvls_heads);
  const auto loop_size = static_cast<std::uint64_t>(d.channels) * chunks_per_loop * d.chunk_bytes;
  d.loops = static_cast<long>((bytes + loop_size - 1) / loop_size);
  return d;
}

Decision decide(const NcclSystem& s, Func func, std::uint64_t bytes, const Overrides& ov) {
  const Graphs g = compute_graphs(s, ov.channels);
  const TuneTables t = tune_model(s, g, ov);
  return decide(s, g, t, func, bytes, ov);
}

}  // namespace racksim::nccl

namespace racksim::nccl {

namespace {
// NVLS inside one of the system's nodes: its graph, whose heads cap NVLS-tree and NVLS over CollNet.
Graph one_node_nvls(const NcclSystem& s) {
  NcclSystem one = s;
  one.n_nodes = 1;
  one.n_ranks = s.max_local_ranks;
  return compute_graphs(one).nvls;
}
}  // namespace

AlgoTerms algo_terms(const NcclSystem& s, const Graphs& g, Func func, Algo a, Proto p) {
  AlgoTerms t;
  const TunerTables& T = tuner_tables(s.release);
  const int ai = static_cast<int>(a), pi = static_cast<int>(p);
  const int n = s.n_ranks, nodes = s.n_nodes;
  const int cc = compcap_index(s.min_compcap);
  const int index2 = nodes <= 2 ? nodes - 1 : 2;
  const int index1 = nodes == 1 ? cc : (s.cpu_vendor == "amd" ? 1 : 0);
  const Graph& gr = a == Algo::ring ? g.ring : (a == Algo::nvls || a == Algo::nvls_tree) ? g.nvls : g.tree;
  const int intra_hw = gr.type_intra == kPathNvl ? kHwNvlink : kHwPci;
  const float ppn = static_cast<float>(n) / nodes;
  const float inter = net_step_latency_us(s, gr, a, p);
  float intra = T.hw_lat[intra_hw][ai][pi];
  t.payload_fraction = p == Proto::ll ? 0.5 : p == Proto::ll128 ? 0.92 : 1.0;
  const bool all_reduce = func == Func::all_reduce;
  const double nsteps = all_reduce ? 2.0 * (n - 1) : (func == Func::all_gather || func == Func::reduce_scatter) ? n - 1.0 : n;
  const double ring_ratio = n / nsteps;  // bus -> algorithm bandwidth (tuning.cc:344-351)
  // NCCL's per-channel caps (perChMax*Bw x the graph's channels) bound what a channel's CTA can move with a
  // protocol. Its tuner multiplies them by the graph's channels whatever runs, but the kernel runs
  // comm->nChannels CTAs, which NCCL_MIN/MAX_NCHANNELS and NCCL_MIN_CTAS change (connect.cc:487-491): a run
  // on more CTAs moves more. So the caps scale with the channels that run over those NCCL's defaults run,
  // the configuration the constants were tuned on (HGX H100 x 128 nodes, Ring/LL128 on 32 channels: 367
  // GB/s at 16 GiB, nccl-tests #322, where 8 graph channels x 36.7 say 294).
  const double channel_scale =
      g.default_comm_channels > 0 && g.comm_channels > 0 ? static_cast<double>(g.comm_channels) / g.default_comm_channels : 1.0;
  const auto scaled = [&](const std::string& source) {
    return channel_scale == 1.0 ? source
                                : source + " x " + std::to_string(g.comm_channels) + "/" + std::to_string(g.default_comm_channels) +
                                      " channels run";
  };
  switch (a) {
    case Algo::ring: {
      t.launch_us = T.base_lat[ai][pi];
      float overhead = 0;  // tuning.cc:370-379
      if (nodes > 1) overhead = (s.cpu_isa == "x86_64" && s.cpu_vendor == "amd" ? 2.0f : 1.0f) * (p == Proto::simple ? 3 : 1);
      t.intra_step_us = std::max(intra, overhead);
      t.net_step_us = inter;
      if (p == Proto::ll) {
        t.algbw_cap_GBps = T.ll_max_bw[index1][index2] * ring_ratio;
        t.cap_source = "llMaxBw (tuning.cc:169-174)";
      } else if (p == Proto::ll128) {
        t.algbw_cap_GBps = gr.n_channels * T.per_ch_max_ring_ll128_bw[cc][index2] * channel_scale * ring_ratio;
        t.cap_source = scaled("perChMaxRingLL128Bw x " + std::to_string(gr.n_channels) + " channels (tuning.cc:175-180)");
      }
      break;
    }
    case Algo::tree: {
      t.launch_us = T.base_lat[ai][pi];
      t.intra_step_us = intra;  // 2 x ((ppn-1) intra + log2(nodes) inter) over the tree's up and down passes (:382-385)
      t.net_step_us = inter;
      double bus = 0;
      if (p == Proto::simple) {
        bus = gr.n_channels * T.per_ch_max_tree_bw[cc][index2] * channel_scale;
        t.cap_source = scaled("perChMaxTreeBw x " + std::to_string(gr.n_channels) + " channels (tuning.cc:187-192)");
      } else if (p == Proto::ll) {
        bus = T.ll_max_bw[index1][index2];
        t.cap_source = "llMaxBw (tuning.cc:169-174)";
      } else {
        bus = gr.n_channels * T.per_ch_max_tree_ll128_bw[cc][index2] * channel_scale;
        t.cap_source = scaled("perChMaxTreeLL128Bw x " + std::to_string(gr.n_channels) + " channels (tuning.cc:181-186)");
      }
      if (gr.pattern == Pattern::tree) bus *= .85;  // tuning.cc:309
      // Bus to algorithm bandwidth: NCCL's model halves it for every tree (tuning.cc:344-351), the volume of a
      // double binary tree across nodes (a node's NIC carries 2S each way: S/2 from each child and to its
      // parent in the tree where it is inner, S/2 each way where it is a leaf). Inside one node the tree is a
      // chain whose every link carries S each way, so its channels reach their bus figure as algorithm
      // bandwidth: the 2-GPU H200 tree measured 355 GB/s at 8 GiB, as the ring (calibrate/data/
      // h200-nvswitch-2gpu-2026-11-29), where the halved cap said 232.
      t.algbw_cap_GBps = bus * (nodes == 1 ? 1.0 : .5);
      break;
    }
    case Algo::nvls: {
      // tuning.cc:389-393: the switch round trip is the whole latency, once per collective.
      t.launch_us = intra + (nodes > 1 ? inter : 0);
      // Across nodes (over CollNet) the NVLS part is one node's: its cap, as NVLS-tree's below; the network's
      // per-channel figure (bwInter) is a selection estimate, and the NICs' traffic prices the rest.
      const Graph g1 = nodes > 1 ? one_node_nvls(s) : gr;
      if (g1.n_channels >= 2) {
        double intra_bw = g1.bw_intra * kNvlsEfficiency[cc] * (g1.n_channels - 1) / g1.n_channels;
        intra_bw *= all_reduce ? 2.0 : (ppn - 1) / ppn;
        // Inside one node bwInter is a by-product of the search's pass 2 (no network carries it): taking it
        // would cap 8 B200s at 720 GB/s where 829 follows from the heads and 844 is measured.
        const double bus = g1.n_channels * intra_bw;
        // A cap on all-reduce only: there it is the physics (835-919 GB/s measured on NVL72 racks against
        // the ~1800 the switch ports would allow). For all-gather / reduce-scatter NCCL's figure (its
        // bandwidth x (ppn-1)/ppn, without all-reduce's factor 2) is a selection estimate half of what 8
        // B200s measure (674 GB/s NVLS all-gather, together-nccl-tests), so the ports' bound prices them.
        if (all_reduce) {
          t.algbw_cap_GBps = bus * ring_ratio;
          t.cap_source = "NVLS: " + std::to_string(g1.n_channels) + " heads x bwIntra x nvlsEfficiency (tuning.cc:285-300)";
        }
      }
      break;
    }
    case Algo::nvls_tree: {
      t.launch_us = T.base_lat[ai][pi] + intra;  // tuning.cc:394-395: + 2 log2(nodes) inter over the tree
      t.net_step_us = inter;
      // The NVLS part cannot beat NVLS on one node (the NVLS all-reduce's cap above, heads x bwIntra x
      // nvlsEfficiency); NCCL caps each channel at perChMaxNVLSTreeBw.
      const Graph g1 = one_node_nvls(s);
      double cap = 0;
      if (g1.n_channels >= 2) {
        const double intra_bw = g1.bw_intra * kNvlsEfficiency[cc] * (g1.n_channels - 1) / g1.n_channels * 2.0;
        cap = g1.n_channels * intra_bw;
      }
      // NCCL's per-channel NVLS-tree figure (perChMaxNVLSTreeBw x channels, tuning.cc:193-198) stays in its
      // selection model (tune_model) but is not a cap here: across more than two nodes it says 8 x 43.8 = 350
      // GB/s for 8-GPU B200 nodes, where Together's B200 clusters measure 387-391 GB/s from 4 to 64 nodes,
      // the NICs' bound (a node's NICs carry 2S each way in a double binary tree). As with the tree's halving
      // (above), where NCCL's constant is a selection estimate racksim takes the traffic the links carry.
      t.cap_source = "NVLS inside one node (tuning.cc:285-300)";
      t.algbw_cap_GBps = cap * ring_ratio;
      break;
    }
    case Algo::pat:
      t.launch_us = T.base_lat[ai][pi] + n * 2.8;
      t.net_step_us = inter / 3.5;
      t.payload_fraction *= .75;  // tuning.cc:310
      break;
    default:
      break;
  }
  return t;
}

}  // namespace racksim::nccl
