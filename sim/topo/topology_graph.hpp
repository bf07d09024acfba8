#pragma once
// TopologyGraph: a TopologySpec instantiated for R racks. Vertices are devices (GPU, CPU, NVSwitch chip,
// NIC, InfiniBand switch), edges are links with kind, per-direction bandwidth and latency. Parallel
// physical links between the same two devices (a GPU's links to one NVSwitch chip) are one edge with
// `links` > 1 and the summed bandwidth. Boost.Graph stays inside the .cpp files.
#include <memory>
#include <string>
#include <vector>

#include "sim/topo/nvlink_partitions.hpp"
#include "sim/topo/topology_spec.hpp"

namespace racksim {

enum class VertexKind { gpu, cpu, nvswitch, nic, ib_switch };
const char* to_string(VertexKind kind);

struct Vertex {
  VertexKind kind = VertexKind::gpu;
  std::string name;        // unique: "r0.t3.gpu1", "d0.st4.sw1", "r1.leaf.rail2", "spine.rail2", "core"
  std::string type;        // spec type id (gpu/cpu/nic types); empty for switches
  int rack = -1;           // -1 outside one rack (spines, core, chips of a multi-rack domain-scope fabric)
  int tray = -1;           // global compute-tray index (rack * trays_per_rack + tray in rack)
  int domain = -1;         // NVLink domain index for GPUs and switch chips
  int index = -1;          // global index within its kind (gpu 0..N-1, nic 0..M-1, ...)
  int local = -1;          // index within its tray (gpu/cpu/nic), chip within the domain, rail for IB leaves
  int switch_tray = -1;    // for nvswitch chips: switch-tray index within the domain
  double switch_latency_s = 0;  // latency added when a route passes through this vertex
  int fabric = -1;         // physical NVLink domain (GPUs, chips); `domain` differs once partitions are applied
};

struct Edge {
  int a = -1, b = -1;      // vertex ids
  LinkKind kind = LinkKind::pcie;
  std::string type;        // link type id ("" for NIC ports and IB links, which come from nic/scale_out)
  int links = 1;           // parallel physical links aggregated into this edge
  double bandwidth_Bps = 0;  // per direction, all `links` together
  double latency_s = 0;
  int share_group = -1;    // edges with the same id >= 0 share one capacity (C2C of one superchip)
  std::string name;
};

struct TopologySummary {
  int racks = 0, gpus = 0, cpus = 0, trays = 0, switch_trays = 0, switch_chips = 0, gpu_nvlinks = 0, nics = 0;
  int nvlink_domains = 0, gpus_per_domain = 0;
  double nvlink_aggregate_TBps = 0;  // sum over GPU NVLinks of both directions
  double hbm_total_TB = 0, lpddr_total_TB = 0, host_memory_total_TB = 0;  // integrated GPUs add no HBM
};

// What a graph of `racks` racks of `spec` holds and costs, computed from the spec alone (no graph is
// built, any racks up to INT_MAX): vertices and edges exactly as TopologyGraph's constructor makes them,
// and the memory to build it (measured on GB200 NVL72, NVL36x2 and HGX H100 graphs: peak RSS of
// `racksim show`, connectivity check included; docs/performance.md, issue 14).
struct GraphEstimate {
  double vertices = 0, edges = 0;
  double bytes = 0;  // peak while building, the process's own start-up memory not included
};
GraphEstimate estimate_graph(const TopologySpec& spec, double racks);
// The racks a request may ask for in the memory budget (sim/core/memory_budget.hpp) with
// `reserved_bytes` already spoken for: the largest multiple of the NVLink domain's racks whose graph fits
// (0 when not even one domain fits).
int max_racks_in_budget(const TopologySpec& spec, double reserved_bytes = 0);
inline constexpr double kGraphBytesPerVertex = 300;
inline constexpr double kGraphBytesPerEdge = 270;
// Start-up memory of a racksim process (SimGrid and its ns-3 libraries, the catalog): ~40 MB measured.
inline constexpr double kProcessBaseBytes = 48e6;

class TopologyGraph {
 public:
  // Throws InputError, before building anything, if racks is below 1, above the spec's fixed
  // rack.max_racks (where it has one), or its graph's estimate (estimate_graph) is over the memory budget;
  // if racks is not a multiple of the NVLink domain's racks; or if some GPU cannot reach the others.
  TopologyGraph(const TopologySpec& spec, int racks);
  ~TopologyGraph();
  TopologyGraph(TopologyGraph&&) noexcept;
  TopologyGraph& operator=(TopologyGraph&&) noexcept;

  const TopologySpec& spec() const { return spec_; }
  int racks() const { return racks_; }
  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<Edge>& edges() const { return edges_; }
  const std::vector<int>& incident_edges(int vertex) const { return incident_[vertex]; }
  int other_end(int edge, int vertex) const { return edges_[edge].a == vertex ? edges_[edge].b : edges_[edge].a; }

  int gpu_count() const { return static_cast<int>(gpu_vertices_.size()); }
  int gpu_vertex(int gpu_index) const { return gpu_vertices_.at(gpu_index); }
  int gpus_per_tray() const { return static_cast<int>(spec_.tray.gpus.size()); }
  // GPUs of the largest NVLink domain (partition, once partitions are applied).
  int gpus_per_domain() const;
  bool same_nvlink_domain(int vertex_a, int vertex_b) const;
  // NVLink domains GPUs are grouped by: the physical ones, or the partitions once applied.
  int nvlink_domain_count() const;
  // Physical NVLink domains (switch fabrics), whatever the partitioning.
  int fabric_count() const;
  // Splits the NVLink domains into partitions (sim/topo/nvlink_partitions.hpp): GPU `domain` ids become
  // partition indices (-1 outside every partition). Replaces any earlier partitioning; call it before a
  // Simulation or model is built on the graph.
  void apply_partitions(NvlinkPartitioning partitioning);
  bool partitioned() const { return !partitioning_.partitions.empty(); }
  const NvlinkPartitioning& partitioning() const { return partitioning_; }
  // The NIC serving a GPU (-1 if none), the GPU's host CPU.
  int nic_of_gpu(int gpu_vertex) const;
  int cpu_of_gpu(int gpu_vertex) const;
  // The scale-out spine switch joining NIC rail `rail`'s leaves (where CollNet's fabric plane sits), -1 when
  // the system has no scale-out fabric or no such rail. rails(): the NIC rails (NICs per tray).
  int spine_of_rail(int rail) const;
  int rails() const { return static_cast<int>(spine_by_rail_.size()); }
  // Finds a vertex by name, or by the aliases gpuN / cpuN / nicN (global index); -1 if none.
  int find_vertex(const std::string& name_or_alias) const;

  TopologySummary summary() const;

 private:
  friend class RouteFinder;
  int add_vertex(Vertex v);
  int add_edge(Edge e);
  void check_connected() const;

  TopologySpec spec_;
  int racks_ = 1;
  std::vector<Vertex> vertices_;
  std::vector<Edge> edges_;
  std::vector<std::vector<int>> incident_;
  std::vector<int> gpu_vertices_, cpu_vertices_, nic_vertices_;
  std::vector<int> nic_by_gpu_vertex_, cpu_by_gpu_vertex_;
  std::vector<int> spine_by_rail_;
  NvlinkPartitioning partitioning_;
};

}  // namespace racksim
