#include "sim/topo/routes.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <limits>

#include "sim/core/errors.hpp"

namespace racksim {

namespace {

RouteHop edge_hop(const TopologyGraph& g, int edge_id, int from) {
  const Edge& e = g.edges()[edge_id];
  RouteHop h;
  h.from = from;
  h.to = g.other_end(edge_id, from);
  h.from_name = g.vertices()[h.from].name;
  h.to_name = g.vertices()[h.to].name;
  h.kind = e.kind;
  h.links = e.links;
  h.bandwidth_Bps = e.bandwidth_Bps;
  h.latency_s = e.latency_s + g.vertices()[h.to].switch_latency_s;
  h.edges = {edge_id};
  return h;
}

int edge_between(const TopologyGraph& g, int a, int b) {
  for (int e : g.incident_edges(a))
    if (g.other_end(e, a) == b) return e;
  return -1;
}

bool rack_scoped(const TopologyGraph& g) {
  return g.spec().nvlink_domain && g.spec().nvlink_domain->gpu_links_scope == GpuLinksScope::rack;
}

// The striped switch plane a GPU's NVLinks reach: the domain's, or (rack scope) its rack's part of it.
std::string plane_name(const TopologyGraph& g, int gpu) {
  const auto& v = g.vertices()[gpu];
  std::string name = "nvswitch-plane.d" + std::to_string(v.domain);
  if (rack_scoped(g)) name += ".r" + std::to_string(v.rack);
  return name;
}

// A GPU's NVLink port: all its edges to switch chips, striped.
RouteHop plane_hop(const TopologyGraph& g, int gpu, bool outbound) {
  RouteHop h;
  h.kind = LinkKind::nvlink;
  h.links = 0;
  double switch_latency = 0;
  for (int e : g.incident_edges(gpu)) {
    const Edge& edge = g.edges()[e];
    if (edge.kind != LinkKind::nvlink || g.vertices()[g.other_end(e, gpu)].kind != VertexKind::nvswitch) continue;
    h.links += edge.links;
    h.bandwidth_Bps += edge.bandwidth_Bps;
    h.latency_s = edge.latency_s;
    switch_latency = g.vertices()[g.other_end(e, gpu)].switch_latency_s;
    h.edges.push_back(e);
  }
  const std::string plane = plane_name(g, gpu);
  if (outbound) {
    h.from = gpu;
    h.from_name = g.vertices()[gpu].name;
    h.to_name = plane;
    h.latency_s += switch_latency;
  } else {
    h.to = gpu;
    h.from_name = plane;
    h.to_name = g.vertices()[gpu].name;
  }
  return h;
}

// Rack scope: from the switch plane of src's rack to the plane of dst's rack over the trunk, striped over
// every chip's trunk links; adds the trunk latency and the far chip's switch latency.
RouteHop trunk_hop(const TopologyGraph& g, int src_gpu, int dst_gpu) {
  RouteHop h;
  h.kind = LinkKind::nvlink;
  h.links = 0;
  h.from_name = plane_name(g, src_gpu);
  h.to_name = plane_name(g, dst_gpu);
  const int dst_rack = g.vertices()[dst_gpu].rack;
  for (int e : g.incident_edges(src_gpu)) {
    const int chip = g.other_end(e, src_gpu);
    if (g.vertices()[chip].kind != VertexKind::nvswitch) continue;
    for (int t : g.incident_edges(chip)) {
      const int far = g.other_end(t, chip);
      if (g.vertices()[far].kind != VertexKind::nvswitch || g.vertices()[far].rack != dst_rack) continue;
      h.links += g.edges()[t].links;
      h.bandwidth_Bps += g.edges()[t].bandwidth_Bps;
      h.latency_s = g.edges()[t].latency_s + g.vertices()[far].switch_latency_s;
      h.edges.push_back(t);
    }
  }
  return h;
}

Route finish(Route r) {
  r.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (const auto& h : r.hops) {
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, h.bandwidth_Bps);
    r.latency_s += h.latency_s;
  }
  if (r.hops.empty()) r.bottleneck_Bps = 0;
  return r;
}

// A GPU's way to its own NIC inside the tray: the direct PCIe link where the NIC hangs off the GPU
// (HGX, GB300's ConnectX-8 on PCIe Gen6), else through the GPU's host CPU (GB200: GPU -> NVLink-C2C ->
// Grace -> PCIe -> ConnectX-7, NCCL's path type P2C, src/graph/paths.cc:181). Empty when neither exists.
std::vector<int> gpu_to_nic(const TopologyGraph& g, int gpu, int nic) {
  if (edge_between(g, gpu, nic) >= 0) return {gpu, nic};
  const int cpu = g.cpu_of_gpu(gpu);
  if (cpu >= 0 && edge_between(g, gpu, cpu) >= 0 && edge_between(g, cpu, nic) >= 0) return {gpu, cpu, nic};
  return {};
}

// GPU -> [CPU ->] NIC -> leaf -> spine [-> core -> spine] -> leaf -> NIC [-> CPU] -> GPU, built directly (hot path for
// cross-domain collectives; equal to what the shortest-path search finds on a rail-optimised tree).
// The leaf switch behind a NIC: its first NIC port's far end (-1: none).
int leaf_of(const TopologyGraph& g, int nic) {
  for (int e : g.incident_edges(nic))
    if (g.edges()[e].kind == LinkKind::nic) return g.other_end(e, nic);
  return -1;
}

bool scale_out_route(const TopologyGraph& g, int src, int dst, Route& out) {
  const int nic_s = g.nic_of_gpu(src), nic_d = g.nic_of_gpu(dst);
  if (nic_s < 0 || nic_d < 0) return false;
  auto spine_of = [&](int leaf) {
    for (int e : g.incident_edges(leaf)) {
      const int o = g.other_end(e, leaf);
      if (g.vertices()[o].kind == VertexKind::ib_switch && g.vertices()[o].rack < 0) return o;
    }
    return -1;
  };
  const int leaf_s = leaf_of(g, nic_s), leaf_d = leaf_of(g, nic_d);
  if (leaf_s < 0 || leaf_d < 0) return false;
  const std::vector<int> up = gpu_to_nic(g, src, nic_s), down = gpu_to_nic(g, dst, nic_d);
  if (up.empty() || down.empty()) return false;
  std::vector<int> path = up;
  path.push_back(leaf_s);
  if (leaf_s != leaf_d) {
    const int spine_s = spine_of(leaf_s), spine_d = spine_of(leaf_d);
    path.push_back(spine_s);
    if (spine_s != spine_d) {
      int core = -1;
      for (int e : g.incident_edges(spine_s))
        if (g.vertices()[g.other_end(e, spine_s)].name == "core") core = g.other_end(e, spine_s);
      if (core < 0) return false;
      path.push_back(core);
      path.push_back(spine_d);
    }
    path.push_back(leaf_d);
  }
  path.insert(path.end(), down.rbegin(), down.rend());
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    const int e = edge_between(g, path[i], path[i + 1]);
    if (e < 0) return false;
    out.hops.push_back(edge_hop(g, e, path[i]));
  }
  return true;
}

// GPU -> [CPU ->] NIC -> leaf [-> spine]: a GPU to its own rail's leaf or spine switch (CollNet's fabric
// plane sits at the spine, sim/platform), built directly as scale_out_route builds its half; `reverse` gives
// the way back. Without it every CollNet flow's route was a Dijkstra over a freshly built copy of the graph
// (racksim validate spent most of its time there). False where the switch is not the GPU's own rail's.
bool gpu_fabric_route(const TopologyGraph& g, int gpu, int fabric_switch, bool reverse, Route& out) {
  const int nic = g.nic_of_gpu(gpu);
  if (nic < 0) return false;
  const int leaf = leaf_of(g, nic);
  if (leaf < 0) return false;
  std::vector<int> path = gpu_to_nic(g, gpu, nic);
  if (path.empty()) return false;
  path.push_back(leaf);
  if (fabric_switch != leaf) {
    if (edge_between(g, leaf, fabric_switch) < 0 || g.vertices()[fabric_switch].rack >= 0) return false;
    path.push_back(fabric_switch);
  }
  if (reverse) std::reverse(path.begin(), path.end());
  for (std::size_t i = 0; i + 1 < path.size(); ++i) out.hops.push_back(edge_hop(g, edge_between(g, path[i], path[i + 1]), path[i]));
  return true;
}

// Lowest-latency path (a tiny per-hop cost breaks ties towards fewer hops) that passes through no GPU
// other than the endpoints and no NVSwitch chip (NVLink traffic between GPUs takes the striped plane).
bool shortest_route(const TopologyGraph& g, int src, int dst, Route& out) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                      boost::property<boost::edge_weight_t, double, boost::property<boost::edge_index_t, int>>>;
  Graph bgl(g.vertices().size());
  for (std::size_t i = 0; i < g.edges().size(); ++i) {
    const auto& e = g.edges()[i];
    const double w = e.latency_s + g.vertices()[e.a].switch_latency_s / 2 + g.vertices()[e.b].switch_latency_s / 2 + 1e-12;
    boost::add_edge(e.a, e.b, {w, static_cast<int>(i)}, bgl);
  }
  auto allowed = [&](std::size_t v) {
    const auto kind = g.vertices()[v].kind;
    if (static_cast<int>(v) == src || static_cast<int>(v) == dst) return true;
    return kind != VertexKind::gpu && kind != VertexKind::nvswitch;
  };
  boost::filtered_graph<Graph, boost::keep_all, std::function<bool(std::size_t)>> view(bgl, boost::keep_all(), allowed);
  std::vector<std::size_t> pred(g.vertices().size());
  std::vector<double> dist(g.vertices().size());
  boost::dijkstra_shortest_paths(view, static_cast<std::size_t>(src),
                                 boost::predecessor_map(pred.data()).distance_map(dist.data()));
  if (pred[dst] == static_cast<std::size_t>(dst)) return false;
  std::vector<int> path;
  for (std::size_t v = dst; v != static_cast<std::size_t>(src); v = pred[v]) path.push_back(static_cast<int>(v));
  path.push_back(src);
  std::reverse(path.begin(), path.end());
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    // Among parallel edges pick the lowest latency (ties: lowest id) so routes are deterministic.
    int best = -1;
    for (int e : g.incident_edges(path[i]))
      if (g.other_end(e, path[i]) == path[i + 1] &&
          (best < 0 || g.edges()[e].latency_s < g.edges()[best].latency_s))
        best = e;
    out.hops.push_back(edge_hop(g, best, path[i]));
  }
  return true;
}

}  // namespace

Route find_route(const TopologyGraph& g, int src, int dst) {
  const int n = static_cast<int>(g.vertices().size());
  if (src < 0 || src >= n || dst < 0 || dst >= n)
    throw InputError("route", "", std::to_string(src) + " -> " + std::to_string(dst), "vertex ids in [0, " + std::to_string(n) + ")");
  Route r;
  r.src = src;
  r.dst = dst;
  if (src == dst) return finish(r);
  const auto& vs = g.vertices()[src];
  const auto& vd = g.vertices()[dst];
  if (vs.kind == VertexKind::gpu && vd.kind == VertexKind::gpu) {
    if (g.same_nvlink_domain(src, dst)) {
      r.hops.push_back(plane_hop(g, src, true));
      if (rack_scoped(g) && vs.rack != vd.rack) r.hops.push_back(trunk_hop(g, src, dst));
      r.hops.push_back(plane_hop(g, dst, false));
      return finish(r);
    }
    if (scale_out_route(g, src, dst, r)) return finish(r);
    r.hops.clear();
  }
  if (vs.kind == VertexKind::gpu && vd.kind == VertexKind::ib_switch && gpu_fabric_route(g, src, dst, false, r)) return finish(r);
  if (vs.kind == VertexKind::ib_switch && vd.kind == VertexKind::gpu && gpu_fabric_route(g, dst, src, true, r)) return finish(r);
  r.hops.clear();
  if (!shortest_route(g, src, dst, r))
    throw InputError("route", "", vs.name + " -> " + vd.name,
                     "two devices connected without passing through another GPU");
  return finish(r);
}

}  // namespace racksim
