#pragma once
// How one resolved request runs, for both its closed form and the engine: NCCL's protocol and latency
// terms for the algorithm NCCL runs (models/nccl: baseLat, hwLat per hop type, payload fraction of LL/LL128,
// the explicit per-channel caps), the calibration of the GPU architecture on top (efficiency, overheads),
// and what was borrowed from another architecture. The capacity scale is found in two passes: the
// algorithm's traffic on the real links at the protocol's payload fraction gives its physical bandwidth;
// where one of NCCL's explicit caps is lower the scale drops to meet it.
#include <string>
#include <vector>

#include "models/analytic/flow_cost.hpp"
#include "models/collectives/collective.hpp"

namespace racksim {

class TopologyGraph;

struct ExecTerms {
  FlowTerms flow;                     // what every flow of the algorithm gets
  double physical_algbw_Bps = 0;      // the links' bound at the protocol's payload fraction
  double cap_algbw_Bps = 0;           // NCCL's explicit cap (0: none)
  std::string cap_source;
  int depth = 1;                      // the pipeline depth the schedule uses (planned_depth)
  double bandwidth_s = 0;             // the bandwidth part of the time at the final efficiency (no latency)
  std::vector<std::string> warnings;  // calibration entries borrowed from another architecture
  std::string note;                   // terms results should name (a protocol's NIC rate, p2p pipelines; "" else)
  // Point-to-point (all_to_all/direct): NCCL's pipelines per GPU over NVLink (models/nccl/nccl_p2p.hpp) and the
  // time their calibrated rate adds to the NVLink part (0 where the calibration has none; flow.nvlink_scale).
  int p2p_pipelines = 0;
  double p2p_extra_s = 0;
  // NVLS-tree across NVLink domains: the bytes its connections hold in flight, NCCL_STEPS x chunk x channels
  // x heads (NCCL_STEPS x the request's pipeline item, nccl_choice.cpp), which the calibrated credit cycle
  // (AlgorithmCalibration::credit_cycle_us) turns into a floor on the bandwidth part; 0 else.
  double credit_window_bytes = 0;
};

// The credit cycles a run of `bytes` waits for with a window of `window_bytes` in flight: every window after the
// first (the first is the pipeline's fill, its latency), 0 for a run that fits in one window.
inline double credit_cycles_after_first(double bytes, double window_bytes) {
  return window_bytes > 0 && bytes > window_bytes ? bytes / window_bytes - 1 : 0;
}

// `request` must be resolved (resolve_request: no "auto").
ExecTerms exec_terms(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration);

// The scale of NVLS's ramp in GPUs (calibration.hpp): d x sqrt(d / 8) for the most ranks d in one NVLink
// domain (one law for both architectures: 2 MB per GPU on 8 Hopper GPUs, 432 MB on a 72-GPU Blackwell rack),
// times the stages of the pipeline: 1 for NVLS, 1 + floor(log2 domains) for NVLS-tree, whose pipeline runs
// on through the levels of its binary tree across the domains (the levels NCCL's latency counts,
// tuning.cc:394-395).
double ramp_gpus(const TopologyGraph& graph, const CollectiveRequest& request);

// Bytes one of NCCL's p2p pipelines over NVLink carries in an all-to-all (what a GPU sends to the peers of its
// NVLink domain / its concurrent pipelines to them, models/nccl/nccl_p2p.hpp), and that pipeline count in
// *pipelines; 0 for other algorithms and where no peer shares the domain.
double p2p_pipeline_bytes(const TopologyGraph& graph, const CollectiveRequest& request, int* pipelines = nullptr);

// The GPU architecture of a request's ranks for calibration lookups ("hopper", "blackwell", ...).
std::string request_architecture(const TopologyGraph& graph, const CollectiveRequest& request);

}  // namespace racksim
