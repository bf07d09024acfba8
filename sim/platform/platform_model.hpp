#pragma once
// PlatformModel: what the SimGrid platform is made of, as plain data, derived from a TopologyGraph, a
// Calibration and a FailureScenario. No SimGrid here: the engine (sim/engine) instantiates exactly the
// hosts and links a run needs (simgrid_platform.hpp), and unit tests check bandwidths, failures and
// routes without an engine.
//
// * Hosts: every GPU and CPU, one switch-plane host per NVLink domain (it reduces and multicasts for
//   NVLS). Launch and step overheads are pure delays (SimGrid timers), on no host.
// * Links (per direction capacities, bytes/s, after calibration efficiency and failures):
//   - each GPU's NVLink port: ONE split-duplex link, the sum of its healthy edges to the switch chips
//     (exact for striped traffic, TOOLCHAIN.md). Crossing the switch plane adds latency only: the
//     crossbar is never the bottleneck (what SimGrid's FATPIPE would model), so it has no link;
//   - the switch-to-switch trunk between the racks of a rack-scoped domain (NVL36x2): one split-duplex
//     link per rack pair, the sum of its edges;
//   - every other graph edge (PCIe, NIC port, IB uplinks, CPU-CPU) one split-duplex link, except the
//     edges of one share_group (C2C of one superchip), which are ONE split-duplex link together.
// * Routes: the graph's routes (sim/topo/routes.hpp) mapped hop by hop onto those links, with the
//   latency of each hop plus the calibration's extra latency for its link kind.
// * Failures (platform_failures.cpp, docs/failures.md): links down or degraded, GPUs that cannot take
//   part (tray or GPU down, parked, partition UNHEALTHY, by the scenario's partition mode), NICs replaced
//   by a neighbour's (NCCL PXN), IMEX daemons down.
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/calib/calibration.hpp"
#include "sim/engine/failure_scenario.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

struct PlatformHost {
  enum class Kind { gpu, cpu, switch_plane, fabric_plane };
  Kind kind = Kind::gpu;
  std::string name;
  int vertex = -1;       // graph vertex (-1 for switch planes; a fabric plane's is its rail's spine switch)
  int domain = -1;       // NVLink domain (GPUs, switch planes)
  int rail = -1;         // NIC rail of a fabric plane
  double speed = 1;      // "flops"/s: bytes/s of memory for GPUs and CPUs, reduce throughput for planes
  int cores = 1;
};

struct PlatformLink {
  std::string name;            // "<gpu>.nvlink-port", a graph edge name, "<cpu>.c2c", "<planeA>-<planeB>.trunk"
  std::string kind;            // nvlink, c2c, pcie, cpu-cpu, nic, ib
  LinkKind link_kind = LinkKind::nvlink;
  double bandwidth_Bps = 0;    // per direction, after efficiency and failures (0 when down)
  double nominal_Bps = 0;      // per direction, vendor peak of the healthy link(s)
  double latency_s = 0;        // one way, including the calibration's extra latency
  std::vector<int> edges;      // graph edges it stands for
  bool down = false;
};

struct LinkUse {
  int link = -1;
  bool up = true;  // direction of a split-duplex link: up = from its first edge's `a` end (GPU -> switch)
  bool operator==(const LinkUse&) const = default;
};

struct PlatformRoute {
  std::vector<LinkUse> links;
  double latency_s = 0;
  std::string broken;  // non-empty: why the route cannot be used (a failed link, NIC or tray)
};

class PlatformModel {
 public:
  // Throws InputError when a failure item names nothing in the graph.
  PlatformModel(const TopologyGraph& graph, const Calibration& calibration, const FailureScenario& failures);

  const TopologyGraph& graph() const { return *graph_; }
  const std::vector<PlatformHost>& hosts() const { return hosts_; }
  const std::vector<PlatformLink>& links() const { return links_; }

  int gpu_host(int gpu_index) const { return gpu_host_.at(gpu_index); }
  int host_of_vertex(int vertex) const { return host_of_vertex_.at(vertex); }
  // -1 when the system has no NVLink domain of that index.
  int switch_plane_host(int domain) const;
  // The scale-out fabric of NIC rail `rail` (CollNet: the InfiniBand switches of the rail reduce in the
  // network, SHARP), -1 when the system has no scale-out fabric or no such rail.
  int fabric_plane_host(int rail) const;
  int port_link(int gpu_index) const { return port_link_.at(gpu_index); }

  // Route between two hosts (GPU, CPU, switch plane or multicast group), memoised (thread-safe; the
  // reference stays valid). InputError when none exists.
  const PlatformRoute& route(int src_host, int dst_host) const;

  // A multicast group: a virtual host standing for several destination GPUs of one switch plane. The
  // route from the plane to it is every member's port (downwards) at once, so ONE transfer delivers the
  // same bytes to all members at the rate of the slowest port, as the switch replicates a stream.
  // Ids follow hosts(); `host(id)` covers both.
  int multicast_group(const std::vector<int>& member_hosts) const;
  const PlatformHost& host(int id) const;
  int host_count() const;

  // Why a GPU cannot take part (its compute tray is down, it is parked, its partition is UNHEALTHY), or
  // "" when it can.
  const std::string& gpu_failure(int gpu_index) const { return gpu_failure_.at(gpu_index); }
  // Why GPUs on several compute trays of one NVLink domain cannot start NCCL's MNNVL transport together
  // (an IMEX daemon of one of their trays is down), or "" when they can.
  std::string imex_failure(const std::vector<int>& gpu_indices) const;
  // The NIC vertex a GPU reaches the network through when its own NIC is down (NCCL's PXN, or a NIC its
  // host reaches over PCIe), -1 when it uses its own NIC (or none can be found).
  int substitute_nic(int gpu_index) const { return substitute_nic_.at(gpu_index); }

 private:
  void build_hosts();
  void build_links();
  void apply_failures(const FailureScenario& failures);
  void finish_links();
  int link_for_edges(const std::vector<int>& edges, const std::string& name, LinkKind kind);
  PlatformRoute compute_route(int src_host, int dst_host) const;
  void choose_substitute_nics();
  // GPU -> GPU across NVLink domains when a NIC on the way is down: each end reaches a healthy NIC of its
  // tray (PXN through that NIC's GPU, or a path without another GPU), then the NICs' scale-out route.
  void append_substituted_route(PlatformRoute& r, int src_vertex, int dst_vertex) const;
  void append_graph_route(PlatformRoute& r, int src_vertex, int dst_vertex) const;
  void append_hop(PlatformRoute& route, const std::vector<int>& hop_edges, int from_vertex, int src_rack,
                  double hop_latency_s) const;

  const TopologyGraph* graph_;
  std::vector<PlatformHost> hosts_;
  std::vector<PlatformLink> links_;
  std::vector<int> host_of_vertex_, gpu_host_, switch_host_of_domain_, port_link_;
  std::vector<int> fabric_host_of_rail_;  // per NIC rail: its fabric plane host
  std::vector<int> plane_gpu_vertex_;     // per NVLink domain: its lowest-index GPU's vertex, where the plane sits
  std::vector<int> link_of_edge_;        // graph edge -> link (-1: GPU-chip edges map to the port)
  std::vector<double> edge_fraction_;    // 1 healthy, 0 down, else degraded
  std::vector<std::string> edge_failure_;  // the failure item that touched the edge
  std::vector<std::string> gpu_failure_;
  std::vector<char> vertex_down_;        // NICs (and other devices) taken down by a failure item
  std::vector<int> substitute_nic_;      // per GPU index: the NIC vertex used instead of its own, or -1
  std::vector<int> imex_down_trays_;     // compute trays whose nvidia-imex daemon is down
  std::vector<std::string> imex_down_text_;
  std::map<std::vector<int>, int> multi_edge_links_;  // trunk edge sets -> link
  std::vector<double> extra_latency_s_, efficiency_;  // per LinkKind
  mutable std::mutex memo_mutex_;  // routes_ and the groups are filled on demand, possibly from threads
  mutable std::unordered_map<std::uint64_t, PlatformRoute> routes_;  // (src << 32 | dst) -> route
  mutable std::deque<PlatformHost> group_hosts_;  // deque: references stay valid as groups are added
  mutable std::deque<std::vector<int>> group_members_;
  mutable std::map<std::vector<int>, int> group_ids_;
};

}  // namespace racksim
