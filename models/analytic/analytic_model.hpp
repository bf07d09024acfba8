#pragma once
// Closed-form models, evaluated in microseconds: (1) an alpha-beta cost per algorithm on the real
// topology and calibration, no contention; (2) the course's Fig 4 model (seed course section 7).
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

class TopologyGraph;

struct AnalyticEstimate {
  std::string algorithm;          // the algorithm evaluated (auto's pick when "auto" was asked)
  std::string protocol;           // NCCL protocol (LL, LL128, Simple)
  int channels = 0;               // NCCL channels
  std::string note;               // what NCCL would run and why
  double time_s = 0;
  double bandwidth_s = 0;         // the part of time_s that scales with the capacities (latencies all 0)
  double qp_connection_bytes = 0, qp_line_s = 0; // across domains on verbs: the bytes per queue pair of a node's connections (ExecTerms), 0 else
  std::vector<PhaseTime> phases;
  std::vector<std::string> warnings;
};

// Alpha-beta estimate for request.algorithm (or "auto") on this graph and calibration.
AnalyticEstimate analytic_collective(const TopologyGraph& graph, const CollectiveRequest& request,
                                     const Calibration& calibration);

// The course's Fig 4 model: bandwidth-only with a fixed per-phase latency. d GPUs per NVLink domain,
// `domains` domains; in-domain ring 2(d-1)/d * S / B_nvl (NVLS: S / B_nvl), then a ring over domains on
// S/d per GPU over its NIC: 2(domains-1)/domains * (S/d) / B_nic. Per direction bandwidths in bytes/s.
struct Fig4Inputs {
  double bytes = 0;
  int gpus_per_domain = 1;
  int domains = 1;
  double nvlink_Bps = 0;
  double nic_Bps = 0;
  double phase_latency_s = 0;
  bool nvls = false;
};
double fig4_allreduce_time_s(const Fig4Inputs& in);

}  // namespace racksim
