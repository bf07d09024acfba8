#pragma once
// Calibration: what real hardware and NCCL lose against vendor peaks, per link kind and per algorithm.
// The shipped default is calibrate/default.json (made by `racksim calibrate fit`); `none` is the vendor
// peak with nominal latencies (the course's model inputs). Every parameter carries its source.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sim/topo/topology_spec.hpp"

namespace racksim {

// How an entry was fitted (optional, written by `racksim calibrate fit`; empty when set by hand):
// the measurement series it came from and the fit's error on them.
struct FitSummary {
  int points = 0;                      // 0: no fit recorded
  double median_abs_error = 0;         // |predicted / measured - 1| over the points
  double worst_abs_error = 0;
  double rms_log_residual = 0;         // sqrt(mean(log(predicted / measured)^2))
  std::vector<std::string> data;       // measurement series (with their sources in the fit report)
  std::vector<std::string> notes;      // parameters fixed and why, held-out errors
  bool operator==(const FitSummary&) const = default;
};

struct LinkCalibration {
  double bandwidth_efficiency = 1.0;  // achieved / vendor peak, in (0, 1]
  double extra_latency_us = 0.0;      // added to the topology's nominal latency
  std::string source;
  FitSummary fit;
  bool operator==(const LinkCalibration&) const = default;
};

struct AlgorithmCalibration {
  double launch_overhead_us = 0.0;    // once per collective (kernel launch, proxy start)
  double step_overhead_us = 0.0;      // per dependent step (ring step, tree level, switch round trip)
  double bandwidth_efficiency = 1.0;  // asymptotic, multiplies the link efficiency
  double half_efficiency_bytes = 0.0; // efficiency(S) = bandwidth_efficiency * S / (S + half): 0 = flat
  std::string source;
  FitSummary fit;
  // The extra launch of a collective whose ranks span several NVLink domains (NCCL nodes), per 8 GPUs of each
  // domain (at least one unit: an HGX node's worth; scale_out_launch_units): the network's proxy threads and
  // RDMA round trips cost more than NCCL's hwLat NET terms say, nothing of that applies inside one domain,
  // and it grows with the GPUs a domain puts on the network, as the tree's does per hop of its chain
  // (scale_out_hop_overhead_us, below): OCI's two 64-GPU GB300 racks have a ~485 us NVLS-tree floor and ~500 us
  // all-to-all floor, GCP A4's two 8-GPU B200 nodes pay a few tens of us. One figure per call for both made
  // the held-out B200 nodes 2.7x slow at 8 MiB (docs/calibration.md section 4, session 33). < 0: not given,
  // launch_overhead_us applies everywhere.
  double scale_out_launch_us_per_8_gpus = -1.0;
  // The tree across domains (all_reduce/tree): its extra latency per hop of NCCL's tree latency count,
  // tree_latency_hops() (tuning.cc:382-385), in place of scale_out_launch_us_per_8_gpus. A tree's latency
  // grows with its chain through each node: OCI's two GB200 racks of 64 GPUs pay ~104 us more than
  // NCCL's terms at 8 B, Lambda's two 8-GPU B200 nodes ~15 us, Nebius's H100 nodes ~9 us, 0.6-0.9 us per
  // hop for all three (docs/calibration.md section 3). < 0: not given.
  double scale_out_hop_overhead_us = -1.0;
  // Inside one NVLink domain, the extra launch's part that grows with the GPUs of the domain the collective
  // runs on, per 8 of them (NVLS entries: every GPU of the multicast group joins its barriers through the
  // switches). OCI's GB300 NVLS all-reduce takes 19-20 us longer on 64 GPUs than on 8 at both 4 and 8 MiB, a
  // latency, not a bandwidth (docs/calibration.md section 3, session 44). Fitted where an entry's data has two
  // GPU counts inside one domain; 0: none (the one in-domain figure, launch_overhead_us, for every size).
  double launch_us_per_8_gpus = 0.0;
  // The extra launch: across domains, per unit of scale_out_launch_units (`units`: the tree's hops, else the
  // GPUs per domain / 8) where the entry has a figure across domains, else the in-domain one, with its part per
  // 8 of the run's `domain_gpus` inside one domain only (0: that part left out).
  double launch_us(bool spans_domains, double units = 1, double domain_gpus = 0) const {
    if (spans_domains && scale_out_hop_overhead_us >= 0) return scale_out_hop_overhead_us * units;
    if (spans_domains && scale_out_launch_us_per_8_gpus >= 0) return scale_out_launch_us_per_8_gpus * units;
    return launch_overhead_us + (spans_domains ? 0.0 : launch_us_per_8_gpus * domain_gpus / 8);
  }
  // NVLS's ramp to full bandwidth (NVLS and NVLS-tree entries; 0: none). The first S_k bytes of a collective
  // move at half its asymptotic bandwidth, S_k = ramp_bytes_per_gpu x ramp_gpus (exec_terms.hpp): d x
  // sqrt(d / 8) for d GPUs of one domain, times an NVLS-tree's pipeline stages (1 + log2 of its domains):
  // efficiency(S) = ... x (S + S_k) / (S + 2 S_k). Measured on every public NVLS series with sizes in between
  // (docs/calibration.md): S_k ~ 15 MB on 8 GPUs, 270-600 MB on 64-72, which both architectures fit at 2 MB
  // per GPU with the d^1.5 law; NVLS-tree on two 64-GPU racks ramps twice as long as one.
  double ramp_bytes_per_gpu = 0.0;
  // The architecture whose fit the bandwidth terms (efficiency, ramp) come from, when this architecture has
  // no data for the algorithm; the in-domain launch is still its own (its architecture's pooled value), and
  // no launch across domains is borrowed (models/calibration/collective_fit.cpp). Empty: fitted on its own data.
  // Every result using such an entry says so (Calibration::algorithm reports it as borrowed).
  std::string borrowed_from;
  // Point-to-point algorithms (all_to_all/direct): the rate of one of NCCL's p2p pipelines over NVLink, one
  // peer's part on one channel (models/nccl/nccl_p2p.hpp), GB/s; 0: unbounded. A GPU's pipelines to the peers of
  // its NVLink domain add bytes sent to them / (pipelines x this) to its NVLink time (exec_terms; peers across
  // the network are fed through the NIC's buffer, not in series), so an all-to-all whose peers' parts NCCL
  // stripes over few channels (64 MiB on 8 GPUs: 28 pipelines) runs below one striped over many (4 GiB: 224).
  // Fitted on every architecture's all-to-all sweeps together (a CTA's copy loop: Hopper and Blackwell alike).
  double p2p_pipeline_GBps = 0.0;
  // Across NVLink domains on InfiniBand / RoCE verbs (NCCL's net_ib): what one queue pair of a network
  // connection moves, as a fraction of its NIC's line rate; 0: unbounded. A node's NICs then carry at most
  // channels x queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION, NCCL's default 1) x this x the line rate
  // each way, a floor on the bandwidth part of rings, trees and NVLS-trees (exec_terms qp_line_s). The clusters
  // that stay below their NICs' bound run NCCL's one queue pair: 4-10 H100 nodes (NVLS-tree and ring, 320-331
  // GB/s on 16 channels of 400G NICs: ~20 GB/s a channel, NVIDIA/nccl-tests #309, Voltage Park, xxrjun) and
  // Together's MD1 B200 rings (291-344); those that reach it set 2-4 (Together's slinky; the same H100 nodes with
  // NCCL_MIN_CTAS=24 and two queue pairs: 391; OCI's GB200 racks). A fraction of the line rate rather than a
  // rate, so that an 800G ConnectX-8's queue pair is taken twice a 400G ConnectX-7's (the records bound 400G
  // NICs only; OCI's B300 ring on 800G ports measures 24 GB/s a channel). One fraction for every architecture,
  // fitted on the points of those algorithms (collective_fit.cpp); verbs only (EFA's plugin: not applied).
  double qp_line_fraction = 0.0;
  // Rings inside one NVLink domain: the local work a ring loop does beside its sends. NCCL's
  // ring kernels (runRing at v2.28.9-1: all_gather.h:55-70, reduce_scatter.h:41-53, all_reduce.h:47-81) send
  // at every step of a loop but one step also writes the rank's own output (an all-gather's first step,
  // directCopySend: the input to its output and the peer; an all-reduce's middle one,
  // directRecvReduceCopyDirectSend) or only does (a reduce-scatter's last, recvReduceCopy, sends nothing).
  // This is the rate of that local copy, GB/s: a loop of s sending steps (n - 1 for all-gather and
  // reduce-scatter, 2 (n - 1) for all-reduce, n ranks) at the links' rate B then takes s + B / this step times,
  // so the ring runs at s / (s + B / this) of its links: 2-GPU rings lose most (1 sending step in an
  // all-gather), 72-GPU racks nothing that shows, and a faster NVLink loses more to the same copy (B200's 2-GPU
  // all-gather at 0.54 of NVLink 5, H200's at 0.69 of NVLink 4). Fitted on every architecture's ring points in
  // one domain together (one kernel code), judged at >= 1 GiB where a per-byte cost stands alone; 0: none
  // (exec_terms).
  double ring_copy_GBps = 0.0;
  double efficiency_at(double bytes, double ramp_gpus = 1) const {
    double e = half_efficiency_bytes > 0 ? bandwidth_efficiency * bytes / (bytes + half_efficiency_bytes)
                                         : bandwidth_efficiency;
    if (ramp_bytes_per_gpu > 0 && bytes > 0) {
      const double k = ramp_bytes_per_gpu * (ramp_gpus > 1 ? ramp_gpus : 1);
      e *= (bytes + k) / (bytes + 2 * k);
    }
    return e;
  }
  bool operator==(const AlgorithmCalibration&) const = default;
};

// Algorithms whose latency across domains grows with the run's hops (the tree: a chain through each node's
// GPUs and a binary tree across nodes), and their count: NCCL's tree latency is
// 2 x ((ranks per node - 1) x intra + log2(nodes) x inter) (tuning.cc:382-385), so 2 x ((ranks / nodes - 1)
// + floor(log2(nodes))) hops.
inline bool hop_scaled_launch(const std::string& key) { return key == "all_reduce/tree"; }
// The levels of a binary tree across `nodes` below its root: floor(log2(nodes)), 0 for one node (NCCL's log2i).
inline int tree_levels(long nodes) {
  int levels = 0;
  for (long n = nodes; n > 1; n >>= 1) ++levels;
  return levels;
}
inline double tree_latency_hops(int ranks, int nodes) {
  if (nodes < 1 || ranks < 1) return 0;
  return 2.0 * (ranks / nodes - 1 + tree_levels(nodes));
}
// What the launch across domains of `key` counts for a run of `ranks` over `domains`: the tree's hops where
// it is hop-scaled, else the GPUs per domain in units of 8, at least 1 (AlgorithmCalibration::launch_us's
// `units`; the fit's column for it).
inline double scale_out_launch_units(const std::string& key, int ranks, int domains) {
  if (hop_scaled_launch(key)) return tree_latency_hops(ranks, domains);
  return domains > 0 ? std::max(1.0, static_cast<double>(ranks) / domains / 8.0) : 1.0;
}

// GPU architectures as NCCL's tuner tells them apart (tuning.cc:249): calibration entries are kept per
// architecture because NCCL's own constants are (NVLS efficiency, per-channel caps, NVLink bandwidth).
// "volta" < sm80 <= "ampere" < sm90 <= "hopper" < sm100 <= "blackwell".
std::string architecture_of(int compute_capability);
const std::vector<std::string>& architecture_names();

// NCCL's protocol through the network: the rate of a flow that crosses a NIC under this protocol, relative to
// what racksim prices for it (the link's calibrated rate at the protocol's payload fraction, NCCL's caps).
// NCCL's tuner gives LL128 0.92 of Simple's bus bandwidth (tuning.cc:328-329); measured across nodes on
// Blackwell it runs at 0.65-0.8 of Simple (docs/calibration.md section 4, "LL128 across the network"),
// which `racksim calibrate fit` fits per architecture. Inside one NVLink domain it changes nothing.
struct ProtocolCalibration {
  double network_efficiency = 1.0;  // in (0, 1]: multiplies the capacity of every flow that crosses a NIC
  std::string source;
  FitSummary fit;
  bool operator==(const ProtocolCalibration&) const = default;
};

// NCCL's protocol names, as calibration keys and in results: "LL", "LL128", "Simple".
const std::vector<std::string>& protocol_names();
// The calibration's memory keys ("memory" in JSON): "hbm".
const std::vector<std::string>& memory_kinds();

// Compares field by field, as its parts do (defaulted ==: a field added is compared too);
// calibration_json_text_of relies on it.
struct Calibration {
  std::string name = "none";
  std::string source = "vendor peaks and nominal latencies from the topology file";
  std::map<LinkKind, LinkCalibration> links;              // any architecture; missing kind: identity
  std::map<std::string, AlgorithmCalibration> algorithms; // key "all_reduce/ring" or "*/ring"; missing: identity
  // Per GPU architecture (JSON keys "hopper:nvlink", "blackwell:all_reduce/nvls"): these win over the
  // architecture-independent entries above for runs on that architecture.
  std::map<std::string, std::map<LinkKind, LinkCalibration>> arch_links;
  std::map<std::string, std::map<std::string, AlgorithmCalibration>> arch_algorithms;
  // Protocols (JSON "protocols": "LL128", or per architecture "blackwell:LL128"); missing: identity.
  std::map<std::string, ProtocolCalibration> protocols;
  std::map<std::string, std::map<std::string, ProtocolCalibration>> arch_protocols;
  // Device memory (JSON "memory": {"hbm": ...}): a GPU's copy within its own HBM, as a link whose vendor peak
  // is the topology's HBM bandwidth (read + write traffic both count) and whose nominal latency is 0. What a
  // collective on one rank costs (NCCL copies the buffer, exec_terms.cpp); fitted on the D2D copy and SM
  // stream probes. Keys: memory_kinds(); missing: identity.
  std::map<std::string, LinkCalibration> memory;

  static Calibration none() { return Calibration{}; }
  // Lookup for `arch` (empty: architecture-independent entries only): "arch:kind", else "kind", else another
  // architecture's "other:kind" (then *borrowed names it, so results can say so), else identity.
  const LinkCalibration& link(LinkKind kind, const std::string& arch = "", std::string* borrowed = nullptr) const;
  // The same for algorithms: "arch:op/algo", "arch:*/algo", "op/algo", "*/algo", then another
  // architecture's "other:op/algo" or "other:*/algo" (borrowed), else identity.
  const AlgorithmCalibration& algorithm(const std::string& op_slash_algo, const std::string& arch = "",
                                        std::string* borrowed = nullptr) const;
  // Whether algorithm() finds an entry of this file for the key (its own, generic or borrowed) rather than the
  // identity: a file with algorithm entries but none for the key leaves that algorithm uncalibrated.
  bool calibrates(const std::string& op_slash_algo, const std::string& arch = "") const;
  // Whether the file has any algorithm entry at all (none(): no).
  bool has_algorithm_entries() const { return !algorithms.empty() || !arch_algorithms.empty(); }
  // "arch:protocol", else "protocol", else identity. Never another architecture's: where an architecture has
  // no data of its own, NCCL's own protocol model stands (Hopper's LL128 is not Blackwell's).
  const ProtocolCalibration& protocol(const std::string& name, const std::string& arch = "") const;
  // The "hbm" memory entry, else identity (the topology's HBM bandwidth, no latency).
  const LinkCalibration& hbm() const;
  bool operator==(const Calibration&) const = default;
};

// Loads and validates a calibration JSON (schema_version 1; unknown keys are errors). "none" gives
// Calibration::none(); "default" the shipped calibrate/default.json (identity if not yet produced).
Calibration load_calibration(const std::string& path_or_name);
// The same from JSON text; `where` names the origin in errors.
Calibration calibration_from_json_text(const std::string& text, const std::string& where);
std::string calibration_to_json_text(const Calibration& calibration);
// The JSON text of `calibration` for an engine request: the text of the file load_calibration read it
// from in this process when it is still what that text gives (compared field by field), else
// calibration_to_json_text. Either reads back to `calibration`; the file's saves serialising the shipped
// 50 KB calibration again for every call (~0.45 ms of the CLI's 8-GPU call).
std::string calibration_json_text_of(const Calibration& calibration);

}  // namespace racksim
