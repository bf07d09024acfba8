// PlatformModel: what each failure item does to hosts, links and routes, per partition mode. The
// semantics and their sources are in docs/failures.md; in short:
//  * a compute tray (a host reboot) or a GPU leaves: its GPUs cannot take part, its links are down;
//  * switch trays, switch chips, NVLink access links and NVL36x2 trunk links: in full-bandwidth mode (the
//    default) a GPU that loses an access link is parked and the loss of a switch makes every partition on
//    it UNHEALTHY (NMX Manager "Partition Health"); in adaptive-bandwidth mode the links are simply gone
//    and every GPU runs on what is left;
//  * a NIC: the GPU reaches the network through a healthy NIC of its tray (NCCL's PXN, src/graph/paths.cc);
//  * an IB uplink cable: the leaf's uplink loses one cable's share;
//  * an IMEX daemon: collectives across trays that include that tray cannot start MNNVL.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/platform/platform_model.hpp"
#include "sim/topo/routes.hpp"

namespace racksim {

namespace {

bool is_gpu_chip_edge(const TopologyGraph& g, int e) {
  const Edge& edge = g.edges()[e];
  const auto ka = g.vertices()[edge.a].kind, kb = g.vertices()[edge.b].kind;
  return edge.kind == LinkKind::nvlink && ((ka == VertexKind::gpu && kb == VertexKind::nvswitch) ||
                                           (ka == VertexKind::nvswitch && kb == VertexKind::gpu));
}

std::string partition_name(const TopologyGraph& g, int domain) {
  return g.partitioned() ? g.partitioning().partitions.at(domain).name : "d" + std::to_string(domain);
}

// A path from a GPU to a NIC of its own tray through no other GPU and no switch (PCIe, or C2C + Grace +
// PCIe), with every edge up; empty when there is none (the GPU then needs PXN to reach that NIC).
std::vector<RouteHop> in_tray_path(const TopologyGraph& g, int gpu, int nic, const std::vector<double>& edge_fraction) {
  Route r;
  try {
    r = find_route(g, gpu, nic);
  } catch (const InputError&) {
    return {};
  }
  const int tray = g.vertices()[gpu].tray;
  for (const auto& h : r.hops) {
    if (h.from < 0 || h.to < 0 || g.vertices()[h.from].tray != tray || g.vertices()[h.to].tray != tray) return {};
    for (int e : h.edges)
      if (edge_fraction[e] == 0) return {};
  }
  return r.hops;
}

}  // namespace

void PlatformModel::apply_failures(const FailureScenario& failures) {
  const auto& g = *graph_;
  validate_failures(failures, g);
  vertex_down_.assign(g.vertices().size(), 0);
  const bool full = failures.mode == PartitionMode::full_bandwidth;
  auto fail_vertex = [&](int v, const std::string& why) {
    vertex_down_[v] = 1;
    for (int e : g.incident_edges(v)) {
      edge_fraction_[e] = 0;
      edge_failure_[e] = why;
    }
  };
  auto take_gpu = [&](int gpu, const std::string& reason) {
    if (gpu_failure_[gpu].empty()) gpu_failure_[gpu] = reason;
  };
  // Full-bandwidth mode: every partition holding a GPU for which `hit` is true stops (UNHEALTHY).
  auto unhealthy = [&](const std::function<bool(const Vertex&)>& hit, const std::string& reason) {
    std::set<int> partitions;
    for (int i = 0; i < g.gpu_count(); ++i) {
      const Vertex& v = g.vertices()[g.gpu_vertex(i)];
      if (v.domain >= 0 && hit(v)) partitions.insert(v.domain);
    }
    for (int i = 0; i < g.gpu_count(); ++i) {
      const int d = g.vertices()[g.gpu_vertex(i)].domain;
      if (partitions.count(d))
        take_gpu(i, "NVLink partition " + partition_name(g, d) + " is UNHEALTHY (" + reason +
                        "; full-bandwidth mode, NMX-M Partition Health)");
    }
  };
  for (const auto& item : failures.items) {
    const std::string why = "--fail " + item.text;
    switch (item.kind) {
      case FailureItem::Kind::tray:
        // A tray is a host: its GPUs, CPUs and NICs all go (seed course section 8, "Failure domains").
        for (std::size_t v = 0; v < g.vertices().size(); ++v)
          if (g.vertices()[v].tray == item.index) fail_vertex(static_cast<int>(v), why);
        for (int i = 0; i < g.gpu_count(); ++i)
          if (g.vertices()[g.gpu_vertex(i)].tray == item.index)
            take_gpu(i, "compute tray " + std::to_string(item.index) + " is down (" + why + ")");
        break;
      case FailureItem::Kind::gpu:
        fail_vertex(g.gpu_vertex(item.index), why);
        take_gpu(item.index, "GPU " + std::to_string(item.index) + " is down (" + why + ")");
        break;
      case FailureItem::Kind::switch_tray:
      case FailureItem::Kind::switch_chip: {
        const bool tray = item.kind == FailureItem::Kind::switch_tray;
        std::set<int> fabrics;
        for (std::size_t v = 0; v < g.vertices().size(); ++v) {
          const Vertex& vx = g.vertices()[v];
          if (vx.kind != VertexKind::nvswitch) continue;
          if (item.domain >= 0 && vx.fabric != item.domain) continue;
          if ((tray ? vx.switch_tray : vx.local) != item.index) continue;
          fail_vertex(static_cast<int>(v), why);
          fabrics.insert(vx.fabric);
        }
        if (full)
          unhealthy([&](const Vertex& v) { return fabrics.count(v.fabric) > 0; },
                    std::string("lost switch ") + (tray ? "tray " : "chip ") + item.text.substr(item.text.find(':') + 1));
        break;
      }
      case FailureItem::Kind::nvlink: {
        const int gv = g.gpu_vertex(item.index);
        std::vector<int> ports;
        for (int e : g.incident_edges(gv))
          if (is_gpu_chip_edge(g, e)) ports.push_back(e);
        if (item.chip >= static_cast<int>(ports.size()))
          throw InputError("--fail", "", "'" + item.text + "'",
                           "nvlink:G.C with C in [0, " + std::to_string(ports.size()) + ") for GPU " + std::to_string(item.index));
        edge_fraction_[ports[item.chip]] = 0;
        edge_failure_[ports[item.chip]] = why;
        if (full)
          take_gpu(item.index, "GPU " + std::to_string(item.index) + " is parked (NO_NVLINK: it lost its NVLink to " +
                                   g.vertices()[g.other_end(ports[item.chip], gv)].name +
                                   "; full-bandwidth mode takes it out of its partition, NMX-M Partition Health)");
        break;
      }
      case FailureItem::Kind::trunk: {
        const auto& d = *g.spec().nvlink_domain;
        const int reached = d.switch_trays * d.chips_per_switch_tray / d.racks;
        for (std::size_t e = 0; e < g.edges().size(); ++e) {
          const Edge& edge = g.edges()[e];
          const Vertex &a = g.vertices()[edge.a], &b = g.vertices()[edge.b];
          if (a.kind != VertexKind::nvswitch || b.kind != VertexKind::nvswitch || a.fabric != item.domain) continue;
          if (a.local % reached != item.index) continue;
          // One physical link of the chip's trunk: its share of the aggregated edge.
          edge_fraction_[e] *= static_cast<double>(edge.links - 1) / edge.links;
          edge_failure_[e] = why;
        }
        if (full)
          unhealthy(
              [&](const Vertex& v) {
                if (v.fabric != item.domain) return false;
                std::set<int> racks;  // a partition spanning both racks of the domain needs the trunk
                for (int i = 0; i < g.gpu_count(); ++i) {
                  const Vertex& o = g.vertices()[g.gpu_vertex(i)];
                  if (o.domain == v.domain) racks.insert(o.rack);
                }
                return racks.size() > 1;
              },
              "lost a trunk link of chip " + std::to_string(item.index));
        break;
      }
      case FailureItem::Kind::nic: fail_vertex(g.find_vertex("nic" + std::to_string(item.index)), why); break;
      case FailureItem::Kind::ib_link: {
        // One uplink cable of the leaf. Assumption: a non-blocking leaf has one uplink cable per NIC port
        // below it (rail-optimised fat tree, docs/decisions.md), so one cable is 1/trays of the uplink.
        const std::string name = "r" + std::to_string(item.domain) + ".leaf.rail" + std::to_string(item.index) + "-uplink";
        for (std::size_t e = 0; e < g.edges().size(); ++e)
          if (g.edges()[e].name == name) {
            const double cables = g.spec().rack.trays;
            edge_fraction_[e] *= (cables - 1) / cables;
            edge_failure_[e] = why;
          }
        break;
      }
      case FailureItem::Kind::imex:
        imex_down_trays_.push_back(item.index);
        imex_down_text_.push_back(why);
        break;
      case FailureItem::Kind::link: {
        for (std::size_t e = 0; e < g.edges().size(); ++e)
          if (g.edges()[e].name == item.link_name) {
            edge_fraction_[e] *= item.bandwidth_fraction;
            edge_failure_[e] = why;
          }
        break;
      }
    }
  }
  choose_substitute_nics();
}

// NCCL picks, at init, a path from every GPU to the network (src/graph/paths.cc, v2.28.9 lines 714-740):
// a NIC reached without another GPU, or PXN: "PCI + NVLink", through the GPU next to the NIC when that GPU
// is NVLink-connected to us on the same node. A dead NIC is simply absent from the node's topology, so
// the GPU that owned it gets the closest healthy NIC of its tray: one on its own CPU first, then the
// others, in NIC order.
void PlatformModel::choose_substitute_nics() {
  const auto& g = *graph_;
  substitute_nic_.assign(g.gpu_count(), -1);
  auto healthy_nic = [&](int nic) {
    if (nic < 0 || vertex_down_[nic]) return false;
    for (int e : g.incident_edges(nic))
      if (g.edges()[e].kind == LinkKind::nic && edge_fraction_[e] == 0) return false;
    return true;
  };
  std::vector<int> gpu_of_nic(g.vertices().size(), -1);
  for (int i = 0; i < g.gpu_count(); ++i) {
    const int nic = g.nic_of_gpu(g.gpu_vertex(i));
    if (nic >= 0) gpu_of_nic[nic] = g.gpu_vertex(i);
  }
  for (int i = 0; i < g.gpu_count(); ++i) {
    const int gv = g.gpu_vertex(i);
    const int own = g.nic_of_gpu(gv);
    if (own < 0 || !gpu_failure_[i].empty() || healthy_nic(own)) continue;
    std::vector<int> candidates;
    for (std::size_t v = 0; v < g.vertices().size(); ++v)
      if (g.vertices()[v].kind == VertexKind::nic && g.vertices()[v].tray == g.vertices()[gv].tray &&
          static_cast<int>(v) != own && healthy_nic(static_cast<int>(v)))
        candidates.push_back(static_cast<int>(v));
    std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      const bool ca = gpu_of_nic[a] >= 0 && g.cpu_of_gpu(gpu_of_nic[a]) == g.cpu_of_gpu(gv);
      const bool cb = gpu_of_nic[b] >= 0 && g.cpu_of_gpu(gpu_of_nic[b]) == g.cpu_of_gpu(gv);
      return ca > cb;
    });
    for (int nic : candidates) {
      const int peer = gpu_of_nic[nic];
      const bool pxn = peer >= 0 && g.same_nvlink_domain(gv, peer) && gpu_failure_[g.vertices()[peer].index].empty();
      const bool direct = !in_tray_path(g, gv, nic, edge_fraction_).empty();
      if (pxn || direct) {
        substitute_nic_[i] = nic;
        break;
      }
    }
  }
}

void PlatformModel::append_graph_route(PlatformRoute& r, int src, int dst) const {
  const auto& g = *graph_;
  const Vertex &vs = g.vertices()[src], &vd = g.vertices()[dst];
  if (vs.kind == VertexKind::gpu && vd.kind == VertexKind::gpu && !g.same_nvlink_domain(src, dst) &&
      (substitute_nic_[vs.index] >= 0 || substitute_nic_[vd.index] >= 0)) {
    append_substituted_route(r, src, dst);
    return;
  }
  const Route graph_route = find_route(g, src, dst);
  for (const auto& h : graph_route.hops) append_hop(r, h.edges, h.from, vs.rack, h.latency_s);
}

void PlatformModel::append_substituted_route(PlatformRoute& r, int src, int dst) const {
  const auto& g = *graph_;
  auto segment = [&](int a, int b) {
    const Route route = find_route(g, a, b);
    for (const auto& h : route.hops) append_hop(r, h.edges, h.from, g.vertices()[a].rack, h.latency_s);
  };
  auto gpu_of_nic = [&](int nic) {
    for (int i = 0; i < g.gpu_count(); ++i)
      if (g.nic_of_gpu(g.gpu_vertex(i)) == nic) return g.gpu_vertex(i);
    return -1;
  };
  // GPU <-> NIC: directly when a path through no other GPU exists, else over NVLink via the NIC's GPU.
  auto leg = [&](int gpu, int nic, bool outbound) {
    const bool direct = !in_tray_path(g, gpu, nic, edge_fraction_).empty();
    const int peer = gpu_of_nic(nic);
    if (direct || peer < 0 || peer == gpu) {
      outbound ? segment(gpu, nic) : segment(nic, gpu);
    } else if (outbound) {
      segment(gpu, peer);
      segment(peer, nic);
    } else {
      segment(nic, peer);
      segment(peer, gpu);
    }
  };
  const int si = g.vertices()[src].index, di = g.vertices()[dst].index;
  const int nic_s = substitute_nic_[si] >= 0 ? substitute_nic_[si] : g.nic_of_gpu(src);
  const int nic_d = substitute_nic_[di] >= 0 ? substitute_nic_[di] : g.nic_of_gpu(dst);
  leg(src, nic_s, true);
  segment(nic_s, nic_d);
  leg(dst, nic_d, false);
}

std::string PlatformModel::imex_failure(const std::vector<int>& gpus) const {
  if (imex_down_trays_.empty() || gpus.empty()) return "";
  const auto& g = *graph_;
  // Trays per NVLink domain: a job asks IMEX only for NVLink between its trays (seed section 8: single-tray
  // jobs do not use it), so only domains where it spans several trays matter.
  std::map<int, std::set<int>> trays_of_domain;
  for (int gpu : gpus) {
    const Vertex& v = g.vertices()[g.gpu_vertex(gpu)];
    if (v.domain >= 0) trays_of_domain[v.domain].insert(v.tray);
  }
  std::set<int> trays;
  for (const auto& [d, t] : trays_of_domain)
    if (t.size() > 1) trays.insert(t.begin(), t.end());
  for (std::size_t i = 0; i < imex_down_trays_.size(); ++i)
    if (trays.count(imex_down_trays_[i]))
      return "the nvidia-imex daemon of compute tray " + std::to_string(imex_down_trays_[i]) + " is down (" +
             imex_down_text_[i] + "): NCCL's multi-node NVLink init fails, a hard error since NCCL 2.27 (seed course "
             "section 6)";
  return "";
}

}  // namespace racksim
