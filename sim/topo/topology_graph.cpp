#include "sim/topo/topology_graph.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/core/errors.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"

namespace racksim {

const char* to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::gpu: return "gpu";
    case VertexKind::cpu: return "cpu";
    case VertexKind::nvswitch: return "nvswitch";
    case VertexKind::nic: return "nic";
    case VertexKind::ib_switch: return "ib-switch";
  }
  return "?";
}

TopologyGraph::~TopologyGraph() = default;
TopologyGraph::TopologyGraph(TopologyGraph&&) noexcept = default;
TopologyGraph& TopologyGraph::operator=(TopologyGraph&&) noexcept = default;

int TopologyGraph::add_vertex(Vertex v) {
  vertices_.push_back(std::move(v));
  incident_.emplace_back();
  return static_cast<int>(vertices_.size()) - 1;
}

int TopologyGraph::add_edge(Edge e) {
  const int id = static_cast<int>(edges_.size());
  incident_[e.a].push_back(id);
  incident_[e.b].push_back(id);
  edges_.push_back(std::move(e));
  return id;
}

GraphEstimate estimate_graph(const TopologySpec& spec, double racks) {
  GraphEstimate e;
  const double trays = racks * spec.rack.trays;
  e.vertices = trays * static_cast<double>(spec.tray.cpus.size() + spec.tray.gpus.size() + spec.tray.nics.size());
  e.edges = trays * static_cast<double>(spec.tray.links.size());
  const double gpus = trays * static_cast<double>(spec.tray.gpus.size());
  if (spec.nvlink_domain) {
    const auto& d = *spec.nvlink_domain;
    const double domains = std::floor(racks / d.racks);
    const double chips = static_cast<double>(d.switch_trays) * d.chips_per_switch_tray;
    const bool rack_scope = d.gpu_links_scope == GpuLinksScope::rack;
    const double reached = rack_scope ? chips / d.racks : chips;
    e.vertices += domains * chips;
    e.edges += gpus * reached;                                                        // GPU-chip edges
    if (rack_scope) e.edges += domains * reached * d.racks * (d.racks - 1) / 2.0;  // trunks
  }
  if (spec.scale_out && !spec.tray.nics.empty()) {
    const double rails = static_cast<double>(spec.tray.nics.size());
    e.vertices += (racks > 1 ? 1 : 0) + rails + racks * rails;          // core, spines, leaves
    e.edges += trays * rails + racks * rails + (racks > 1 ? rails : 0);  // ports, uplinks, spine-core
  }
  // Peak RSS of `racksim show` less the process's own (~40 MB), fitted on GB200 NVL72 (202 vertices and
  // 1 534 edges per rack: 64-1 389 racks, 0.46 MB per rack measured), NVL36x2 and HGX H100 (30 vertices,
  // 65 edges per node: 512-4 096 nodes, 23 KB per node measured): a vertex (its names, incidence list, BGL
  // copy for the connectivity check) ~300 B, an edge ~270 B, rounded up; vectors grown by doubling are in
  // the constants.
  e.bytes = e.vertices * kGraphBytesPerVertex + e.edges * kGraphBytesPerEdge;
  return e;
}

int max_racks_in_budget(const TopologySpec& spec, double reserved_bytes) {
  const double budget = static_cast<double>(memory_budget().bytes) - kProcessBaseBytes - reserved_bytes;
  const int step = spec.nvlink_domain ? spec.nvlink_domain->racks : 1;
  if (estimate_graph(spec, step).bytes > budget) return 0;
  // The estimate grows with racks: bisect over multiples of the domain's racks.
  long lo = 1, hi = std::max(1, spec.rack.max_racks / step);
  if (estimate_graph(spec, static_cast<double>(hi) * step).bytes <= budget) return static_cast<int>(hi * step);
  while (hi - lo > 1) {
    const long mid = lo + (hi - lo) / 2;
    (estimate_graph(spec, static_cast<double>(mid) * step).bytes <= budget ? lo : hi) = mid;
  }
  return static_cast<int>(lo * step);
}

TopologyGraph::TopologyGraph(const TopologySpec& spec, int racks) : spec_(spec), racks_(racks) {
  const std::string where = "--racks";
  if (racks < 1 || (spec.rack.capped() && racks > spec.rack.max_racks))
    throw InputError(where, "", std::to_string(racks),
                     spec.rack.capped() ? "an integer in [1, " + std::to_string(spec.rack.max_racks) + "] for " + spec.id
                                        : "a positive integer");
  // Refused before anything is built: what the graph would need against what this process may use.
  const GraphEstimate estimate = estimate_graph(spec, racks);
  const MemoryBudget& budget = memory_budget();
  if (estimate.bytes + kProcessBaseBytes > static_cast<double>(budget.bytes)) {
    const int fit = max_racks_in_budget(spec);
    char counts[96];
    std::snprintf(counts, sizeof counts, "%.3g vertices, %.3g edges", estimate.vertices, estimate.edges);
    throw InputError(where, "", std::to_string(racks) + " (a graph of " + counts + ", ~" + format_MB(estimate.bytes) +
                                    " to build)",
                     "at most " + std::to_string(fit) + " " + spec.rack.unit + "s of " + spec.id + " in the memory budget of " +
                         budget.describe());
  }
  if (racks > spec.rack.max_racks)  // kUncappedRacks: only a topology of very small racks gets here
    throw InputError(where, "", std::to_string(racks), "at most " + std::to_string(spec.rack.max_racks) + " " + spec.rack.unit + "s");
  const int domain_racks = spec.nvlink_domain ? spec.nvlink_domain->racks : 1;
  if (racks % domain_racks != 0)
    throw InputError(where, "", std::to_string(racks),
                     "a multiple of " + std::to_string(domain_racks) + " for " + spec.id +
                         " (one NVLink domain spans " + std::to_string(domain_racks) + " racks)");
  if (racks > domain_racks && !spec.scale_out)
    throw InputError(where, "", std::to_string(racks),
                     std::to_string(domain_racks) + " for " + spec.id + " (it has no scale-out fabric)");

  const int trays_per_rack = spec.rack.trays;
  int next_gpu = 0, next_cpu = 0, next_nic = 0, share_groups = 0;
  // 1. Tray devices and tray-internal links.
  for (int r = 0; r < racks; ++r) {
    for (int t = 0; t < trays_per_rack; ++t) {
      const int tray = r * trays_per_rack + t;
      const int domain = spec.nvlink_domain ? r / domain_racks : -1;
      const std::string prefix = "r" + std::to_string(r) + ".t" + std::to_string(t) + ".";
      std::map<std::string, int> local_ids;
      for (std::size_t i = 0; i < spec.tray.cpus.size(); ++i) {
        const auto& c = spec.tray.cpus[i];
        Vertex v{VertexKind::cpu, prefix + c.id, c.type, r, tray, -1, next_cpu++, static_cast<int>(i)};
        local_ids[c.id] = add_vertex(v);
        cpu_vertices_.push_back(local_ids[c.id]);
      }
      for (std::size_t i = 0; i < spec.tray.gpus.size(); ++i) {
        const auto& g = spec.tray.gpus[i];
        Vertex v{VertexKind::gpu, prefix + g.id, g.type, r, tray, domain, next_gpu++, static_cast<int>(i)};
        local_ids[g.id] = add_vertex(v);
        gpu_vertices_.push_back(local_ids[g.id]);
      }
      for (std::size_t i = 0; i < spec.tray.nics.size(); ++i) {
        const auto& n = spec.tray.nics[i];
        Vertex v{VertexKind::nic, prefix + n.id, n.type, r, tray, -1, next_nic++, static_cast<int>(i)};
        local_ids[n.id] = add_vertex(v);
        nic_vertices_.push_back(local_ids[n.id]);
      }
      std::map<std::string, int> groups;
      for (const auto& l : spec.tray.links) {
        const auto& type = spec.link_type(l.type);
        Edge e;
        e.a = local_ids.at(l.a);
        e.b = local_ids.at(l.b);
        e.kind = type.kind;
        e.type = type.id;
        e.bandwidth_Bps = units::GBps_to_Bps(type.bandwidth_GBps);
        e.latency_s = units::us_to_s(type.latency_us);
        if (!l.share_group.empty()) {
          auto [it, inserted] = groups.emplace(l.share_group, share_groups);
          if (inserted) ++share_groups;
          e.share_group = it->second;
        }
        e.name = prefix + l.a + "-" + l.b;
        add_edge(e);
      }
    }
  }
  nic_by_gpu_vertex_.assign(vertices_.size(), -1);
  cpu_by_gpu_vertex_.assign(vertices_.size(), -1);
  for (int tray = 0; tray < racks * trays_per_rack; ++tray) {
    const int gpus = static_cast<int>(spec.tray.gpus.size());
    for (int i = 0; i < gpus; ++i) {
      const int gv = gpu_vertices_[tray * gpus + i];
      for (std::size_t c = 0; c < spec.tray.cpus.size(); ++c)
        if (spec.tray.cpus[c].id == spec.tray.gpus[i].cpu)
          cpu_by_gpu_vertex_[gv] = cpu_vertices_[tray * spec.tray.cpus.size() + c];
      for (std::size_t n = 0; n < spec.tray.nics.size(); ++n)
        if (spec.tray.nics[n].gpu == spec.tray.gpus[i].id)
          nic_by_gpu_vertex_[gv] = nic_vertices_[tray * spec.tray.nics.size() + n];
    }
  }
  // 2. NVLink domains: switch chips, and one edge per (GPU, chip) carrying that chip's links. With
  // gpu_links_scope "rack" each GPU reaches only its own rack's chips, and chip k of every rack is joined
  // to chip k of the domain's other racks by a non-blocking trunk (as many links as the chip has GPU links).
  if (spec.nvlink_domain) {
    const auto& d = *spec.nvlink_domain;
    const auto& link = spec.link_type(d.link_type);
    const bool rack_scope = d.gpu_links_scope == GpuLinksScope::rack;
    const int domains = racks / d.racks;
    const int gpus_per_rack = trays_per_rack * static_cast<int>(spec.tray.gpus.size());
    const int gpus_in_domain = d.racks * gpus_per_rack;
    const int chips_in_domain = d.switch_trays * d.chips_per_switch_tray;
    const int chips_reached = rack_scope ? chips_in_domain / d.racks : chips_in_domain;
    const int switch_trays_per_rack = rack_scope ? d.switch_trays / d.racks : d.switch_trays;
    int chip_index = 0;
    for (int dom = 0; dom < domains; ++dom) {
      std::vector<int> chips;
      for (int st = 0; st < d.switch_trays; ++st)
        for (int c = 0; c < d.chips_per_switch_tray; ++c) {
          const int rack = rack_scope ? dom * d.racks + st / switch_trays_per_rack : (d.racks == 1 ? dom : -1);
          Vertex v{VertexKind::nvswitch,
                   "d" + std::to_string(dom) + ".st" + std::to_string(st) + ".sw" + std::to_string(c),
                   "", rack, -1, dom, chip_index++,
                   st * d.chips_per_switch_tray + c, st, units::us_to_s(d.switch_latency_us)};
          chips.push_back(add_vertex(v));
        }
      for (int g = dom * gpus_in_domain; g < (dom + 1) * gpus_in_domain; ++g) {
        const int gv = gpu_vertices_[g];
        const int first_chip = rack_scope ? ((g - dom * gpus_in_domain) / gpus_per_rack) * chips_reached : 0;
        for (int k = 0; k < chips_reached; ++k) {
          const int chip = chips[first_chip + k];
          Edge e;
          e.a = gv;
          e.b = chip;
          e.kind = LinkKind::nvlink;
          e.type = link.id;
          e.links = d.gpu_links_per_chip[k];
          e.bandwidth_Bps = units::GBps_to_Bps(link.bandwidth_GBps) * e.links;
          e.latency_s = units::us_to_s(link.latency_us);
          e.name = vertices_[gv].name + "-" + vertices_[chip].name;
          add_edge(e);
        }
      }
      if (!rack_scope) continue;
      for (int k = 0; k < chips_reached; ++k)
        for (int r1 = 0; r1 < d.racks; ++r1)
          for (int r2 = r1 + 1; r2 < d.racks; ++r2) {
            Edge trunk;
            trunk.a = chips[r1 * chips_reached + k];
            trunk.b = chips[r2 * chips_reached + k];
            trunk.kind = LinkKind::nvlink;
            trunk.type = link.id;
            trunk.links = gpus_per_rack * d.gpu_links_per_chip[k] / (d.racks - 1);
            trunk.bandwidth_Bps = units::GBps_to_Bps(link.bandwidth_GBps) * trunk.links;
            trunk.latency_s = units::us_to_s(d.inter_rack_latency_us);
            trunk.name = vertices_[trunk.a].name + "-" + vertices_[trunk.b].name + "-trunk";
            add_edge(trunk);
          }
    }
  }
  // 3. Scale-out: rail-optimised fat tree. NIC k of every tray is on rail k; per (rack, rail) a leaf,
  // per rail a spine joining the leaves, one core joining the rails. Uplinks carry the rack's rail
  // bandwidth divided by the oversubscription (1 = non-blocking).
  if (spec.scale_out && !spec.tray.nics.empty()) {
    const auto& so = *spec.scale_out;
    const double hop_latency_s = units::us_to_s(so.switch_latency_us);
    const int rails = static_cast<int>(spec.tray.nics.size());
    const int core = racks > 1 ? add_vertex(Vertex{VertexKind::ib_switch, "core", "", -1, -1, -1, 0, -1, -1, hop_latency_s}) : -1;
    for (int rail = 0; rail < rails; ++rail) {
      const auto& nic_type = spec.nic_type(spec.tray.nics[rail].type);
      const double nic_Bps = units::GBps_to_Bps(nic_type.bandwidth_GBps);
      const int spine = add_vertex(Vertex{VertexKind::ib_switch, "spine.rail" + std::to_string(rail), "", -1, -1,
                                          -1, 1 + rail, rail, -1, hop_latency_s});
      spine_by_rail_.push_back(spine);
      for (int r = 0; r < racks; ++r) {
        const int leaf = add_vertex(Vertex{VertexKind::ib_switch,
                                           "r" + std::to_string(r) + ".leaf.rail" + std::to_string(rail), "", r,
                                           -1, -1, 1 + rails + r * rails + rail, rail, -1, hop_latency_s});
        for (int t = 0; t < trays_per_rack; ++t) {
          const int nv = nic_vertices_[(r * trays_per_rack + t) * rails + rail];
          Edge port;
          port.a = nv;
          port.b = leaf;
          port.kind = LinkKind::nic;
          port.type = nic_type.id;
          port.bandwidth_Bps = nic_Bps;
          port.latency_s = units::us_to_s(nic_type.latency_us);
          port.name = vertices_[nv].name + "-port";
          add_edge(port);
        }
        Edge up;
        up.a = leaf;
        up.b = spine;
        up.kind = LinkKind::ib;
        up.bandwidth_Bps = nic_Bps * trays_per_rack / so.oversubscription;
        up.latency_s = 0;
        up.name = vertices_[leaf].name + "-uplink";
        add_edge(up);
      }
      if (core >= 0) {
        Edge up;
        up.a = spine;
        up.b = core;
        up.kind = LinkKind::ib;
        up.bandwidth_Bps = nic_Bps * trays_per_rack * racks / so.oversubscription;
        up.name = vertices_[spine].name + "-core";
        add_edge(up);
      }
    }
  }
  for (auto& v : vertices_) v.fabric = v.domain;
  check_connected();
}

void TopologyGraph::check_connected() const {
  using BglGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  BglGraph g(vertices_.size());
  for (const auto& e : edges_) boost::add_edge(static_cast<std::size_t>(e.a), static_cast<std::size_t>(e.b), g);
  std::vector<int> component(vertices_.size());
  boost::connected_components(g, component.data());
  if (gpu_vertices_.empty()) return;
  const int first = component[gpu_vertices_[0]];
  for (int gv : gpu_vertices_)
    if (component[gv] != first)
      throw InputError(spec_.id, "/tray/links", "GPU " + vertices_[gv].name + " has no route to " +
                                                    vertices_[gpu_vertices_[0]].name,
                       "a topology where every GPU reaches every other GPU (NVLink domain, links or NICs)");
}

int TopologyGraph::gpus_per_domain() const {
  if (partitioned()) {
    std::size_t largest = 0;
    for (const auto& p : partitioning_.partitions) largest = std::max(largest, p.gpus.size());
    return static_cast<int>(largest);
  }
  return gpus_per_nvlink_domain(spec_);
}

bool TopologyGraph::same_nvlink_domain(int a, int b) const {
  const auto& va = vertices_[a];
  const auto& vb = vertices_[b];
  return va.domain >= 0 && va.domain == vb.domain;
}

int TopologyGraph::nic_of_gpu(int gpu_vertex) const { return nic_by_gpu_vertex_.at(gpu_vertex); }
int TopologyGraph::cpu_of_gpu(int gpu_vertex) const { return cpu_by_gpu_vertex_.at(gpu_vertex); }
int TopologyGraph::spine_of_rail(int rail) const {
  return rail >= 0 && rail < rails() ? spine_by_rail_[static_cast<std::size_t>(rail)] : -1;
}

int TopologyGraph::find_vertex(const std::string& text) const {
  for (std::size_t i = 0; i < vertices_.size(); ++i)
    if (vertices_[i].name == text) return static_cast<int>(i);
  auto alias = [&](const std::string& prefix, const std::vector<int>& list) -> int {
    if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size()) return -2;
    const std::string digits = text.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) return -2;
    const std::size_t idx = std::stoul(digits);
    return idx < list.size() ? list[idx] : -1;
  };
  for (auto [prefix, list] : {std::pair{"gpu", &gpu_vertices_}, {"cpu", &cpu_vertices_}, {"nic", &nic_vertices_}}) {
    const int v = alias(prefix, *list);
    if (v != -2) return v;
  }
  return -1;
}

TopologySummary TopologyGraph::summary() const {
  TopologySummary s;
  s.racks = racks_;
  s.gpus = gpu_count();
  s.cpus = static_cast<int>(cpu_vertices_.size());
  s.nics = static_cast<int>(nic_vertices_.size());
  s.trays = racks_ * spec_.rack.trays;
  if (spec_.nvlink_domain) {
    s.nvlink_domains = nvlink_domain_count();
    s.switch_trays = fabric_count() * spec_.nvlink_domain->switch_trays;
    s.switch_chips = s.switch_trays * spec_.nvlink_domain->chips_per_switch_tray;
  }
  s.gpus_per_domain = gpus_per_domain();
  for (const auto& e : edges_) {
    if (e.kind != LinkKind::nvlink) continue;
    if (vertices_[e.a].kind != VertexKind::gpu && vertices_[e.b].kind != VertexKind::gpu) continue;
    s.gpu_nvlinks += e.links;
    s.nvlink_aggregate_TBps += 2 * e.bandwidth_Bps / units::kTB;
  }
  for (int gv : gpu_vertices_) {
    const auto& t = spec_.gpu_type(vertices_[gv].type);
    if (!t.integrated) s.hbm_total_TB += static_cast<double>(t.hbm_capacity_bytes) / units::kTB;  // integrated: CPU memory
  }
  for (int cv : cpu_vertices_) {
    const auto& t = spec_.cpu_type(vertices_[cv].type);
    const double tb = t.memory_capacity_GB * units::kGB / units::kTB;
    s.host_memory_total_TB += tb;
    if (t.memory_kind.rfind("LPDDR", 0) == 0) s.lpddr_total_TB += tb;
  }
  return s;
}

}  // namespace racksim
