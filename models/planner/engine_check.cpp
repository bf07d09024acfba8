#include "models/planner/engine_check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "models/analytic/analytic_model.hpp"
#include "models/collectives/registry.hpp"
#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

using RequestKey = std::tuple<int, std::vector<int>, std::uint64_t, std::string>;

RequestKey key_of(const CollectiveRequest& r) { return {static_cast<int>(r.op), r.gpus, r.bytes, r.dtype}; }

// Analytic answers, remembering every distinct request made (what the step model asked).
class RecordingCost : public CommCost {
 public:
  RecordingCost(const TopologyGraph& g, const Calibration& c) : graph_(g), calibration_(c) {}
  std::string name() const override { return "analytic (recorded)"; }
  std::vector<std::pair<CollectiveRequest, Answer>> requests;

 protected:
  Answer evaluate(const CollectiveRequest& r) override {
    const AnalyticEstimate e = analytic_collective(graph_, r, calibration_);
    requests.push_back({r, Answer{e.time_s, e.algorithm}});
    return requests.back().second;
  }

 private:
  const TopologyGraph& graph_;
  const Calibration& calibration_;
};

// Engine answers where given, analytic otherwise.
class OverrideCost : public CommCost {
 public:
  OverrideCost(const TopologyGraph& g, const Calibration& c, std::map<RequestKey, double> o)
      : graph_(g), calibration_(c), overrides_(std::move(o)) {}
  std::string name() const override { return "engine"; }

 protected:
  Answer evaluate(const CollectiveRequest& r) override {
    const AnalyticEstimate e = analytic_collective(graph_, r, calibration_);
    auto it = overrides_.find(key_of(r));
    return Answer{it != overrides_.end() ? it->second : e.time_s, e.algorithm};
  }

 private:
  const TopologyGraph& graph_;
  const Calibration& calibration_;
  std::map<RequestKey, double> overrides_;
};

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
                          EngineCheck* check) {
  const TopologyGraph& graph = *sys.graph;
  const ParallelLayout& l = cand.layout;
  RecordingCost rec(graph, calibration);
  const MeshGroups g = mesh_groups(placement, l, rec);
  const StepEstimate analytic = estimate_step(model, job, sys, placement, l, rec, &g);

  // Every group that runs at the same time as a recorded group, keyed by the recorded group's GPUs.
  std::map<std::vector<int>, std::vector<std::vector<int>>> concurrent;
  auto add_kind = [&](const GroupSpan& span, const std::vector<MeshDim>& dims, bool pair) {
    if (span.id < 0 || span.size < 2) return;
    const std::vector<std::vector<int>> groups = placement.all_groups(l, dims);
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
  add_kind(g.tp, {MeshDim::tp}, false);
  add_kind(g.ep, {MeshDim::ep}, false);
  add_kind(g.cp_pair, {MeshDim::cp}, true);
  add_kind(g.pp_pair, {MeshDim::pp}, true);
  add_kind(g.dense_dp, {MeshDim::dp, MeshDim::ep, MeshDim::cp}, false);
  add_kind(g.expert_dp, {MeshDim::dp, MeshDim::cp}, false);

  // Groups priced both flat and two-level (inside domains, then across): the step uses the cheaper, so
  // only that one needs the engine.
  std::map<RequestKey, double> recorded;
  for (const auto& [request, answer] : rec.requests) recorded[key_of(request)] = answer.time_s;
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
  const Simulation simulation(graph, calibration);
  for (const auto& [request, answer] : rec.requests) {
    std::set<int> domains;
    for (int gpu : request.gpus) {
      const Vertex& v = graph.vertices()[graph.gpu_vertex(gpu)];
      domains.insert(v.domain >= 0 ? v.domain : v.rack);
    }
    if (domains.size() < 2) continue;  // inside one NVLink domain: the engine agrees with the analytic model
    if (unused_flat(request, answer.time_s)) continue;
    auto it = concurrent.find(request.gpus);
    std::vector<std::vector<int>> groups = it != concurrent.end() ? it->second : std::vector<std::vector<int>>{request.gpus};
    std::vector<Schedule> schedules;
    for (const auto& gpus : groups) {
      CollectiveRequest r = request;
      r.gpus = gpus;
      r.algorithm = answer.algorithm;
      schedules.push_back(find_algorithm(r.op, r.algorithm).build(r, graph));
    }
    double slowest = 0;
    for (const RunResult& run : simulation.run_concurrent(schedules)) slowest = std::max(slowest, run.time_s);
    overrides[key_of(request)] = slowest;
    result.items.push_back({to_string(request.op), answer.algorithm, static_cast<int>(request.gpus.size()),
                            static_cast<int>(groups.size()), static_cast<double>(request.bytes), answer.time_s, slowest});
  }
  OverrideCost engine(graph, calibration, std::move(overrides));
  const MeshGroups ge = mesh_groups(placement, l, engine);
  StepEstimate refined = estimate_step(model, job, sys, placement, l, engine, &ge);
  result.analytic_step_s = analytic.step_s;
  result.engine_step_s = refined.step_s;
  if (check) *check = std::move(result);
  return refined;
}

}  // namespace racksim
