#include "models/analytic/flow_cost.hpp"

#include <algorithm>
#include <limits>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/routes.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

double StageCost::time(double bytes) const {
  double t = 0;
  for (const auto& [alpha, per_byte] : lines) t = std::max(t, alpha + bytes * per_byte);
  return t;
}

FlowCoster::FlowCoster(const TopologyGraph& graph, const Calibration& calibration, const std::string& op_slash_algo,
                       double bytes)
    : graph_(graph), calibration_(calibration) {
  const AlgorithmCalibration& a = calibration.algorithm(op_slash_algo);
  algorithm_efficiency_ = a.efficiency_at(bytes);
  if (!(algorithm_efficiency_ > 0)) algorithm_efficiency_ = 1;
  launch_s_ = units::us_to_s(a.launch_overhead_us);
  step_s_ = units::us_to_s(a.step_overhead_us);
}

FlowCoster::FlowCoster(const TopologyGraph& graph, const Calibration& calibration, const FlowTerms& terms)
    : graph_(graph), calibration_(calibration), has_terms_(true), terms_(terms) {
  algorithm_efficiency_ = terms.efficiency > 0 ? terms.efficiency : 1;
  launch_s_ = terms.no_latency ? 0 : terms.launch_s;
  step_s_ = 0;
}

namespace {
// Link keys: a kind tag in the top bits, then the id, then the direction.
constexpr long long kEdge = 0, kPort = 1, kShare = 2, kTrunk = 3;
long long link_key(long long tag, long long id, int direction) { return (tag << 48) | (id << 1) | direction; }
}  // namespace

FlowCoster::Path FlowCoster::make_path(const Route& route, std::size_t first_hop, std::size_t end_hop) const {
  Path p;
  p.alpha_s = step_s_;
  bool crosses_nic = false;
  for (std::size_t i = first_hop; i < end_hop && i < route.hops.size(); ++i) {
    const RouteHop& h = route.hops[i];
    const LinkCalibration& lc = calibration_.link(h.kind, terms_.arch);
    crosses_nic = crosses_nic || h.kind == LinkKind::nic;
    p.alpha_s += h.latency_s + units::us_to_s(lc.extra_latency_us);
    const double capacity = h.bandwidth_Bps * lc.bandwidth_efficiency * algorithm_efficiency_;
    long long key;
    if (h.from >= 0 && h.to >= 0 && h.edges.size() == 1) {
      const Edge& e = graph_.edges()[h.edges[0]];
      const int dir = h.from == e.a ? 0 : 1;
      key = e.share_group >= 0 ? link_key(kShare, e.share_group, dir) : link_key(kEdge, h.edges[0], dir);
    } else if (h.from >= 0) {
      key = link_key(kPort, h.from, 0);  // GPU port, towards the switch plane
    } else if (h.to >= 0) {
      key = link_key(kPort, h.to, 1);    // GPU port, from the switch plane
    } else {
      const int dir = graph_.vertices()[route.src].rack < graph_.vertices()[route.dst].rack ? 0 : 1;
      key = link_key(kTrunk, h.edges.empty() ? 0 : h.edges[0], dir);
    }
    p.links.emplace_back(key, capacity);
  }
  p.crosses_nic = crosses_nic;
  // NCCL's per-step latency is the whole step's latency; the wire's is part of it (never less than the wire).
  if (has_terms_)
    p.alpha_s = terms_.no_latency || terms_.latency_at_launch ? 0 : std::max(p.alpha_s, crosses_nic ? terms_.net_step_s : terms_.intra_step_s);
  return p;
}

const FlowCoster::Path& FlowCoster::gpu_to_gpu(int src, int dst) {
  const auto it = paths_.find({src, dst});
  if (it != paths_.end()) return it->second;
  const Route r = find_route(graph_, src, dst);
  return paths_.emplace(std::make_pair(src, dst), make_path(r, 0, r.hops.size())).first->second;
}

int FlowCoster::domain_peer(int gpu_vertex) const {
  const int domain = graph_.vertices()[gpu_vertex].domain;
  if (domain < 0)
    throw InputError("--algo", "", graph_.vertices()[gpu_vertex].name + " outside any NVLink domain",
                     "GPUs of an NVLink domain for switch-plane (NVLS) transfers");
  // Two GPUs of the domain, so that every GPU has a peer other than itself.
  auto& first = peer_of_domain_[0];
  auto& second = peer_of_domain_[1];
  if (!first.count(domain)) {
    for (int g = 0; g < graph_.gpu_count(); ++g) {
      const int v = graph_.gpu_vertex(g);
      if (graph_.vertices()[v].domain != domain) continue;
      if (!first.count(domain)) {
        first[domain] = v;
      } else {
        second[domain] = v;
        break;
      }
    }
  }
  if (first[domain] != gpu_vertex) return first[domain];
  const auto it = second.find(domain);
  return it == second.end() ? -1 : it->second;
}

const FlowCoster::Path& FlowCoster::gpu_to_switch(int gpu) {
  const auto it = up_.find(gpu);
  if (it != up_.end()) return it->second;
  const int peer = domain_peer(gpu);
  Path p;
  if (peer >= 0) p = make_path(find_route(graph_, gpu, peer), 0, 1);
  return up_.emplace(gpu, p).first->second;
}

const FlowCoster::Path& FlowCoster::switch_to_gpu(int gpu) {
  const auto it = down_.find(gpu);
  if (it != down_.end()) return it->second;
  const int peer = domain_peer(gpu);
  Path p;
  if (peer >= 0) {
    const Route r = find_route(graph_, peer, gpu);
    p = make_path(r, r.hops.size() - 1, r.hops.size());
  }
  return down_.emplace(gpu, p).first->second;
}

double FlowCoster::plane_reduce_s_per_byte(int domain) {
  double sum = 0;
  for (int g = 0; g < graph_.gpu_count(); ++g) {
    const int v = graph_.gpu_vertex(g);
    if (graph_.vertices()[v].domain != domain) continue;
    const Path& up = gpu_to_switch(v);
    if (!up.links.empty()) sum += up.links.front().second;
  }
  return sum > 0 ? 1 / sum : 0;
}

StageCost FlowCoster::stage(const std::vector<const Path*>& flows) const {
  // Flows per link: sorted keys, counted by binary search (a std::map here was 13 % of a planner search).
  std::vector<long long> keys;
  for (const Path* f : flows)
    for (const auto& [key, cap] : f->links) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  auto load = [&keys](long long key) {
    const auto range = std::equal_range(keys.begin(), keys.end(), key);
    return static_cast<double>(range.second - range.first);
  };
  StageCost c;
  c.lines.reserve(flows.size());
  for (const Path* f : flows) {
    double per_byte = 0;
    for (const auto& [key, cap] : f->links)
      per_byte = std::max(per_byte, cap > 0 ? load(key) / cap : std::numeric_limits<double>::infinity());
    c.lines.emplace_back(f->alpha_s, per_byte);
  }
  std::sort(c.lines.begin(), c.lines.end());
  c.lines.erase(std::unique(c.lines.begin(), c.lines.end()), c.lines.end());
  return c;
}

}  // namespace racksim
