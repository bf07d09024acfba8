#include "models/planner/engine_check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

using RequestKey = std::tuple<int, std::vector<int>, std::uint64_t, std::string>;

RequestKey key_of(const CollectiveRequest& r) { return {static_cast<int>(r.op), r.gpus, r.bytes, r.dtype}; }

// The first neighbouring pair of a group that crosses a domain boundary (else its first two members).
std::vector<int> crossing_pair(const RankPlacement& p, const std::vector<int>& ranks) {
  for (std::size_t i = 0; i + 1 < ranks.size(); ++i)
    if (p.locate(ranks[i]).domain != p.locate(ranks[i + 1]).domain) return {ranks[i], ranks[i + 1]};
  return {ranks[0], ranks[1]};
}

// Members at position k of each domain, for every k: the outer groups of a two-level collective.
std::vector<std::vector<int>> outer_groups(const RankPlacement& p, const std::vector<int>& ranks) {
  std::map<int, std::vector<int>> by_domain;
  for (int r : ranks) by_domain[p.locate(r).domain].push_back(r);
  const std::size_t d = by_domain.begin()->second.size();
  std::vector<std::vector<int>> out(d);
  for (std::size_t k = 0; k < d; ++k)
    for (const auto& [dom, members] : by_domain) out[k].push_back(members.at(k));
  return out;
}

}  // namespace

StepEstimate engine_check(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys,
                          const RankPlacement& placement, const Candidate& cand, const Calibration& calibration,
                          EngineCheck* check, EngineRunMemo* memo) {
  const TopologyGraph& graph = *sys.graph;
  const ParallelLayout& l = cand.layout;
  AnalyticCommCost rec(graph, calibration);
  rec.set_exact_groups();
  const MeshGroups g = mesh_groups(placement, l, rec);
  const StepEstimate analytic = estimate_step(model, job, sys, placement, l, rec, &g);

  // Every group that runs at the same time as a recorded group, keyed by the recorded group's GPUs.
  std::map<std::vector<int>, std::vector<std::vector<int>>> concurrent;
  auto add_kind = [&](const GroupSpan& span, GroupKind kind, bool pair) {
    if (span.id < 0 || span.size < 2) return;
    const std::vector<std::vector<int>> groups = placement.all_groups(l, kind);
    std::vector<std::vector<int>> whole, pairs, outers;
    for (const auto& grp : groups) {
      whole.push_back(placement.gpus_of(grp));
      if (grp.size() >= 2) pairs.push_back(placement.gpus_of(crossing_pair(placement, grp)));
      if (span.outer >= 0)
        for (const auto& o : outer_groups(placement, grp)) outers.push_back(placement.gpus_of(o));
    }
    concurrent[rec.gpus(span.id)] = pair ? pairs : whole;
    if (span.outer >= 0) concurrent[rec.gpus(span.outer)] = outers;
  };
  add_kind(g.tp, GroupKind::tp, false);
  add_kind(g.etp, GroupKind::etp, false);
  add_kind(g.ep, GroupKind::ep, false);
  add_kind(g.cp_pair, GroupKind::cp, true);
  add_kind(g.pp_pair, GroupKind::pp, true);
  add_kind(g.dense_dp, GroupKind::dp_cp, false);
  add_kind(g.expert_dp, GroupKind::edp, false);

  // Groups priced both flat and two-level (inside domains, then across): the step uses the cheaper, so
  // only that one needs the engine.
  std::map<RequestKey, double> recorded;
  for (const auto& r : rec.records()) recorded[key_of(r.request)] = r.time_s;
  std::map<std::vector<int>, std::pair<std::vector<int>, std::vector<int>>> two_level;  // whole -> (inner, outer)
  for (const GroupSpan* span : {&g.dense_dp, &g.expert_dp})
    if (span->outer >= 0) two_level[rec.gpus(span->id)] = {rec.gpus(span->inner), rec.gpus(span->outer)};
  auto unused_flat = [&](const CollectiveRequest& r, double flat) {
    auto it = two_level.find(r.gpus);
    if (it == two_level.end()) return false;
    const double d = static_cast<double>(it->second.first.size());
    // the step model asked with unrounded bytes: match within a couple of bytes
    auto find = [&](const std::vector<int>& gpus, double bytes) -> const double* {
      for (const auto& [k, t] : recorded)
        if (std::get<0>(k) == static_cast<int>(r.op) && std::get<1>(k) == gpus && std::get<3>(k) == r.dtype &&
            std::fabs(static_cast<double>(std::get<2>(k)) - bytes) <= 2)
          return &t;
      return nullptr;
    };
    const double* inner = find(it->second.first, static_cast<double>(r.bytes));
    const double* outer = find(it->second.second, static_cast<double>(r.bytes) / d);
    return inner && outer && *inner + *outer < flat;
  };

  std::map<RequestKey, double> overrides;
  EngineCheck result;
  const std::vector<AnalyticCommCost::Record> records = rec.records();
  for (const auto& r : records) {
    std::set<int> domains;
    for (int gpu : r.request.gpus) {
      const Vertex& v = graph.vertices()[graph.gpu_vertex(gpu)];
      domains.insert(v.domain >= 0 ? v.domain : v.rack);
    }
    if (domains.size() < 2) continue;  // inside one NVLink domain: the engine agrees with the analytic model
    if (unused_flat(r.request, r.time_s)) continue;
    auto it = concurrent.find(r.request.gpus);
    const std::vector<std::vector<int>> groups = it != concurrent.end() ? it->second : std::vector<std::vector<int>>{r.request.gpus};
    CollectiveRequest q = r.request;
    q.algorithm = r.algorithm;
    double slowest = 0;
    const EngineRunMemo::key_type run_key{static_cast<int>(q.op), q.algorithm, q.bytes, q.dtype, groups};
    const auto known = memo ? memo->find(run_key) : EngineRunMemo::iterator{};
    if (memo && known != memo->end()) {
      slowest = known->second;
    } else {
      slowest = engine_concurrent_s(graph, calibration, q, groups);
      if (memo) memo->emplace(run_key, slowest);
    }
    overrides[key_of(r.request)] = slowest;
    result.items.push_back({to_string(r.request.op), r.algorithm, static_cast<int>(r.request.gpus.size()),
                            static_cast<int>(groups.size()), static_cast<double>(r.request.bytes), r.time_s, slowest});
  }
  AnalyticCommCost engine(graph, calibration);
  engine.set_exact_groups();
  engine.set_overrides(std::move(overrides));
  const MeshGroups ge = mesh_groups(placement, l, engine);
  StepEstimate refined = estimate_step(model, job, sys, placement, l, engine, &ge);
  result.analytic_step_s = analytic.step_s;
  result.engine_step_s = refined.step_s;
  if (check) *check = std::move(result);
  return refined;
}

}  // namespace racksim
