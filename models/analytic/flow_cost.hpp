#pragma once
// Alpha-beta costs of flows on the real topology with a calibration: a path's alpha is the sum of its
// hops' latencies (plus the calibration's extra latency per link kind and the algorithm's step
// overhead); its capacity on each link is the link's per-direction bandwidth times the link-kind and
// algorithm efficiencies. A set of flows started together takes, per flow,
//     alpha + max over the links it crosses of (bytes of the set on that link / capacity),
// the largest over flows being the set's time: flows of one algorithm step that share a link (two GPUs
// of a superchip on C2C, positions of a rail on an oversubscribed leaf uplink, n-1 multicasts into one
// GPU port) share its capacity; nothing else contends.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/calib/calibration.hpp"

namespace racksim {

class TopologyGraph;
struct Route;

// Time of one set of concurrent flows as a function of the bytes each flow carries:
// max over flows of (alpha + bytes * seconds_per_byte).
struct StageCost {
  std::vector<std::pair<double, double>> lines;  // (alpha_s, seconds per byte), deduplicated
  double time(double bytes) const;
};

// What the NCCL protocol an algorithm runs adds to every flow (models/collectives/exec_terms.hpp): the
// capacity scale (protocol payload, NCCL's explicit caps, the calibration's algorithm efficiency), the
// collective's fixed latency and NCCL's per-step latency by hop type, and the GPU architecture whose
// link calibration applies. Without terms the calibration's algorithm entry is used as before.
struct FlowTerms {
  double efficiency = 1;
  double launch_s = 0;
  double intra_step_s = 0;   // added to the alpha of a flow that stays inside a node
  double net_step_s = 0;     // ... of a flow that crosses a NIC
  std::string arch;          // "hopper", "blackwell", ... (calibration lookups)
  bool no_latency = false;   // every alpha 0: the bandwidth part alone (for caps)
  bool latency_at_launch = false;  // pipelined NCCL algorithm: launch_s holds its whole latency, alphas 0
};

class FlowCoster {
 public:
  struct Path {
    double alpha_s = 0;
    bool crosses_nic = false;
    std::vector<std::pair<long long, double>> links;  // (link key, capacity in bytes/s)
  };

  // op_slash_algo picks the calibration's algorithm entry; bytes is the request size (for the
  // algorithm's size-dependent efficiency).
  FlowCoster(const TopologyGraph& graph, const Calibration& calibration, const std::string& op_slash_algo,
             double bytes);
  FlowCoster(const TopologyGraph& graph, const Calibration& calibration, const FlowTerms& terms);

  const Path& gpu_to_gpu(int src_vertex, int dst_vertex);
  // The GPU's NVLink port towards its domain's switch plane (NVLS up) and back (multicast down).
  const Path& gpu_to_switch(int gpu_vertex);
  const Path& switch_to_gpu(int gpu_vertex);

  // Seconds per byte for a domain's switch plane to reduce: 1 / (sum over the domain's GPUs of their
  // port capacity), as the engine charges it (sim/platform: the plane reduces at the line rate of all
  // its ports).
  double plane_reduce_s_per_byte(int domain);

  // Every flow carries the same number of bytes.
  StageCost stage(const std::vector<const Path*>& flows) const;
  double launch_s() const { return launch_s_; }
  double step_overhead_s() const { return step_s_; }

 private:
  Path make_path(const Route& route, std::size_t first_hop, std::size_t end_hop) const;
  int domain_peer(int gpu_vertex) const;

  const TopologyGraph& graph_;
  const Calibration& calibration_;
  double algorithm_efficiency_ = 1, launch_s_ = 0, step_s_ = 0;
  bool has_terms_ = false;
  FlowTerms terms_;
  std::map<std::pair<int, int>, Path> paths_;
  std::map<int, Path> up_, down_;
  mutable std::map<int, int> peer_of_domain_[2];
};

}  // namespace racksim
