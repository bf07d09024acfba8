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
  // Rings: `flow` has NCCL's latency per step, which the closed form sums over the steps; the engine runs each
  // connection's steps in order at their bandwidth and pays that sum once at launch instead (build_schedule,
  // registry.cpp: engine_terms), so that where nothing contends both give the same time.
  bool engine_sums_step_latency = false;
  double physical_algbw_Bps = 0;      // the links' bound at the protocol's payload fraction
  double cap_algbw_Bps = 0;           // NCCL's explicit cap (0: none)
  std::string cap_source;
  int depth = 1;                      // the pipeline depth the closed form prices (planned_depth().model_depth)
  double bandwidth_s = 0;             // the bandwidth part of the time at the final efficiency (no latency)
  std::vector<std::string> warnings;  // calibration entries borrowed from another architecture
  std::string note;                   // terms results should name (a protocol's NIC rate, p2p pipelines; "" else)
  // Point-to-point (all_to_all/direct): NCCL's pipelines per GPU over NVLink (models/nccl/nccl_p2p.hpp) and the
  // time their calibrated rate adds to the NVLink part (0 where the calibration has none; flow.nvlink_scale).
  int p2p_pipelines = 0;
  double p2p_extra_s = 0;
  // Rings, trees and NVLS-trees across NVLink domains on verbs transports: the bytes each queue pair of the
  // busiest node's network connections carries one way (qp_connection_bytes) and their time at the NIC's line
  // rate (qp_line_s), which the calibrated fraction of the line rate a queue pair moves
  // (AlgorithmCalibration::qp_line_fraction) turns into a floor on the bandwidth part; 0 else.
  double qp_connection_bytes = 0;
  double qp_line_s = 0;
  // Rings inside one NVLink domain: the sending steps of one loop (ring_sending_steps), which the calibrated
  // rate of the loop's local copy (AlgorithmCalibration::ring_copy_GBps) turns into a rate of s / (s + B / copy
  // rate), B the links' rate of a step; 0 else.
  int ring_sending_steps = 0;
};

// The bytes a node's NICs carry each way in a run of `request` across `domains` NVLink domains (NCCL's nodes),
// per queue pair of its network connections: a ring's (n - 1) / n of the buffer per pass (two for all-reduce:
// each rank's share crosses every node boundary once a pass), a double binary tree's 2 S from three nodes on
// (a node is inner in one tree and a leaf in the other: S / 2 from each child and to its parent, and back,
// S / 2 each way as a leaf) and S on two; over channels x NCCL_IB_QPS_PER_CONNECTION connections' queue pairs.
// 0 for other algorithms, one domain, or no channel count.
double qp_connection_bytes(const CollectiveRequest& request, int domains);
// Whether a queue pair's rate can bind the algorithm ("op/algorithm": rings of all-reduce, all-gather and
// reduce-scatter, tree and NVLS-tree all-reduce), the list qp_connection_bytes prices.
bool qp_bound_key(const std::string& key);
// The sending steps of one loop of a ring inside one NVLink domain ("op/algorithm" over n ranks): n - 1 for
// all-gather and reduce-scatter, 2 (n - 1) for all-reduce (NCCL's runRing); 0 for the other algorithms.
int ring_sending_steps(const std::string& key, int n);
// The links' rate of one ring step, bytes/s: what each rank sends (bytes x sending steps / n) over the ring's
// bandwidth part at kappa 1 (the links alone; exec_terms, collective_points).
double ring_links_Bps(double bytes, int sending_steps, int n, double bandwidth_at_kappa_one_s);
// The share of its links' rate a ring of that many sending steps keeps beside its loop's local copy at
// copy_GBps: s / (s + B / copy rate); 1 with no steps or no copy rate (exec_terms and the fit alike).
double ring_copy_rate(int sending_steps, double links_Bps, double copy_GBps);

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

// The calibration entry ("op/algorithm") that prices a resolved request's flows on NVLink: its own, except
// racksim's hierarchical all-reduce, which runs NCCL's NVLS or ring inside each domain and takes that
// algorithm's ("all_reduce/nvls", "all_reduce/ring").
std::string nvlink_calibration_key(const TopologyGraph& graph, const CollectiveRequest& request);

}  // namespace racksim
