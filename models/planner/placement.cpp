#include "models/planner/placement.hpp"

#include <algorithm>
#include <map>

#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

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

int RankPlacement::stride(const ParallelLayout& layout, MeshDim dim) {
  int s = 1;
  for (auto it = layout.order.rbegin(); it != layout.order.rend(); ++it) {
    if (*it == dim) return s;
    s *= layout.size(*it);
  }
  return s;
}

int RankPlacement::coordinate(const ParallelLayout& layout, int rank, MeshDim dim) {
  return (rank / stride(layout, dim)) % layout.size(dim);
}

std::vector<int> RankPlacement::group_ranks(const ParallelLayout& layout, int rank, const std::vector<MeshDim>& dims) {
  // Dimensions of the group, outermost first, so the result comes out in rank order.
  std::vector<MeshDim> ordered;
  for (MeshDim d : layout.order)
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) ordered.push_back(d);
  int base = rank;
  for (MeshDim d : ordered) base -= coordinate(layout, rank, d) * stride(layout, d);
  std::vector<int> out{base};
  for (MeshDim d : ordered) {
    std::vector<int> next;
    next.reserve(out.size() * layout.size(d));
    for (int r : out)
      for (int c = 0; c < layout.size(d); ++c) next.push_back(r + c * stride(layout, d));
    out.swap(next);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> RankPlacement::group_gpus(const ParallelLayout& layout, int rank, const std::vector<MeshDim>& dims) const {
  std::vector<int> out;
  for (int r : group_ranks(layout, rank, dims)) out.push_back(ranks_.at(r).gpu);
  return out;
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

// Offsets of a group's members from its base rank (ascending) and whether a rank is a base (all its
// coordinates along the group's dims are 0), from precomputed strides.
struct GroupShape {
  std::vector<int> offsets;
  std::vector<std::pair<int, int>> dims;  // (stride, size) of the group's dims
  bool is_base(int rank) const {
    for (const auto& [st, n] : dims)
      if ((rank / st) % n != 0) return false;
    return true;
  }
};

GroupShape group_shape(const ParallelLayout& layout, const std::vector<MeshDim>& dims) {
  GroupShape g;
  g.offsets = {0};
  for (MeshDim d : layout.order) {  // outermost first
    if (std::find(dims.begin(), dims.end(), d) == dims.end() || layout.size(d) == 1) continue;
    const int st = RankPlacement::stride(layout, d), n = layout.size(d);
    g.dims.emplace_back(st, n);
    std::vector<int> next;
    next.reserve(g.offsets.size() * n);
    for (int o : g.offsets)
      for (int c = 0; c < n; ++c) next.push_back(o + c * st);
    g.offsets.swap(next);
  }
  std::sort(g.offsets.begin(), g.offsets.end());
  return g;
}

}  // namespace

std::vector<std::vector<int>> RankPlacement::all_groups(const ParallelLayout& layout, const std::vector<MeshDim>& dims) const {
  const GroupShape g = group_shape(layout, dims);
  std::vector<std::vector<int>> out;
  for (int r = 0; r < gpus(); ++r) {
    if (!g.is_base(r)) continue;
    std::vector<int> members;
    members.reserve(g.offsets.size());
    for (int o : g.offsets) members.push_back(r + o);
    out.push_back(std::move(members));
  }
  return out;
}

std::vector<int> RankPlacement::worst_group_ranks(const ParallelLayout& layout, const std::vector<MeshDim>& dims) const {
  std::vector<int> key;
  for (MeshDim d : layout.order) key.insert(key.end(), {static_cast<int>(d), layout.size(d)});
  key.push_back(-1);
  for (MeshDim d : dims) key.push_back(static_cast<int>(d));
  auto hit = worst_cache_.find(key);
  if (hit != worst_cache_.end()) return hit->second;
  const GroupShape g = group_shape(layout, dims);
  int worst_base = 0, worst_span = 0;
  if (g.offsets.size() > 1) {
    for (int r = 0; r < gpus(); ++r) {
      if (!g.is_base(r)) continue;
      int span = 1, last = ranks_[r].domain;
      for (int o : g.offsets) {
        const int dom = ranks_[r + o].domain;  // ranks fill domains in order: non-decreasing along the group
        if (dom != last) ++span, last = dom;
      }
      if (span > worst_span) worst_base = r, worst_span = span;
      if (worst_span == domains_used_) break;
    }
  }
  std::vector<int> worst;
  worst.reserve(g.offsets.size());
  for (int o : g.offsets) worst.push_back(worst_base + o);
  worst_cache_.emplace(std::move(key), worst);
  return worst;
}

bool RankPlacement::crosses_domain(const ParallelLayout& layout, MeshDim dim, std::string* example) const {
  if (layout.size(dim) == 1) return false;
  const GroupShape g = group_shape(layout, {dim});
  for (int r = 0; r < gpus(); ++r) {
    if (!g.is_base(r)) continue;
    const int dom = ranks_[r].domain;
    for (int o : g.offsets) {
      const RankLocation& other = ranks_[r + o];
      if (other.domain == dom) continue;
      if (example)
        *example = std::string(to_string(dim)) + " group of rank " + std::to_string(r) + " spans domain " +
                   std::to_string(dom) + " (rack " + std::to_string(ranks_[r].rack) + ") and domain " +
                   std::to_string(other.domain) + " (rack " + std::to_string(other.rack) + ")";
      return true;
    }
  }
  return false;
}

}  // namespace racksim
