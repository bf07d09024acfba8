#include "sim/platform/platform_model.hpp"

#include <algorithm>
#include <tuple>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/routes.hpp"

namespace racksim {

namespace {

bool is_port_edge(const TopologyGraph& g, const Edge& e) {
  if (e.kind != LinkKind::nvlink) return false;
  const auto ka = g.vertices()[e.a].kind, kb = g.vertices()[e.b].kind;
  return (ka == VertexKind::gpu && kb == VertexKind::nvswitch) || (ka == VertexKind::nvswitch && kb == VertexKind::gpu);
}

bool is_trunk_edge(const TopologyGraph& g, const Edge& e) {
  return g.vertices()[e.a].kind == VertexKind::nvswitch && g.vertices()[e.b].kind == VertexKind::nvswitch;
}

}  // namespace

PlatformModel::PlatformModel(const TopologyGraph& graph, const Calibration& calibration, const FailureScenario& failures)
    : graph_(&graph) {
  extra_latency_s_.assign(6, 0.0);
  efficiency_.assign(6, 1.0);
  // Link calibration of the system's GPU architecture (NVLink efficiency differs between Hopper and
  // Blackwell: NCCL's SM90/SM100_NVLINK_BW, topo.h:19-21).
  const std::string arch = graph.gpu_count() > 0
      ? architecture_of(graph.spec().gpu_type(graph.vertices()[graph.gpu_vertex(0)].type).compute_capability) : "";
  for (LinkKind k : {LinkKind::nvlink, LinkKind::c2c, LinkKind::pcie, LinkKind::cpu_cpu, LinkKind::nic, LinkKind::ib}) {
    extra_latency_s_[static_cast<int>(k)] = units::us_to_s(calibration.link(k, arch).extra_latency_us);
    efficiency_[static_cast<int>(k)] = calibration.link(k, arch).bandwidth_efficiency;
  }
  edge_fraction_.assign(graph.edges().size(), 1.0);
  edge_failure_.assign(graph.edges().size(), "");
  gpu_failure_.assign(graph.gpu_count(), "");
  build_hosts();
  build_links();
  apply_failures(failures);
  finish_links();
}

void PlatformModel::build_hosts() {
  const auto& g = *graph_;
  host_of_vertex_.assign(g.vertices().size(), -1);
  gpu_host_.assign(g.gpu_count(), -1);
  for (std::size_t v = 0; v < g.vertices().size(); ++v) {
    const Vertex& vx = g.vertices()[v];
    PlatformHost h;
    h.vertex = static_cast<int>(v);
    h.name = vx.name;
    if (vx.kind == VertexKind::gpu) {
      h.kind = PlatformHost::Kind::gpu;
      h.domain = vx.domain;
      // A GPU host's speed is its HBM bandwidth (bytes/s): the optional reduction kernel is charged there.
      h.speed = units::GBps_to_Bps(g.spec().gpu_type(vx.type).hbm_bandwidth_GBps);
    } else if (vx.kind == VertexKind::cpu) {
      h.kind = PlatformHost::Kind::cpu;
      h.speed = units::GBps_to_Bps(g.spec().cpu_type(vx.type).memory_bandwidth_GBps);
    } else {
      continue;
    }
    if (!(h.speed > 0)) h.speed = 1e12;
    host_of_vertex_[v] = static_cast<int>(hosts_.size());
    if (vx.kind == VertexKind::gpu) gpu_host_[vx.index] = static_cast<int>(hosts_.size());
    hosts_.push_back(std::move(h));
  }
  // One plane per NVLink domain GPUs are grouped by: a partition once partitions are applied (its own
  // clique; NVLS multicast objects do not span partitions).
  // Found once here, not per route: scanning every GPU for each GPU <-> plane route cost O(GPUs^2),
  // 100 s of compiling at 100 008 GPUs (issue 14).
  plane_gpu_vertex_.assign(static_cast<std::size_t>(std::max(0, g.nvlink_domain_count())), -1);
  for (int i = g.gpu_count() - 1; i >= 0; --i) {
    const int d = g.vertices()[g.gpu_vertex(i)].domain;
    if (d >= 0 && d < static_cast<int>(plane_gpu_vertex_.size())) plane_gpu_vertex_[d] = g.gpu_vertex(i);
  }
  for (int d = 0; d < g.nvlink_domain_count(); ++d) {
    PlatformHost h;
    h.kind = PlatformHost::Kind::switch_plane;
    h.name = "nvswitch-plane.d" + std::to_string(d);
    h.domain = d;
    switch_host_of_domain_.push_back(static_cast<int>(hosts_.size()));
    hosts_.push_back(std::move(h));
  }
  // One fabric plane per NIC rail, at the rail's spine switch (TopologyGraph::spine_of_rail): a CollNet
  // transfer goes GPU -> NIC -> leaf -> spine and back.
  for (int rail = 0; rail < g.rails(); ++rail) {
    PlatformHost h;
    h.kind = PlatformHost::Kind::fabric_plane;
    h.name = "fabric-plane.rail" + std::to_string(rail);
    h.vertex = g.spine_of_rail(rail);
    h.rail = rail;
    fabric_host_of_rail_.push_back(static_cast<int>(hosts_.size()));
    hosts_.push_back(std::move(h));
  }
}

int PlatformModel::fabric_plane_host(int rail) const {
  if (rail < 0 || rail >= static_cast<int>(fabric_host_of_rail_.size())) return -1;
  return fabric_host_of_rail_[rail];
}

int PlatformModel::switch_plane_host(int domain) const {
  if (domain < 0 || domain >= static_cast<int>(switch_host_of_domain_.size())) return -1;
  return switch_host_of_domain_[domain];
}

int PlatformModel::link_for_edges(const std::vector<int>& edges, const std::string& name, LinkKind kind) {
  PlatformLink l;
  l.name = name;
  l.kind = to_string(kind);
  l.link_kind = kind;
  l.edges = edges;
  for (int e : edges) l.latency_s = std::max(l.latency_s, graph_->edges()[e].latency_s);
  l.latency_s += extra_latency_s_[static_cast<int>(kind)];
  links_.push_back(std::move(l));
  const int id = static_cast<int>(links_.size()) - 1;
  for (int e : edges) link_of_edge_[e] = id;
  return id;
}

void PlatformModel::build_links() {
  const auto& g = *graph_;
  link_of_edge_.assign(g.edges().size(), -1);
  port_link_.assign(g.gpu_count(), -1);
  // GPU NVLink ports.
  for (int i = 0; i < g.gpu_count(); ++i) {
    const int gv = g.gpu_vertex(i);
    std::vector<int> edges;
    for (int e : g.incident_edges(gv))
      if (is_port_edge(g, g.edges()[e])) edges.push_back(e);
    if (edges.empty()) continue;
    port_link_[i] = link_for_edges(edges, g.vertices()[gv].name + ".nvlink-port", LinkKind::nvlink);
  }
  // Switch-to-switch trunks: one link per (domain, rack pair).
  std::map<std::tuple<int, int, int>, std::vector<int>> trunks;
  std::map<int, std::vector<int>> groups;
  for (std::size_t e = 0; e < g.edges().size(); ++e) {
    const Edge& edge = g.edges()[e];
    if (link_of_edge_[e] >= 0 || is_port_edge(g, edge)) continue;
    if (is_trunk_edge(g, edge)) {
      const int ra = g.vertices()[edge.a].rack, rb = g.vertices()[edge.b].rack;
      trunks[{g.vertices()[edge.a].domain, std::min(ra, rb), std::max(ra, rb)}].push_back(static_cast<int>(e));
    } else if (edge.share_group >= 0) {
      groups[edge.share_group].push_back(static_cast<int>(e));
    } else {
      link_for_edges({static_cast<int>(e)}, edge.name, edge.kind);
    }
  }
  for (const auto& [key, edges] : trunks) {
    const auto& [domain, ra, rb] = key;
    const int id = link_for_edges(edges,
                                  "nvswitch-plane.d" + std::to_string(domain) + ".r" + std::to_string(ra) +
                                      "-r" + std::to_string(rb) + ".trunk",
                                  LinkKind::nvlink);
    multi_edge_links_[edges] = id;
  }
  for (const auto& [group, edges] : groups) {
    // Name after the device every edge of the group touches (the superchip's CPU), else the first edge.
    const Edge& first = g.edges()[edges.front()];
    int common = -1;
    for (int candidate : {first.a, first.b}) {
      bool all = true;
      for (int e : edges) all = all && (g.edges()[e].a == candidate || g.edges()[e].b == candidate);
      if (all) common = candidate;
    }
    const std::string name = common >= 0 ? g.vertices()[common].name + "." + to_string(first.kind)
                                         : first.name + ".shared";
    link_for_edges(edges, name, first.kind);
  }
}

void PlatformModel::finish_links() {
  const auto& g = *graph_;
  for (auto& l : links_) {
    const Edge& first = g.edges()[l.edges.front()];
    const bool summed = is_port_edge(g, first) || is_trunk_edge(g, first);
    double nominal = 0, healthy = 0, min_fraction = 1;
    bool any_up = false;
    for (int e : l.edges) {
      const double f = edge_fraction_[e];
      if (summed) {
        nominal += g.edges()[e].bandwidth_Bps;
        healthy += g.edges()[e].bandwidth_Bps * f;
      } else if (f > 0) {
        min_fraction = std::min(min_fraction, f);
      }
      any_up = any_up || f > 0;
    }
    if (!summed) {  // one edge, or a share group: one capacity
      nominal = first.bandwidth_Bps;
      healthy = any_up ? nominal * min_fraction : 0;
    }
    l.nominal_Bps = nominal;
    l.bandwidth_Bps = healthy * efficiency_[static_cast<int>(l.link_kind)];
    l.down = !(healthy > 0);
  }
  // A switch plane reduces at the line rate of all its GPUs' ports together (assumption: NVLS reduces in
  // flight; its Exec only makes the plane a shared resource when several collectives use it).
  for (int d = 0; d < static_cast<int>(switch_host_of_domain_.size()); ++d) {
    double sum = 0;
    for (int i = 0; i < g.gpu_count(); ++i)
      if (g.vertices()[g.gpu_vertex(i)].domain == d && port_link_[i] >= 0) sum += links_[port_link_[i]].bandwidth_Bps;
    hosts_[switch_host_of_domain_[d]].speed = sum > 0 ? sum : 1.0;
  }
  // A fabric plane reduces at the line rate of all its rail's NIC ports together (SHARP aggregates in the
  // switch at wire speed; the measured shortfall is the CollNet algorithm's calibration, docs/model.md).
  for (int rail = 0; rail < static_cast<int>(fabric_host_of_rail_.size()); ++rail) {
    const int fh = fabric_host_of_rail_[rail];
    double sum = 0;
    for (const auto& l : links_) {
      if (l.link_kind != LinkKind::nic) continue;
      const Edge& e = g.edges()[l.edges.front()];
      const int nic = g.vertices()[e.a].kind == VertexKind::nic ? e.a : e.b;
      const int leaf = nic == e.a ? e.b : e.a;
      if (g.vertices()[nic].kind == VertexKind::nic && g.vertices()[leaf].kind == VertexKind::ib_switch &&
          g.vertices()[leaf].local == rail)
        sum += l.bandwidth_Bps;
    }
    hosts_[fh].speed = sum > 0 ? sum : 1.0;
  }
}

const PlatformRoute& PlatformModel::route(int src_host, int dst_host) const {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src_host)) << 32) |
                            static_cast<std::uint32_t>(dst_host);
  {
    std::lock_guard<std::mutex> lock(memo_mutex_);
    auto it = routes_.find(key);
    if (it != routes_.end()) return it->second;
  }
  PlatformRoute r = compute_route(src_host, dst_host);  // may call route() for group members
  std::lock_guard<std::mutex> lock(memo_mutex_);
  return routes_.emplace(key, std::move(r)).first->second;
}

// One hop of a graph route onto the platform's links (a GPU's port for a plane hop).
void PlatformModel::append_hop(PlatformRoute& route, const std::vector<int>& hop_edges, int from_vertex, int src_rack,
                               double hop_latency_s) const {
  const auto& g = *graph_;
  const Edge& first = g.edges()[hop_edges.front()];
  LinkUse use;
  if (is_port_edge(g, first)) {
    const int gpu_vertex = g.vertices()[first.a].kind == VertexKind::gpu ? first.a : first.b;
    use.link = port_link_[g.vertices()[gpu_vertex].index];
    use.up = from_vertex == gpu_vertex;
  } else if (is_trunk_edge(g, first)) {
    use.link = link_of_edge_[hop_edges.front()];
    use.up = g.vertices()[first.a].rack == src_rack;
  } else {
    use.link = link_of_edge_[hop_edges.front()];
    use.up = from_vertex == first.a;
  }
  const PlatformLink& link = links_[use.link];
  route.links.push_back(use);
  route.latency_s += hop_latency_s + extra_latency_s_[static_cast<int>(link.link_kind)];
  if (!route.broken.empty()) return;
  if (link.down) {
    std::string why;
    for (int e : link.edges)
      if (!edge_failure_[e].empty()) why = edge_failure_[e];
    route.broken = "link " + link.name + " is down" + (why.empty() ? "" : " (" + why + ")");
    return;
  }
  // A single edge of a shared link (one GPU's C2C) can be down while the link stays up for the other.
  if (hop_edges.size() == 1 && edge_fraction_[hop_edges.front()] == 0)
    route.broken = "link " + first.name + " is down (" + edge_failure_[hop_edges.front()] + ")";
}

int PlatformModel::multicast_group(const std::vector<int>& member_hosts) const {
  std::lock_guard<std::mutex> lock(memo_mutex_);
  auto it = group_ids_.find(member_hosts);
  if (it != group_ids_.end()) return it->second;
  const int id = static_cast<int>(hosts_.size() + group_hosts_.size());
  PlatformHost h;
  h.kind = PlatformHost::Kind::switch_plane;  // a sink reached only from its plane
  h.name = "multicast-group" + std::to_string(group_hosts_.size());
  h.domain = member_hosts.empty() ? -1 : host(member_hosts.front()).domain;
  group_hosts_.push_back(h);
  group_members_.push_back(member_hosts);
  group_ids_.emplace(member_hosts, id);
  return id;
}

int PlatformModel::host_count() const {
  std::lock_guard<std::mutex> lock(memo_mutex_);
  return static_cast<int>(hosts_.size() + group_hosts_.size());
}

const PlatformHost& PlatformModel::host(int id) const {
  if (id >= 0 && id < static_cast<int>(hosts_.size())) return hosts_[id];
  std::lock_guard<std::mutex> lock(memo_mutex_);
  return group_hosts_.at(id - hosts_.size());
}

PlatformRoute PlatformModel::compute_route(int src_host, int dst_host) const {
  const auto& g = *graph_;
  PlatformRoute r;
  if (src_host == dst_host) return r;
  if (dst_host >= static_cast<int>(hosts_.size())) {  // a multicast group: the union of its members' routes
    std::vector<int> members;
    {
      std::lock_guard<std::mutex> lock(memo_mutex_);
      members = group_members_.at(dst_host - hosts_.size());
    }
    for (int member : members) {
      const PlatformRoute& m = route(src_host, member);
      for (const auto& use : m.links)
        if (std::find(r.links.begin(), r.links.end(), use) == r.links.end()) r.links.push_back(use);
      r.latency_s = std::max(r.latency_s, m.latency_s);
      if (r.broken.empty()) r.broken = m.broken;
    }
    return r;
  }
  const PlatformHost& hs = hosts_.at(src_host);
  const PlatformHost& hd = hosts_.at(dst_host);
  using K = PlatformHost::Kind;
  if (hs.kind == K::fabric_plane || hd.kind == K::fabric_plane) {
    const PlatformHost& plane = hs.kind == K::fabric_plane ? hs : hd;
    const PlatformHost& other = hs.kind == K::fabric_plane ? hd : hs;
    const int nic = other.kind == K::gpu ? g.nic_of_gpu(other.vertex) : -1;
    if (nic < 0 || g.vertices()[nic].local != plane.rail)
      throw InputError("schedule", "", hs.name + " -> " + hd.name,
                       "a fabric plane exchanges data only with GPUs whose own NIC is on its rail");
    append_graph_route(r, hs.vertex, hd.vertex);  // GPU -> NIC -> leaf -> spine, or back
    return r;
  }
  if (hs.kind == K::switch_plane || hd.kind == K::switch_plane) {
    const PlatformHost& plane = hs.kind == K::switch_plane ? hs : hd;
    const PlatformHost& other = hs.kind == K::switch_plane ? hd : hs;
    if (other.kind != K::gpu || other.domain != plane.domain)
      throw InputError("schedule", "", hs.name + " -> " + hd.name,
                       "a switch plane exchanges data only with the GPUs of its own NVLink domain");
    const int gpu_index = g.vertices()[other.vertex].index;
    const int port = port_link_[gpu_index];
    if (port < 0)
      throw InputError("schedule", "", hs.name + " -> " + hd.name, "a GPU with NVLinks to the switch plane");
    // The plane host sits in the domain's first rack; a rack-scoped domain reaches it over the trunk.
    const int plane_gpu = plane_gpu_vertex_.at(static_cast<std::size_t>(plane.domain));
    double switch_latency = 0, port_latency = 0;
    for (int e : links_[port].edges) {
      port_latency = std::max(port_latency, g.edges()[e].latency_s);
      const Edge& edge = g.edges()[e];
      switch_latency = std::max(switch_latency, g.vertices()[edge.a == other.vertex ? edge.b : edge.a].switch_latency_s);
    }
    const bool outbound = hs.kind == K::gpu;
    std::vector<RouteHop> trunk;
    if (g.vertices()[plane_gpu].rack != g.vertices()[other.vertex].rack) {
      const Route via = find_route(g, outbound ? other.vertex : plane_gpu, outbound ? plane_gpu : other.vertex);
      for (const auto& h : via.hops)
        if (h.from < 0 && h.to < 0) trunk.push_back(h);
    }
    const int src_rack = g.vertices()[outbound ? other.vertex : plane_gpu].rack;
    if (outbound) {
      append_hop(r, links_[port].edges, other.vertex, src_rack, port_latency + switch_latency);
      for (const auto& h : trunk) append_hop(r, h.edges, -1, src_rack, h.latency_s);
    } else {
      for (const auto& h : trunk) append_hop(r, h.edges, -1, src_rack, h.latency_s);
      append_hop(r, links_[port].edges, -1, src_rack, port_latency);
    }
    return r;
  }
  append_graph_route(r, hs.vertex, hd.vertex);
  return r;
}

}  // namespace racksim
