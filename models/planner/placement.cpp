#include "models/planner/placement.hpp"

#include <algorithm>
#include <map>

#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

const char* to_string(GroupKind k) {
  switch (k) {
    case GroupKind::tp: return "tp";
    case GroupKind::cp: return "cp";
    case GroupKind::dp: return "dp";
    case GroupKind::pp: return "pp";
    case GroupKind::dp_cp: return "dp x cp";
    case GroupKind::ep: return "ep";
    case GroupKind::etp: return "etp";
    case GroupKind::edp: return "edp";
  }
  return "?";
}

RankPlacement::RankPlacement(const TopologyGraph& graph, int domains_used, int gpus_per_domain)
    : domains_used_(domains_used), per_domain_(gpus_per_domain), gpus_per_tray_(graph.gpus_per_tray()) {
  // Fast domains in order, each with its GPUs in (tray, slot) order.
  std::map<int, std::vector<const Vertex*>> by_domain;
  for (int i = 0; i < graph.gpu_count(); ++i) {
    const Vertex& v = graph.vertices()[graph.gpu_vertex(i)];
    by_domain[v.domain >= 0 ? v.domain : v.rack].push_back(&v);
  }
  domain_size_ = by_domain.empty() ? 0 : static_cast<int>(by_domain.begin()->second.size());
  if (domains_used < 1 || domains_used > static_cast<int>(by_domain.size()))
    throw InputError("--gpus", "", std::to_string(domains_used) + " fast domains",
                     "at most the " + std::to_string(by_domain.size()) + " domains of the system");
  if (gpus_per_domain < 1 || gpus_per_domain > domain_size_)
    throw InputError("--gpus", "", std::to_string(gpus_per_domain) + " GPUs per domain",
                     "1 to " + std::to_string(domain_size_) + " (one domain's GPUs)");
  int d = 0;
  for (auto& [id, gpus] : by_domain) {
    if (d == domains_used) break;
    std::sort(gpus.begin(), gpus.end(), [](const Vertex* a, const Vertex* b) {
      return a->tray != b->tray ? a->tray < b->tray : a->local < b->local;
    });
    for (int k = 0; k < gpus_per_domain; ++k) {
      const Vertex& v = *gpus[k];
      const int trays_per_rack = graph.spec().rack.trays;
      ranks_.push_back(RankLocation{static_cast<int>(ranks_.size()), v.index, v.rack, v.tray,
                                    v.tray - v.rack * trays_per_rack, v.local, d});
    }
    ++d;
  }
}

namespace {
// The expert view of a rank from its attention view: MoE layers fold EP x ETP x EDP over the same
// TP x CP x DP ranks, ETP fastest.
void with_expert_view(const ParallelLayout& l, RankCoords& c) {
  const int i = (c.dp * l.cp + c.cp) * l.tp + c.tp;
  c.etp = i % l.etp;
  c.ep = (i / l.etp) % l.ep;
  c.edp = i / (l.etp * l.ep);
}
}  // namespace

RankCoords RankPlacement::coordinates(const ParallelLayout& l, int rank) {
  RankCoords c;
  int r = rank;
  for (auto it = l.order.rbegin(); it != l.order.rend(); ++it) {
    const int n = l.size(*it);
    const int v = r % n;
    r /= n;
    switch (*it) {
      case MeshDim::pp: c.pp = v; break;
      case MeshDim::dp: c.dp = v; break;
      case MeshDim::cp: c.cp = v; break;
      case MeshDim::tp: c.tp = v; break;
      case MeshDim::ep: break;
    }
  }
  with_expert_view(l, c);
  return c;
}

int RankPlacement::rank_of(const ParallelLayout& l, int pp, int dp, int cp, int tp) {
  int r = 0;
  for (MeshDim d : l.order) {
    const int v = d == MeshDim::pp ? pp : d == MeshDim::dp ? dp : d == MeshDim::cp ? cp : d == MeshDim::tp ? tp : 0;
    r = r * l.size(d) + v;
  }
  return r;
}

namespace {

// The index of a rank's group among the groups of `kind`: the coordinates that stay fixed, mixed-radix.
long group_index(const ParallelLayout& l, const RankCoords& c, GroupKind kind) {
  switch (kind) {
    case GroupKind::tp: return (static_cast<long>(c.pp) * l.dp + c.dp) * l.cp + c.cp;
    case GroupKind::cp: return (static_cast<long>(c.pp) * l.dp + c.dp) * l.tp + c.tp;
    case GroupKind::dp: return (static_cast<long>(c.pp) * l.cp + c.cp) * l.tp + c.tp;
    case GroupKind::pp: return (static_cast<long>(c.dp) * l.cp + c.cp) * l.tp + c.tp;
    case GroupKind::dp_cp: return static_cast<long>(c.pp) * l.tp + c.tp;
    case GroupKind::ep: return (static_cast<long>(c.pp) * l.edp() + c.edp) * l.etp + c.etp;
    case GroupKind::etp: return (static_cast<long>(c.pp) * l.edp() + c.edp) * l.ep + c.ep;
    case GroupKind::edp: return (static_cast<long>(c.pp) * l.ep + c.ep) * l.etp + c.etp;
  }
  return 0;
}

int group_size(const ParallelLayout& l, GroupKind kind) {
  switch (kind) {
    case GroupKind::tp: return l.tp;
    case GroupKind::cp: return l.cp;
    case GroupKind::dp: return l.dp;
    case GroupKind::pp: return l.pp;
    case GroupKind::dp_cp: return l.dp * l.cp;
    case GroupKind::ep: return l.ep;
    case GroupKind::etp: return l.etp;
    case GroupKind::edp: return l.edp();
  }
  return 1;
}

// The groups of one kind in all_groups' order, flat: all_groups sorts them as vectors, which for disjoint
// groups listing their ranks in order is the order of their first ranks, i.e. of first appearance in
// rank order. One allocation per array instead of one per group (worst_group_ranks and crosses_domain
// ran all_groups for every mesh order of a search: ~10 % of an 8-rack one).
struct FlatGroups {
  std::vector<int> ranks;   // every group's ranks, in order, group after group
  std::vector<int> starts;  // where each group starts in `ranks`, and ranks.size() last
  int count() const { return static_cast<int>(starts.size()) - 1; }
};

// `coords`: every rank's coordinates under `l`, in rank order.
FlatGroups flat_groups(const ParallelLayout& l, const std::vector<RankCoords>& coords, GroupKind kind) {
  const int n = l.gpus();
  const std::size_t groups = static_cast<std::size_t>(n / std::max(1, group_size(l, kind)));
  std::vector<int> position(groups, -1);  // group index -> its place by first rank
  std::vector<int> of_rank(static_cast<std::size_t>(n));
  std::vector<int> sizes;
  for (int r = 0; r < n; ++r) {
    int& p = position.at(static_cast<std::size_t>(group_index(l, coords[static_cast<std::size_t>(r)], kind)));
    if (p < 0) p = static_cast<int>(sizes.size()), sizes.push_back(0);
    of_rank[static_cast<std::size_t>(r)] = p;
    ++sizes[static_cast<std::size_t>(p)];
  }
  FlatGroups g;
  g.starts.assign(sizes.size() + 1, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) g.starts[i + 1] = g.starts[i] + sizes[i];
  g.ranks.resize(static_cast<std::size_t>(n));
  std::vector<int> fill(g.starts.begin(), g.starts.end() - 1);
  for (int r = 0; r < n; ++r) g.ranks[static_cast<std::size_t>(fill[static_cast<std::size_t>(of_rank[static_cast<std::size_t>(r)])]++)] = r;
  return g;
}

}  // namespace

std::vector<std::vector<int>> RankPlacement::all_groups(const ParallelLayout& l, GroupKind kind) const {
  const int n = l.gpus();
  const int size = group_size(l, kind);
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(n / std::max(1, size)));
  for (int r = 0; r < n; ++r) groups.at(static_cast<std::size_t>(group_index(l, coordinates(l, r), kind))).push_back(r);
  std::sort(groups.begin(), groups.end());
  return groups;
}

std::vector<int> RankPlacement::gpus_of(const std::vector<int>& ranks) const {
  std::vector<int> out;
  out.reserve(ranks.size());
  for (int r : ranks) out.push_back(ranks_.at(r).gpu);
  return out;
}

int RankPlacement::domains_spanned(const std::vector<int>& ranks) const {
  std::vector<int> doms;
  for (int r : ranks) doms.push_back(ranks_.at(r).domain);
  std::sort(doms.begin(), doms.end());
  return static_cast<int>(std::unique(doms.begin(), doms.end()) - doms.begin());
}

namespace {
// What a layout's rank coordinates depend on: the mesh order and its sizes, EP and ETP.
std::vector<int> coordinates_key(const ParallelLayout& l) {
  std::vector<int> key;
  for (MeshDim d : l.order) key.insert(key.end(), {static_cast<int>(d), l.size(d)});
  key.insert(key.end(), {-1, l.ep, l.etp});
  return key;
}
}  // namespace

const std::vector<RankCoords>& RankPlacement::all_coordinates(const ParallelLayout& l, const std::vector<int>& key) const {
  if (key != coords_key_) {
    // coordinates(l, r) for every r, counting in the mesh's mixed radix (the last dimension of the order
    // fastest) instead of dividing each rank.
    const std::size_t dims = l.order.size();
    std::vector<int> size(dims), digit(dims, 0);
    for (std::size_t k = 0; k < dims; ++k) size[k] = l.size(l.order[k]);
    coords_.resize(static_cast<std::size_t>(l.gpus()));
    for (int r = 0; r < l.gpus(); ++r) {
      RankCoords c;
      for (std::size_t k = 0; k < dims; ++k) {
        switch (l.order[k]) {
          case MeshDim::pp: c.pp = digit[k]; break;
          case MeshDim::dp: c.dp = digit[k]; break;
          case MeshDim::cp: c.cp = digit[k]; break;
          case MeshDim::tp: c.tp = digit[k]; break;
          case MeshDim::ep: break;
        }
      }
      with_expert_view(l, c);
      coords_[static_cast<std::size_t>(r)] = c;
      for (std::size_t k = dims; k-- > 0;) {
        if (++digit[k] < size[k]) break;
        digit[k] = 0;
      }
    }
    coords_key_ = key;
  }
  return coords_;
}

std::vector<int> RankPlacement::worst_group_ranks(const ParallelLayout& l, GroupKind kind) const {
  std::vector<int> key = coordinates_key(l);
  key.push_back(static_cast<int>(kind));
  auto hit = worst_cache_.find(key);
  if (hit != worst_cache_.end()) return hit->second;
  std::vector<int> worst;
  int worst_span = 0;
  key.pop_back();
  const FlatGroups groups = flat_groups(l, all_coordinates(l, key), kind);
  key.push_back(static_cast<int>(kind));
  std::vector<int> seen_in(static_cast<std::size_t>(domains_used_), -1);  // per domain: the last group met there
  for (int gi = 0; gi < groups.count(); ++gi) {
    const auto first = groups.ranks.begin() + groups.starts[static_cast<std::size_t>(gi)];
    const auto last = groups.ranks.begin() + groups.starts[static_cast<std::size_t>(gi) + 1];
    int span = 0;  // domains_spanned of the group
    for (auto r = first; r != last; ++r) {
      int& seen = seen_in.at(static_cast<std::size_t>(ranks_.at(*r).domain));
      if (seen != gi) seen = gi, ++span;
    }
    if (span > worst_span) worst.assign(first, last), worst_span = span;
    if (worst_span == domains_used_) break;
  }
  worst_cache_.emplace(std::move(key), worst);
  return worst;
}

bool RankPlacement::crosses_domain(const ParallelLayout& l, GroupKind kind, std::string* example) const {
  if (group_size(l, kind) == 1) return false;
  const FlatGroups groups = flat_groups(l, all_coordinates(l, coordinates_key(l)), kind);
  for (int gi = 0; gi < groups.count(); ++gi) {
    const int front = groups.ranks[static_cast<std::size_t>(groups.starts[static_cast<std::size_t>(gi)])];
    const int dom = ranks_.at(front).domain;
    for (int k = groups.starts[static_cast<std::size_t>(gi)]; k < groups.starts[static_cast<std::size_t>(gi) + 1]; ++k) {
      const RankLocation& other = ranks_.at(groups.ranks[static_cast<std::size_t>(k)]);
      if (other.domain == dom) continue;
      if (example)
        *example = std::string(to_string(kind)) + " group of rank " + std::to_string(front) + " spans domain " +
                   std::to_string(dom) + " (rack " + std::to_string(ranks_.at(front).rack) + ") and domain " +
                   std::to_string(other.domain) + " (rack " + std::to_string(other.rack) + ")";
      return true;
    }
  }
  return false;
}

}  // namespace racksim
