#include "models/planner/search.hpp"

#include <algorithm>
#include <memory>
#include <tuple>
#include <fmt/format.h>

#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "sim/core/units.hpp"

namespace racksim {

std::string rejection_text(const std::string& reason) {
  static const std::map<std::string, std::string> text{
      {"memory", "does not fit in HBM (even with ZeRO-3 and full recompute)"},
      {"tp-slow-link", "TP group across a slow link (spans two NVLink domains)"},
      {"ep-slow-link", "EP group across a slow link (spans two NVLink domains)"},
      {"batch", "global batch not divisible by DP x EP x micro-batch"},
      {"tp-heads", "TP does not divide the attention heads"},
      {"tp-kv-heads", "TP neither divides nor is a multiple of the KV heads"},
      {"ep-experts", "EP does not divide the routed experts"},
      {"cp-seq", "CP does not divide the sequence into 2 x CP equal chunks"},
      {"pp-layers", "more pipeline stages than layers"},
  };
  auto it = text.find(reason);
  return it == text.end() ? reason : it->second;
}

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// DeviceMesh orders to try: every permutation of the non-trivial dimensions among pp, dp, ep, cp
// (canonical first: pp, dp, ep, cp from outside in), TP always innermost.
std::vector<std::vector<MeshDim>> mesh_orders(const ParallelLayout& l) {
  std::vector<MeshDim> trivial, live;
  for (MeshDim d : {MeshDim::pp, MeshDim::dp, MeshDim::ep, MeshDim::cp}) (l.size(d) > 1 ? live : trivial).push_back(d);
  std::vector<std::vector<MeshDim>> out;
  std::vector<int> idx(live.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  do {
    std::vector<MeshDim> order = trivial;
    for (int i : idx) order.push_back(live[i]);
    order.push_back(MeshDim::tp);
    out.push_back(order);
  } while (std::next_permutation(idx.begin(), idx.end()));
  return out;
}

struct MemoryChoice {
  int zero = 1;
  Recompute recompute = Recompute::none;
  bool offload_optimizer = false, offload_activations = false;
};

void apply(ParallelLayout& l, const MemoryChoice& mc) {
  l.zero_stage = mc.zero, l.recompute = mc.recompute;
  l.offload_optimizer = mc.offload_optimizer, l.offload_activations = mc.offload_activations;
}

// Ties in step time go to the simpler layout: fewer GPUs, then less CP, PP, interleaving, ZeRO,
// recompute, offload and TP; the key string last, for a total order.
bool simpler(const ParallelLayout& a, const ParallelLayout& b) {
  auto rank = [](const ParallelLayout& l) {
    return std::make_tuple(l.gpus(), l.cp, l.pp, l.virtual_stages, l.zero_stage, static_cast<int>(l.recompute),
                           l.offload_optimizer, l.offload_activations, l.tp);
  };
  if (rank(a) != rank(b)) return rank(a) < rank(b);
  return a.key() < b.key();
}

std::string gb(double bytes) { return fmt::format("{:.1f}", bytes / units::kGB); }

std::string memory_detail(const MemoryBreakdown& b, double capacity) {
  return fmt::format("needs {} GB per GPU (weights {}, gradients {}, optimizer {}, activations {}, logits {}) > {} GB usable",
                     gb(b.total()), gb(b.weights), gb(b.grads), gb(b.optimizer), gb(b.activations), gb(b.logits),
                     gb(capacity));
}

}  // namespace

SearchResult search_layouts(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys,
                            const std::vector<MeshShape>& shapes, const SearchConstraints& c, CommCost& comm, int keep) {
  SearchResult res;
  std::map<std::string, int> shown;
  auto reject = [&](const std::string& reason, const std::string& layout, const std::string& detail) {
    ++res.rejected[reason];
    if (shown[reason]++ < 3) res.examples.push_back({reason, layout, detail});
  };
  const auto& att = model.attention;
  const double capacity = sys.hbm_bytes * (1 - job.memory_reserve);
  std::vector<int> zeros = c.zero_stage ? std::vector<int>{*c.zero_stage} : std::vector<int>{1, 2, 3};
  std::vector<Recompute> recomputes = c.recompute ? std::vector<Recompute>{*c.recompute}
                                                  : std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full};
  std::vector<std::pair<bool, bool>> offloads;  // (optimizer, activations), tried in order
  const bool can_offload = sys.c2c_Bps_per_gpu > 0;
  if (c.offload == "none" || !can_offload) offloads = {{false, false}};
  else if (c.offload == "optimizer") offloads = {{true, false}};
  else if (c.offload == "activations") offloads = {{false, true}};
  else if (c.offload == "both") offloads = {{true, true}};
  else offloads = {{false, false}, {true, false}, {false, true}, {true, true}};  // auto: all, the fastest wins

  // Phase 1: enumerate, reject, and bound.
  struct Degrees {
    int shape = 0;
    std::vector<std::vector<MeshDim>> orders;  // those keeping TP and EP inside fast domains
    std::vector<MeshGroups> groups;            // filled when first needed
  };
  struct Entry {
    ParallelLayout layout;
    std::vector<MemoryChoice> choices;
    double bound = 0;
    std::size_t degrees = 0;
  };
  std::vector<std::unique_ptr<RankPlacement>> placements;
  std::vector<Degrees> degrees_list;
  std::vector<Entry> entries;
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const MeshShape& shape = shapes[si];
    placements.push_back(std::make_unique<RankPlacement>(*sys.graph, shape.domains, shape.gpus_per_domain));
    const RankPlacement& placement = *placements.back();
    const int n = shape.gpus();
    for (int tp : divisors(n)) {
      if (c.tp && *c.tp != tp) continue;
      const std::string tp_s = "tp=" + std::to_string(tp);
      if (att.heads % tp != 0) {
        reject("tp-heads", tp_s, fmt::format("{} heads", att.heads));
        continue;
      }
      if (att.kind == AttentionKind::gqa && att.kv_heads % tp != 0 && tp % att.kv_heads != 0) {
        reject("tp-kv-heads", tp_s, fmt::format("{} KV heads", att.kv_heads));
        continue;
      }
      for (int ep : divisors(n / tp)) {
        if (c.ep && *c.ep != ep) continue;
        if (!model.is_moe() && ep > 1) continue;  // a dense model has nothing to split by experts
        if (c.tp_times_ep && tp * ep != *c.tp_times_ep) continue;
        if (model.is_moe() && model.moe.experts % ep != 0) {
          reject("ep-experts", tp_s + " ep=" + std::to_string(ep), fmt::format("{} experts", model.moe.experts));
          continue;
        }
        for (int cp : divisors(n / (tp * ep))) {
          if (cp > c.max_cp || (c.cp && *c.cp != cp)) continue;
          if (cp > 1 && job.seq_len % (2 * cp) != 0) {
            reject("cp-seq", fmt::format("cp={}", cp), fmt::format("sequence of {} tokens", job.seq_len));
            continue;
          }
          for (int pp : divisors(n / (tp * ep * cp))) {
            if (c.pp && *c.pp != pp) continue;
            const int dp = n / (tp * ep * cp * pp);
            if (c.dp && *c.dp != dp) continue;
            ParallelLayout base;
            base.tp = tp, base.ep = ep, base.cp = cp, base.pp = pp, base.dp = dp;
            if (pp > model.layers) {
              reject("pp-layers", base.degrees(), fmt::format("{} layers", model.layers));
              continue;
            }
            if (job.global_batch % (dp * ep) != 0) {
              reject("batch", base.degrees(), fmt::format("{} sequences over DP x EP = {}", job.global_batch, dp * ep));
              continue;
            }
            const int per_rank = job.global_batch / (dp * ep);
            Degrees deg;
            deg.shape = static_cast<int>(si);
            for (const auto& order : mesh_orders(base)) {
              ++res.considered;
              ParallelLayout l = base;
              l.order = order;
              std::string why;
              if (!c.allow_slow_tp_ep && placement.crosses_domain(l, MeshDim::tp, &why)) {
                reject("tp-slow-link", l.degrees() + " mesh " + l.mesh(), why);
                continue;
              }
              if (!c.allow_slow_tp_ep && placement.crosses_domain(l, MeshDim::ep, &why)) {
                reject("ep-slow-link", l.degrees() + " mesh " + l.mesh(), why);
                continue;
              }
              deg.orders.push_back(order);
            }
            if (deg.orders.empty()) continue;
            const std::size_t deg_index = degrees_list.size();
            bool any_mb = false;
            for (int mb : c.micro_batch_options) {
              if (c.micro_batch && *c.micro_batch != mb) continue;
              if (per_rank % mb != 0) continue;
              any_mb = true;
              const int m = per_rank / mb;
              std::vector<std::pair<PipelineSchedule, int>> schedules;
              if (pp == 1) schedules.push_back({PipelineSchedule::none, 1});
              else {
                schedules.push_back({PipelineSchedule::one_f_one_b, 1});
                for (int v : c.virtual_stage_options)
                  if (m % pp == 0 && model.layers >= pp * v) schedules.push_back({PipelineSchedule::interleaved, v});
              }
              for (const auto& [sched, v] : schedules) {
                if (c.schedule && *c.schedule != sched && pp > 1) continue;
                Entry e;
                ParallelLayout& l = e.layout;
                l = base;
                l.order = deg.orders.front();
                l.micro_batch = mb;
                l.micro_batches = m;
                l.schedule = sched;
                l.virtual_stages = v;
                // Memory savers: per offload mode and ZeRO stage, the least recompute that fits (streaming
                // states over C2C can beat recomputing or sharding them, so auto keeps every mode).
                MemoryBreakdown smallest;
                bool have_smallest = false;
                for (const auto& [oo, oa] : offloads) {
                  for (int z : zeros) {
                    for (Recompute r : recomputes) {
                      l.zero_stage = z, l.recompute = r, l.offload_optimizer = oo, l.offload_activations = oa;
                      const MemoryBreakdown mem = layout_memory(model, job, l);
                      if (!have_smallest || mem.total() < smallest.total()) smallest = mem, have_smallest = true;
                      if (fits(mem, job, sys)) {
                        e.choices.push_back({z, r, oo, oa});
                        break;
                      }
                    }
                  }
                }
                if (e.choices.empty()) {
                  reject("memory", l.degrees() + " mb=" + std::to_string(mb), memory_detail(smallest, capacity));
                  continue;
                }
                e.bound = -1;
                for (const MemoryChoice& mc : e.choices) {
                  apply(l, mc);
                  const double b = step_lower_bound(model, job, sys, l);
                  if (e.bound < 0 || b < e.bound) e.bound = b;
                }
                apply(l, e.choices.front());
                e.degrees = deg_index;
                entries.push_back(std::move(e));
              }
            }
            if (!any_mb) reject("batch", base.degrees(), fmt::format("{} sequences per DP x EP rank, micro-batch options", per_rank));
            degrees_list.push_back(std::move(deg));
          }
        }
      }
    }
  }
  res.screened = static_cast<long>(entries.size());

  // Phase 2: price layouts in order of their bound; stop when the bound passes the keep-th best.
  std::vector<std::size_t> order_by_bound(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) order_by_bound[i] = i;
  std::stable_sort(order_by_bound.begin(), order_by_bound.end(),
                   [&](std::size_t a, std::size_t b) { return entries[a].bound < entries[b].bound; });
  std::vector<double> best_steps;  // sorted, at most `keep`
  for (std::size_t idx : order_by_bound) {
    Entry& e = entries[idx];
    if (keep > 0 && static_cast<int>(best_steps.size()) >= keep && e.bound > best_steps.back()) break;
    ++res.evaluated;
    Degrees& deg = degrees_list[e.degrees];
    const RankPlacement& placement = *placements[deg.shape];
    if (deg.groups.empty()) {
      for (const auto& order : deg.orders) {
        ParallelLayout l = e.layout;
        l.order = order;
        deg.groups.push_back(mesh_groups(placement, l, comm));
      }
    }
    // The best order with the first memory choice, then the other memory choices on that order.
    ParallelLayout l = e.layout;
    std::optional<Candidate> best;
    std::size_t best_order = 0;
    for (std::size_t o = 0; o < deg.orders.size(); ++o) {
      l.order = deg.orders[o];
      StepEstimate est = estimate_step(model, job, sys, placement, l, comm, &deg.groups[o]);
      if (!best || est.step_s < best->estimate.step_s) {
        best = Candidate{l, shapes[deg.shape], std::move(est), {}};
        best_order = o;
      }
    }
    l.order = deg.orders[best_order];
    for (std::size_t k = 1; k < e.choices.size(); ++k) {
      apply(l, e.choices[k]);
      StepEstimate est = estimate_step(model, job, sys, placement, l, comm, &deg.groups[best_order]);
      if (est.step_s < best->estimate.step_s) best = Candidate{l, shapes[deg.shape], std::move(est), {}};
    }
    const double step = best->estimate.step_s;
    res.ranked.push_back(std::move(*best));
    if (keep > 0) {
      best_steps.insert(std::upper_bound(best_steps.begin(), best_steps.end(), step), step);
      if (static_cast<int>(best_steps.size()) > keep) best_steps.pop_back();
    }
  }
  std::stable_sort(res.ranked.begin(), res.ranked.end(), [](const Candidate& a, const Candidate& b) {
    if (a.estimate.step_s != b.estimate.step_s) return a.estimate.step_s < b.estimate.step_s;
    return simpler(a.layout, b.layout);
  });
  // Fold equal-time variants that do the same work per GPU into the simplest of them.
  std::vector<Candidate> folded;
  for (Candidate& cand : res.ranked) {
    bool merged = false;
    for (auto it = folded.rbegin(); it != folded.rend(); ++it) {
      if (cand.estimate.step_s - it->estimate.step_s > 1e-9 * it->estimate.step_s) break;
      const ParallelLayout &a = it->layout, &b = cand.layout;
      const bool same_work = a.gpus() == b.gpus() && a.tp == b.tp && a.ep == b.ep && a.pp == b.pp && a.schedule == b.schedule &&
                             a.virtual_stages == b.virtual_stages && a.zero_stage == b.zero_stage && a.recompute == b.recompute &&
                             a.offload_optimizer == b.offload_optimizer && a.offload_activations == b.offload_activations &&
                             a.micro_batch * b.cp == b.micro_batch * a.cp && a.micro_batches == b.micro_batches;
      if (same_work) {
        it->equivalents.push_back(b.key());
        merged = true;
        break;
      }
    }
    if (!merged) folded.push_back(std::move(cand));
  }
  res.ranked = std::move(folded);
  res.comm_evaluations = comm.evaluations();
  return res;
}

}  // namespace racksim
