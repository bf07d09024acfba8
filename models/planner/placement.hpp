#pragma once
// RankPlacement: where each rank of a layout runs. Ranks fill fast domains in order (an NVLink domain,
// or the node/rack where there is none): domain d holds ranks [d*g, (d+1)*g) on its first g GPUs, in
// tray order, so the innermost DeviceMesh dimensions share trays and domains; the last trays of each
// domain stay spare when g is smaller than the domain. A rank's mesh coordinates follow the layout's
// order (outermost first, like torch DeviceMesh): rank = ((c0 * n1 + c1) * n2 + c2) ...
#include <map>
#include <string>
#include <vector>

#include "models/planner/layout.hpp"

namespace racksim {

class TopologyGraph;

struct RankLocation {
  int rank = 0;
  int gpu = 0;          // global GPU index (what CollectiveRequest::gpus holds)
  int rack = 0;
  int tray = 0;         // global compute-tray index
  int tray_in_rack = 0;
  int slot = 0;         // GPU position inside the tray (its NIC rail)
  int domain = 0;       // fast domain: NVLink domain, else rack
};

class RankPlacement {
 public:
  // Uses the first `domains_used` fast domains and the first `gpus_per_domain` GPUs of each. InputError
  // if the graph has fewer domains or GPUs.
  RankPlacement(const TopologyGraph& graph, int domains_used, int gpus_per_domain);

  int gpus() const { return domains_used_ * per_domain_; }
  int domains_used() const { return domains_used_; }
  int gpus_per_domain_used() const { return per_domain_; }
  int domain_size() const { return domain_size_; }  // GPUs in one fast domain of the system
  int gpus_per_tray() const { return gpus_per_tray_; }
  const RankLocation& locate(int rank) const { return ranks_.at(rank); }

  // Stride of a mesh dimension in rank space, and a rank's coordinate along it.
  static int stride(const ParallelLayout& layout, MeshDim dim);
  static int coordinate(const ParallelLayout& layout, int rank, MeshDim dim);
  // The ranks of `rank`'s group along `dims` (all other coordinates fixed), in rank order.
  static std::vector<int> group_ranks(const ParallelLayout& layout, int rank, const std::vector<MeshDim>& dims);
  std::vector<int> group_gpus(const ParallelLayout& layout, int rank, const std::vector<MeshDim>& dims) const;

  // Of all groups along `dims`, the one spanning the most fast domains (the first such in rank order):
  // every group synchronises each step, so the slowest prices it.
  std::vector<int> worst_group_ranks(const ParallelLayout& layout, const std::vector<MeshDim>& dims) const;
  // Every group along `dims`, each in rank order, groups ordered by their first rank.
  std::vector<std::vector<int>> all_groups(const ParallelLayout& layout, const std::vector<MeshDim>& dims) const;
  std::vector<int> gpus_of(const std::vector<int>& ranks) const;
  int domains_spanned(const std::vector<int>& ranks) const;

  // True when some group along `dim` spans two fast domains; `example` then names one such group.
  bool crosses_domain(const ParallelLayout& layout, MeshDim dim, std::string* example = nullptr) const;

 private:
  int domains_used_ = 1, per_domain_ = 1, domain_size_ = 1, gpus_per_tray_ = 1;
  std::vector<RankLocation> ranks_;
  // worst_group_ranks answers by (order and sizes of the mesh, dims asked): layouts repeat them often.
  mutable std::map<std::vector<int>, std::vector<int>> worst_cache_;
};

}  // namespace racksim
