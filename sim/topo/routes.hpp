#pragma once
// Routes between two devices of a TopologyGraph. Inside an NVLink domain a GPU-to-GPU route is striped
// over all switch chips (NCCL spreads traffic over every NVLink): two hops, GPU -> switch plane -> GPU,
// each the GPU's aggregated NVLink port; when the GPUs' links reach only their own rack's chips
// (gpu_links_scope "rack", NVL36x2) and the GPUs sit in different racks, a third hop between the two
// planes crosses the switch-to-switch trunk. Elsewhere the route is the lowest-latency path that does not
// pass through another GPU: GPU -> NIC -> IB leaf -> spine -> leaf -> NIC -> GPU across racks,
// GPU -> CPU over C2C or PCIe, CPU -> CPU.
#include <string>
#include <vector>

#include "sim/topo/topology_graph.hpp"

namespace racksim {

struct RouteHop {
  int from = -1, to = -1;   // vertex ids; -1 for a striped switch plane (and both for a trunk hop)
  std::string from_name, to_name;
  LinkKind kind = LinkKind::nvlink;
  int links = 1;            // physical links carrying this hop
  double bandwidth_Bps = 0; // per direction
  double latency_s = 0;     // link latency plus the switch latency of `to` when it is a switch
  std::vector<int> edges;   // graph edges this hop uses (all of a GPU's NVLink edges for a plane hop)
};

struct Route {
  int src = -1, dst = -1;
  std::vector<RouteHop> hops;
  double bottleneck_Bps = 0;
  double latency_s = 0;
};

// Throws InputError when no route exists (e.g. a CPU asked to reach another rack's GPU).
Route find_route(const TopologyGraph& graph, int src_vertex, int dst_vertex);

}  // namespace racksim
