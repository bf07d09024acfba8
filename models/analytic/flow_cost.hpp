#pragma once
// Alpha-beta costs of flows on the real topology with a calibration: a path's alpha is the sum of its
// hops' latencies (plus the calibration's extra latency per link kind and the algorithm's step
// overhead); its capacity on each link is the link's per-direction bandwidth times the link-kind and
// algorithm efficiencies. A set of flows started together takes, per flow,
//     alpha + max over the links it crosses of (bytes of the set on that link / capacity),
// the largest over flows being the set's time: flows of one algorithm step that share a link (two GPUs
// of a superchip on C2C, positions of a rail on an oversubscribed leaf uplink, n-1 multicasts into one
// GPU port) share its capacity; nothing else contends.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/calib/calibration.hpp"
#include "sim/core/thread_scope.hpp"

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
  // The calibration's algorithm efficiency (kappa) inside `efficiency`. A flow that crosses a NIC is priced
  // at efficiency / kappa: the NIC's rate is what NCCL reaches on it (its link calibration, the wire rate),
  // and kappa, fitted where NVLink binds, is not charged on it again (docs/model.md section 7).
  double kappa = 1;
  // CollNet: kappa is the network's aggregation efficiency (IB SHARP), fitted where the fabric binds, so it
  // is charged on the flows that cross a NIC and not on NVLink (docs/model.md, CollNet).
  bool kappa_on_network = false;
  // The protocol's rate through a NIC (ProtocolCalibration::network_efficiency: LL128 across nodes), on the
  // flows that cross one; 1 for Simple and inside a domain.
  double network_protocol_efficiency = 1;
  // NCCL's p2p pipelines over NVLink (all_to_all/direct, exec_terms): a scale on the flows that stay on NVLink.
  double nvlink_scale = 1;
  double nvlink_efficiency() const { return (kappa_on_network && kappa > 0 ? efficiency / kappa : efficiency) * nvlink_scale; }
  double network_efficiency() const {
    return (kappa_on_network || !(kappa > 0) ? efficiency : efficiency / kappa) * network_protocol_efficiency;
  }
};

// What a flow's cost takes from the graph alone (its route's hops: link key, bandwidth, latency, kind), how
// a set of flows loads the links it crosses (both independent of the calibration, the algorithm's terms and
// the bytes), and the paths themselves per set of terms other than the algorithm's efficiency (which
// scales every capacity and is applied when a stage is costed). A planner search prices the same routes
// and flow sets millions of times at different bytes (issue 14): while a FlowCache::Scope lives, every
// FlowCoster built on this thread on the cache's graph takes them from the cache instead of finding the
// routes, building the paths and counting the flows per link again. Same arithmetic, so the same results
// to the bit; without a scope nothing is cached across FlowCosters.
class FlowCoster;

class FlowCache {
 public:
  explicit FlowCache(const TopologyGraph& graph);
  ~FlowCache();
  FlowCache(const FlowCache&) = delete;
  FlowCache& operator=(const FlowCache&) = delete;
  const TopologyGraph& graph() const { return graph_; }

  using Scope = ThreadScope<FlowCache>;

  // Link keys counted by open addressing (flow_cost.cpp: link_loads), kept between flow sets so that a
  // set's count does not allocate and zero a table of its own (1 MiB for a 64-GPU all-to-all).
  struct KeyCounter {
    std::vector<std::pair<long long, int>> slots;
    std::vector<std::size_t> used;
  };

 private:
  friend class FlowCoster;
  struct Hop {
    long long key = 0;        // the link it loads (flow_cost.cpp: link_key)
    double bandwidth_Bps = 0;
    double latency_s = 0;
    LinkKind kind = LinkKind::nvlink;
  };
  struct VectorHash {
    std::size_t operator()(const std::vector<int>& v) const;
  };
  static FlowCache* active(const TopologyGraph& graph);
  // Paths built under one set of terms (what FlowCoster::make_path reads besides the route, bit for bit:
  // FlowCoster::use_cache), by raw path id.
  struct Table;
  Table* table(const std::array<std::uint64_t, 18>& terms);

  const TopologyGraph& graph_;
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::vector<Hop>> raw_;                   // by raw path id
  std::unordered_map<long long, int> full_, up_, down_; // (src, dst) / GPU vertex -> raw path id
  // GPU -> GPU raw path ids by GPU index pair (-1: not yet), when there are few enough GPUs; else full_.
  int* full_slot(int src_vertex, int dst_vertex);
  std::vector<int> gpu_index_;                          // per vertex: its GPU index, -1 for other devices
  std::vector<int> full_dense_;
  int gpus_ = 0;
  // Flows of a set that give the same line: the same alpha and the same (flows on the link, capacity before
  // the algorithm's efficiency) on every link, bit for bit. An all-to-all of n GPUs has n(n-1) flows but a
  // handful of classes (inside a domain, across domains, ...), so a stage is priced per class.
  struct FlowClass {
    double alpha_s = 0;
    std::vector<std::pair<double, double>> links;  // (flows on the link, capacity in bytes/s)
    bool crosses_nic = false;                      // priced at the NIC-crossing efficiency (FlowTerms::kappa)
  };
  // A class of a set's flows under every table at once: flows whose raw hops have the same bandwidth,
  // latency and kind, in order, and whose links carry as many of the set's flows, bit for bit, get the
  // same path, hence the same line, under any table. Found once per set; a table's classes then need
  // the path of one flow of each (make_path for a few raw paths, not for all 5 112 of an all-to-all).
  struct RawClass {
    int raw = -1;               // one flow's raw path id
    std::vector<double> loads;  // its flows on each of its links, in order
  };
  // What is kept per flow set (its raw path ids, in order): the number of its flows on each link of each
  // flow, in order (kept only where a set may be priced flow by flow: FlowCoster::stage without a table),
  // its raw classes, and its classes under each table of paths that priced it.
  struct FlowSet {
    std::vector<double> loads;
    std::vector<RawClass> raw_classes;
    std::vector<std::pair<const Table*, std::vector<FlowClass>>> classes;
  };
  std::unordered_map<std::vector<int>, FlowSet, VectorHash> loads_;
  // All-to-all flow sets by their GPU vertices (FlowCoster::all_to_all_stage): n ids to hash, not n(n-1),
  // and neither the flows' ids nor their loads kept (a planner search meets ~165 groups of ~62 GPUs).
  std::unordered_map<std::vector<int>, FlowSet, VectorHash> all_to_all_;
  std::vector<int> scratch_;  // a flow set's raw path ids while it is looked up or counted (stage, all_to_all_stage)
  KeyCounter counter_;
};

// A FlowCache of `graph` made active for this object's life, unless one of that graph is active on this thread
// already (a planner search's): what a single pricing (build_schedule, analytic_collective) holds so that its
// passes route each flow once. Same arithmetic, the same results to the bit.
class FlowCacheUnlessActive {
 public:
  explicit FlowCacheUnlessActive(const TopologyGraph& graph) {
    if (FlowCache::Scope::active() == nullptr || &FlowCache::Scope::active()->graph() != &graph) {
      cache_.emplace(graph);
      scope_.emplace(*cache_);
    }
  }

 private:
  std::optional<FlowCache> cache_;
  std::optional<FlowCache::Scope> scope_;
};

class FlowCoster {
 public:
  struct Path {
    double alpha_s = 0;
    bool crosses_nic = false;
    // (link key, capacity in bytes/s before the algorithm's efficiency, which scales every capacity of the
    // FlowCoster's flows and is applied by stage() and plane_reduce_s_per_byte())
    std::vector<std::pair<long long, double>> links;
    int raw = -1;  // its route in the active FlowCache (-1: none)
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
  // The GPU's way to the scale-out fabric of its NIC's rail (CollNet: GPU -> NIC -> leaf -> spine, where
  // SHARP reduces) and back (the reduced result, multicast by the fabric to the rail's NICs). InputError
  // when the system has no scale-out fabric or the GPU no NIC of its own.
  const Path& gpu_to_fabric(int gpu_vertex);
  const Path& fabric_to_gpu(int gpu_vertex);

  // Seconds per byte for a domain's switch plane to reduce: 1 / (sum over the domain's GPUs of their
  // port capacity), as the engine charges it (sim/platform: the plane reduces at the line rate of all
  // its ports).
  double plane_reduce_s_per_byte(int domain);
  // The same for a rail's fabric plane: 1 / (sum of the rail's NIC ports), as the engine charges it.
  double fabric_reduce_s_per_byte(int rail);

  // Every flow carries the same number of bytes.
  StageCost stage(const std::vector<const Path*>& flows) const;
  // stage() of every GPU of `vertices` sending to every other at once (flows s -> d, s != d, in order):
  // an all-to-all. With a cache, its flow set is found by the n vertices instead of building and hashing
  // the n(n-1) flows (a 72-GPU all-to-all has 5 112), and priced by its classes.
  StageCost all_to_all_stage(const std::vector<int>& vertices);
  double launch_s() const { return launch_s_; }
  double step_overhead_s() const { return step_s_; }

 private:
  std::vector<FlowCache::Hop> raw_hops(const Route& route, std::size_t first_hop, std::size_t end_hop) const;
  const Path& plane_path(int gpu_vertex, int which);  // which 1: GPU -> plane, 2: plane -> GPU
  Path make_path(const std::vector<FlowCache::Hop>& hops) const;
  // The raw hops of GPU -> GPU (which 0), GPU -> its switch plane (1), switch plane -> GPU (2): from the
  // cache when one is active (then *id is its raw path id), else computed into `own`.
  const std::vector<FlowCache::Hop>& raw_path(int which, int a, int b, std::vector<FlowCache::Hop>& own, int* id);
  const LinkCalibration& link_calibration(LinkKind kind) const;
  void use_cache();
  // Path of raw path `id` in the cache's table for this FlowCoster's terms.
  const Path& cached_path(int id, const std::vector<FlowCache::Hop>& hops) const;
  int domain_peer(int gpu_vertex) const;
  // One line per class, at the algorithm's efficiency, sorted.
  static StageCost lines_of(const std::vector<FlowCache::FlowClass>& classes, double efficiency, double nic_efficiency);
  // The set's classes under table_ (its paths), built once per table from its raw classes.
  const std::vector<FlowCache::FlowClass>& classes_of(FlowCache::FlowSet& set) const;
  // The raw classes of the flows whose raw path ids are `raw_ids` (all from the cache) and whose flows
  // per link are `loads`.
  std::vector<FlowCache::RawClass> raw_classes_of(const std::vector<int>& raw_ids, const std::vector<double>& loads) const;

  const TopologyGraph& graph_;
  const Calibration& calibration_;
  double algorithm_efficiency_ = 1, launch_s_ = 0, step_s_ = 0;
  double nic_efficiency_ = 1;  // for flows that cross a NIC: algorithm_efficiency_ / FlowTerms::kappa
  bool has_terms_ = false;
  FlowTerms terms_;
  std::map<std::pair<int, int>, Path> paths_;
  std::map<int, Path> up_, down_;
  std::map<int, Path> fabric_up_, fabric_down_;  // by GPU vertex; not in the FlowCache (raw -1)
  const Path& fabric_path(int gpu_vertex, bool up);
  mutable std::map<int, int> peer_of_domain_[2];
  FlowCache* cache_ = nullptr;
  FlowCache::Table* table_ = nullptr;
  mutable std::array<const LinkCalibration*, 8> link_cal_{};  // by LinkKind
};

}  // namespace racksim
