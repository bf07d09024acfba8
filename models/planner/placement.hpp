#pragma once
// RankPlacement: where each rank of a layout runs. Ranks fill fast domains in order (an NVLink domain,
// or the node/rack where there is none): domain d holds ranks [d*g, (d+1)*g) on its first g GPUs, in
// tray order, so the innermost mesh dimensions share trays and domains; the last trays of each domain
// stay spare when g is smaller than the domain. A rank's attention coordinates follow the layout's mesh
// order (outermost first, like torch DeviceMesh and Megatron's RankGenerator); its expert coordinates
// fold the TP-CP-DP index i = (dp x CP + cp) x TP + tp of its pipeline stage into (edp, ep, etp) with
// etp fastest, as Megatron's expert rank generator does.
#include <map>
#include <string>
#include <vector>

#include "models/planner/layout.hpp"

namespace racksim {

class TopologyGraph;

// Communication groups of a layout: the ranks that differ only in these coordinates.
enum class GroupKind { tp, cp, dp, pp, dp_cp, ep, etp, edp };
const char* to_string(GroupKind kind);

struct RankLocation {
  int rank = 0;
  int gpu = 0;          // global GPU index (what CollectiveRequest::gpus holds)
  int rack = 0;
  int tray = 0;         // global compute-tray index
  int tray_in_rack = 0;
  int slot = 0;         // GPU position inside the tray (its NIC rail)
  int domain = 0;       // fast domain: NVLink domain, else rack
};

struct RankCoords {
  int pp = 0, dp = 0, cp = 0, tp = 0;  // attention view
  int edp = 0, ep = 0, etp = 0;        // expert view (same pp)
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

  static RankCoords coordinates(const ParallelLayout& layout, int rank);
  static int rank_of(const ParallelLayout& layout, int pp, int dp, int cp, int tp);

  // Every group of this kind, each in rank order, groups ordered by their first rank.
  std::vector<std::vector<int>> all_groups(const ParallelLayout& layout, GroupKind kind) const;
  // Of all groups of this kind, the one spanning the most fast domains (the first such in rank order):
  // every group synchronises each step, so the slowest prices it.
  std::vector<int> worst_group_ranks(const ParallelLayout& layout, GroupKind kind) const;
  std::vector<int> gpus_of(const std::vector<int>& ranks) const;
  int domains_spanned(const std::vector<int>& ranks) const;

  // True when some group of this kind spans two fast domains; `example` then names one such group.
  bool crosses_domain(const ParallelLayout& layout, GroupKind kind, std::string* example = nullptr) const;

 private:
  int domains_used_ = 1, per_domain_ = 1, domain_size_ = 1, gpus_per_tray_ = 1;
  std::vector<RankLocation> ranks_;
  // Caches below: one RankPlacement serves one thread (each search makes its own).
  // answers by (order and sizes of the mesh, kind): layouts repeat them often.
  mutable std::map<std::vector<int>, std::vector<int>> worst_cache_;
  // Every rank's coordinates for the last layout asked (`key`: coordinates_key in placement.cpp), which the
  // group kinds of one layout share (a search asks for seven of them per mesh order).
  const std::vector<RankCoords>& all_coordinates(const ParallelLayout& layout, const std::vector<int>& key) const;
  mutable std::vector<int> coords_key_;
  mutable std::vector<RankCoords> coords_;
};

}  // namespace racksim
