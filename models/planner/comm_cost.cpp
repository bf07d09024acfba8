#include "models/planner/comm_cost.hpp"

#include <algorithm>
#include <cmath>

#include "models/analytic/analytic_model.hpp"
#include "models/analytic/flow_cost.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/hash.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

const char* to_string(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::alltoall: return "alltoall";
    case MoeDispatcher::deepep: return "deepep";
    case MoeDispatcher::hybridep: return "hybridep";
  }
  return "?";
}

std::size_t CommCost::VectorHash::operator()(const std::vector<int>& v) const {
  std::size_t h = v.size();
  for (int x : v) h = hash_combine(h, static_cast<std::uint64_t>(static_cast<std::size_t>(x)));
  return h;
}

std::size_t CommCost::KeyHash::operator()(const Key& k) const {
  std::size_t h = std::hash<std::string>{}(std::get<3>(k));
  for (std::uint64_t x : {static_cast<std::uint64_t>(std::get<0>(k)), static_cast<std::uint64_t>(std::get<1>(k)), std::get<2>(k)})
    h = hash_combine(h, x);
  return h;
}

int CommCost::group(const std::vector<int>& given) {
  auto it = group_ids_.find(given);
  if (it != group_ids_.end()) return it->second;
  const std::vector<int> gpus = canonical(given);
  auto cit = group_ids_.find(gpus);
  int id;
  if (cit != group_ids_.end()) {
    id = cit->second;
  } else {
    id = static_cast<int>(groups_.size());
    groups_.push_back(gpus);
    group_ids_.emplace(gpus, id);
  }
  group_ids_.emplace(given, id);
  return id;
}

const CommCost::Answer& CommCost::answer(CollectiveOp op, int g, double bytes, const std::string& dtype) {
  // Whole bytes, at least one; the model's limit is 1 TiB per rank.
  const auto b = static_cast<std::uint64_t>(std::clamp(std::ceil(bytes), 1.0, static_cast<double>(units::kMaxBytesPerRank)));
  Key key{static_cast<int>(op), g, b, dtype};
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  CollectiveRequest r;
  r.op = op;
  r.algorithm = "auto";
  r.gpus = groups_.at(g);
  r.bytes = b;
  r.dtype = dtype;
  ++evaluations_;
  return cache_.emplace(std::move(key), evaluate(r)).first->second;
}

double CommCost::time_s(CollectiveOp op, int g, double bytes, const std::string& dtype) {
  if (groups_.at(g).size() < 2 || bytes <= 0) return 0;
  // Beyond the model's 1 TiB per rank: that many equal collectives back to back.
  const double limit = static_cast<double>(units::kMaxBytesPerRank);
  const double pieces = std::ceil(bytes / limit);
  return pieces * answer(op, g, bytes / pieces, dtype).time_s;
}

std::string CommCost::algorithm(CollectiveOp op, int g, double bytes, const std::string& dtype) {
  if (groups_.at(g).size() < 2 || bytes <= 0) return "";
  return answer(op, g, bytes, dtype).algorithm;
}

int CommCost::sms(CollectiveOp op, int g, double bytes, const std::string& dtype) {
  if (groups_.at(g).size() < 2 || bytes <= 0) return 0;
  const double limit = static_cast<double>(units::kMaxBytesPerRank);
  return answer(op, g, bytes / std::ceil(bytes / limit), dtype).channels;
}

int CommCost::moe_dispatch_sms(MoeDispatcher d, int g, int inner, int outer, double bytes) {
  // DeepEP: Megatron-Core's moe_deepep_num_sms default, 20. HybridEP: what NVIDIA's performance scripts set for every
  // HybridEP recipe, 32 (Megatron-Bridge scripts/performance/utils/overrides.py, `moe_hybridep_num_sms = 32`, at
  // v0.3.0 through v0.4.2 and main @067f987), the runs the planner's fit and validation are priced on.
  if (d == MoeDispatcher::deepep) return 20;
  if (d == MoeDispatcher::hybridep) return 32;
  if (inner < 0 || outer < 0) return sms(CollectiveOp::all_to_all, g, bytes);
  return std::max(sms(CollectiveOp::all_to_all, inner, bytes), sms(CollectiveOp::all_to_all, outer, bytes));
}

std::string CommCost::moe_dispatch_algorithm(int g, int inner, int outer, double bytes) {
  if (inner < 0 || outer < 0) return algorithm(CollectiveOp::all_to_all, g, bytes);
  return algorithm(CollectiveOp::all_to_all, inner, bytes / static_cast<double>(gpus(outer).size()));
}

namespace {
// Of n equal shares of the experts (ranks, or domains), how many a token reaches on average with top_k experts
// spread evenly over them (force-balanced routing): n (1 - (1 - 1/n)^top_k), at most top_k.
double shares_reached(double n, int top_k) { return n <= 1 ? 1.0 : n * (1 - std::pow(1 - 1 / n, top_k)); }
}  // namespace

double CommCost::moe_dispatch_s(MoeDispatcher d, int g, int inner, int outer, double bytes, double tokens_bytes, int top_k) {
  // DeepEP and HybridEP send a token once to each rank holding one of its experts (DeepEP's dispatch layout:
  // is_token_in_rank, [tokens, ranks]; HybridEP permutes after its all-to-all, dispatch_with_permute; both
  // called from Megatron-LM's megatron/core/transformer/moe/fused_a2a.py @02ad939), and combine returns one
  // row per (token, rank), its local experts summed first. Megatron's alltoall dispatcher permutes by expert
  // before its all-to-all, so a token crosses once per (token, expert) pair: `bytes`.
  const double ep_ranks = static_cast<double>(gpus(g).size());
  const double per_rank_bytes =
      d == MoeDispatcher::alltoall ? bytes : std::min(bytes, tokens_bytes * shares_reached(ep_ranks, top_k));
  if (inner < 0 || outer < 0) return time_s(CollectiveOp::all_to_all, g, per_rank_bytes);
  // A group spanning D domains with the same members in each: the part of every GPU's buffer bound for
  // other domains, (D - 1) / D of it, leaves over the GPU's own NIC, while the rest (and, for DeepEP,
  // the forwarding of what arrives) rides NVLink; the two proceed at once. Priced as the slower of an
  // all-to-all among one GPU per domain (each GPU's NIC share) and one inside the first domain, which
  // keeps the collective model's cost independent of the group size (a flat all-to-all over hundreds
  // of GPUs is hundreds of thousands of flows).
  const double domains = static_cast<double>(gpus(outer).size());
  double across_bytes = bytes;
  // DeepEP/HybridEP send a token once to each domain holding one of its experts, then forward it inside
  // the domain to the ranks there (per rank once, as above).
  if (d != MoeDispatcher::alltoall) across_bytes = std::min(bytes, tokens_bytes * shares_reached(domains, top_k));
  const double across = time_s(CollectiveOp::all_to_all, outer, across_bytes);
  const double within = time_s(CollectiveOp::all_to_all, inner, d == MoeDispatcher::alltoall ? bytes / domains : per_rank_bytes);
  return std::max(across, within);
}

AnalyticCommCost::AnalyticCommCost(const TopologyGraph& graph, Calibration calibration)
    : graph_(graph), calibration_(std::move(calibration)), flow_cache_(std::make_shared<FlowCache>(graph)) {
  // Each GPU's domain (NVLink domain, else rack) and its position there in (tray, slot) order.
  const int n = graph.gpu_count();
  domain_of_.assign(static_cast<std::size_t>(n), 0);
  local_of_.assign(static_cast<std::size_t>(n), 0);
  std::map<int, std::vector<std::pair<std::pair<int, int>, int>>> by_domain;
  for (int i = 0; i < n; ++i) {
    const Vertex& v = graph.vertices()[graph.gpu_vertex(i)];
    by_domain[v.domain >= 0 ? v.domain : v.rack].push_back({{v.tray, v.local}, i});
  }
  for (auto& [dom, members] : by_domain) {
    std::sort(members.begin(), members.end());
    std::vector<int> at;
    for (std::size_t k = 0; k < members.size(); ++k) {
      domain_of_[static_cast<std::size_t>(members[k].second)] = static_cast<int>(gpu_at_.size());
      local_of_[static_cast<std::size_t>(members[k].second)] = static_cast<int>(k);
      at.push_back(members[k].second);
    }
    gpu_at_.push_back(std::move(at));
  }
}

std::vector<int> AnalyticCommCost::canonical(const std::vector<int>& gpus) const {
  if (exact_) return gpus;
  // Only when every domain has the same GPUs (a symmetric system); otherwise the group as given.
  for (const auto& at : gpu_at_)
    if (at.size() != gpu_at_.front().size()) return gpus;
  std::vector<int> order;  // domains in order of first appearance
  std::vector<int> out;
  out.reserve(gpus.size());
  for (int g : gpus) {
    const int d = domain_of_.at(static_cast<std::size_t>(g));
    auto it = std::find(order.begin(), order.end(), d);
    const int slot = static_cast<int>(it - order.begin());
    if (it == order.end()) order.push_back(d);
    out.push_back(gpu_at_.at(static_cast<std::size_t>(slot)).at(static_cast<std::size_t>(local_of_.at(static_cast<std::size_t>(g)))));
  }
  return out;
}

CommCost::Answer AnalyticCommCost::evaluate(const CollectiveRequest& request) {
  const FlowCache::Scope scope(*flow_cache_);
  const AnalyticEstimate e = analytic_collective(graph_, request, calibration_);
  Answer a{e.time_s, e.algorithm, e.channels};
  auto it = overrides_.find({static_cast<int>(request.op), request.gpus, request.bytes, request.dtype});
  if (it != overrides_.end()) a.time_s = it->second;
  records_.push_back({request, a.time_s, a.algorithm});
  return a;
}

double engine_concurrent_s(const TopologyGraph& graph, const Calibration& calibration, const CollectiveRequest& request,
                           const std::vector<std::vector<int>>& groups) {
  std::vector<Schedule> schedules;
  {
    // One flow cache for every group's build (each built its own): the groups' pricings share the tables of
    // paths per set of terms. Same arithmetic, the same schedules to the bit; ~20 % of the builds' time in the
    // engine checks of a DeepSeek-V3 plan on 8 racks (2 400 groups of 2-8 GPUs, 129 -> 103 ms, session 54).
    FlowCache cache(graph);
    const FlowCache::Scope scope(cache);
    for (const auto& gpus : groups) {
      CollectiveRequest r = request;
      r.gpus = gpus;
      schedules.push_back(build_schedule(r, graph, calibration));  // with NCCL's protocol terms, as priced
    }
  }
  const Simulation simulation(graph, calibration);
  double slowest = 0;
  for (const RunResult& run : simulation.run_concurrent(schedules)) slowest = std::max(slowest, run.time_s);
  return slowest;
}

}  // namespace racksim
