#include "models/planner/search.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <memory>
#include <queue>
#include <system_error>
#include <thread>
#include <tuple>
#include <stdexcept>

#include <fmt/format.h>

#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/step_costs.hpp"
#include "sim/core/units.hpp"

namespace racksim {

std::string rejection_text(const std::string& reason) {
  static const std::map<std::string, std::string> text{
      {"memory", "does not fit in HBM (even with ZeRO-3 and full recompute, or with --ep-overlap the most recompute it allows)"},
      {"tp-slow-link", "TP or ETP group across a slow link (spans two NVLink domains)"},
      {"batch", "global batch not divisible by DP x micro-batch"},
      {"tp-heads", "TP does not divide the attention (or Mamba) heads"},
      {"tp-kv-heads", "TP neither divides nor is a multiple of the KV heads"},
      {"ep-experts", "EP does not divide the routed experts"},
      {"ep-fold", "EP x ETP does not divide TP x CP x DP"},
      {"etp-width", "ETP does not divide the expert width"},
      {"cp-seq", "CP does not divide the sequence into 2 x CP equal chunks"},
      {"pp-layout", "the pipeline layout string does not fit PP x VP or the model"},
      {"cp-mamba", "CP with Mamba-2 layers (their scan runs along the whole sequence; not searched)"},
      {"pp-layers", "more pipeline chunks (PP x VP) than layers plus the embedding and the loss"},
      {"vp-microbatches", "interleaved schedule needs the micro-batches to be a multiple of PP"},
      {"vp-pp1", "a fixed virtual-pipeline degree > 1 needs PP > 1"},
      {"ep-overlap-ep1", "the all-to-all overlap (--ep-overlap) needs EP > 1 (Megatron refuses it too)"},
      {"ep-overlap-1f1b", "the all-to-all overlap (--ep-overlap) with PP > 1 needs an interleaved pipeline (Megatron refuses it too)"},
      {"ep-overlap-recompute", "the all-to-all overlap (--ep-overlap) with full recompute or module moe recomputed (Megatron refuses it too)"},
  };
  auto it = text.find(reason);
  return it == text.end() ? reason : it->second;
}

std::vector<RecomputePlan> recompute_ladder(const ModelSpec& model) {
  std::vector<RecomputePlan> out;
  out.push_back(RecomputePlan{});
  RecomputePlan light;
  light.granularity = Recompute::selective;
  // only the modules the model has (Megatron's names: moe_act needs routed experts, shared_experts
  // shared ones, mla_up_proj MLA)
  light.modules = kRecLayernorm;
  if (model.moe.experts > 0) light.modules |= kRecMoeAct;
  if (model.attention.kind == AttentionKind::mla) light.modules |= kRecMlaUpProj;
  out.push_back(light);
  RecomputePlan heavy = light;
  heavy.modules |= kRecMlp | kRecCoreAttn;
  if (model.moe.experts > 0 && model.moe.shared_experts > 0) heavy.modules |= kRecSharedExperts;
  out.push_back(heavy);
  RecomputePlan full;
  full.granularity = Recompute::full;
  out.push_back(full);
  return out;
}

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// Megatron's two rank orders: PP outermost (tp-cp-dp-pp, the default) and DP outermost
// (--use-tp-pp-dp-mapping); the second only when both are > 1.
std::vector<std::vector<MeshDim>> mesh_orders(const ParallelLayout& l, const std::optional<bool>& pp_outer) {
  std::vector<std::vector<MeshDim>> out;
  const std::vector<MeshDim> pp_first{MeshDim::pp, MeshDim::dp, MeshDim::cp, MeshDim::tp};
  const std::vector<MeshDim> dp_first{MeshDim::dp, MeshDim::pp, MeshDim::cp, MeshDim::tp};
  if (!pp_outer || *pp_outer || l.pp == 1 || l.dp == 1) out.push_back(pp_first);
  if ((!pp_outer || !*pp_outer) && l.pp > 1 && l.dp > 1) out.push_back(dp_first);
  return out;
}

struct MemoryChoice {
  int zero = 1;
  int shard = 0;
  RecomputePlan recompute;
  bool offload_optimizer = false, offload_activations = false;
};

void apply(ParallelLayout& l, const MemoryChoice& mc) {
  l.zero_stage = mc.zero, l.shard_group = mc.shard, l.recompute = mc.recompute;
  l.offload_optimizer = mc.offload_optimizer, l.offload_activations = mc.offload_activations;
}

// Two layouts that do the same work per GPU (CP traded for micro-batch, the mesh order): the ranking folds
// equal-time ones into the simplest, so the search's top counts them once.
bool same_work(const ParallelLayout& a, const ParallelLayout& b) {
  return a.gpus() == b.gpus() && a.tp == b.tp && a.ep == b.ep && a.etp == b.etp && a.pp == b.pp && a.schedule == b.schedule &&
         a.virtual_stages == b.virtual_stages && a.zero_stage == b.zero_stage && a.recompute == b.recompute &&
         a.offload_optimizer == b.offload_optimizer && a.offload_activations == b.offload_activations &&
         a.micro_batch * b.cp == b.micro_batch * a.cp && a.micro_batches == b.micro_batches;
}
// Within the ranking's fold tolerance of each other.
bool equal_time(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::min(a, b); }

int recompute_rank(const RecomputePlan& r) {
  if (r.granularity == Recompute::none) return 0;
  if (r.granularity == Recompute::selective) return 1 + __builtin_popcount(r.modules);
  return 100 - r.full_layers;
}

// Ties in step time go to the simpler layout: fewer GPUs, then less CP, PP, interleaving, ZeRO,
// recompute, offload, EP and TP; the key string last, for a total order.
bool simpler(const ParallelLayout& a, const ParallelLayout& b) {
  auto rank = [](const ParallelLayout& l) {
    return std::make_tuple(l.gpus(), l.cp, l.pp, l.virtual_stages, l.zero_stage, recompute_rank(l.recompute),
                           l.offload_optimizer, l.offload_activations, l.ep, l.etp, l.tp);
  };
  if (rank(a) != rank(b)) return rank(a) < rank(b);
  return a.key() < b.key();
}

std::string gb(double bytes) { return fmt::format("{:.1f}", bytes / units::kGB); }

std::string memory_detail(const MemoryBreakdown& b, double capacity) {
  return fmt::format("needs {} GB per GPU (weights {}, gradients {}, optimizer {}, activations {}, logits {}{}) > {} GB usable",
                     gb(b.total()), gb(b.weights), gb(b.grads), gb(b.optimizer), gb(b.activations), gb(b.logits),
                     b.gathered > 0 ? ", FSDP units gathered " + gb(b.gathered) : "", gb(capacity));
}

bool kv_ok(const ModelSpec& m, int tp) {
  const auto& a = m.attention;
  return a.kind != AttentionKind::gqa || a.kv_heads % tp == 0 || tp % a.kv_heads == 0;
}

// work(i) for every i in [0, n), in blocks of indices taken in turn by this thread and by up to one
// thread more per further core (none for a short list), each extra thread with a LayerCostCache of its
// own from make_cache() made active there. Rethrows the exception of the earliest block that threw.
template <class Work, class MakeCache>
void for_each_on_cores(std::size_t n, Work work, MakeCache make_cache) {
  constexpr std::size_t kBlock = 256;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  const std::size_t threads = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), blocks / 4);
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failed(blocks);
  auto run = [&] {
    for (std::size_t b = next++; b < blocks; b = next++) {
      try {
        for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) work(i);
      } catch (...) {
        failed[b] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back([&] {
        const auto cache = make_cache();
        const step_detail::LayerCostCache::Scope scope(*cache);
        run();
      });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running and this one do the rest
    }
  }
  run();
  for (auto& t : pool) t.join();
  for (const auto& f : failed)
    if (f) std::rethrow_exception(f);
}

bool has_attention(const ModelSpec& m) {
  for (int l = 0; l < m.layers; ++l)
    if (m.layer_type(l).attention != LayerType::no_attention) return true;
  return false;
}

}  // namespace

SearchResult search_layouts(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys,
                            const std::vector<MeshShape>& shapes, const SearchConstraints& c, CommCost& comm, int keep,
                            bool price_unfit, bool count_every_layout, const std::function<void(int gpus)>& pricing_starts) {
  // A layout's memory choices are fitted only when the search reaches it (in bound order, by a bound with no
  // recompute, which no choice undercuts). With full counts, whether it fits at all is decided for every layout
  // in the screening; without (a comparison keeps one layout and shows no counts), not even that.
  const bool fit_lazily = keep > 0;
  SearchResult res;
  // Layer works and their compute parts, shared by every layout of the search.
  step_detail::LayerCostCache layer_costs(model, job, *sys.compute);
  const step_detail::LayerCostCache::Scope layer_costs_scope(layer_costs);
  std::map<std::string, int> shown;
  auto reject = [&](const std::string& reason, const std::string& layout, const std::string& detail) {
    ++res.rejected[reason];
    if (shown[reason]++ < 3) res.examples.push_back({reason, layout, detail});
  };
  const auto& att = model.attention;
  const double capacity = sys.hbm_bytes * (1 - job.memory_reserve);
  const std::vector<int> zeros = c.zero_stage ? std::vector<int>{*c.zero_stage} : std::vector<int>{1, 2, 3};
  std::vector<RecomputePlan> recomputes = c.recompute ? std::vector<RecomputePlan>{*c.recompute} : recompute_ladder(model);
  // Megatron's EP all-to-all overlap (overlap_moe_expert_parallel_comm) refuses full recompute, a recompute method or
  // layer count, and module moe among the recomputed (transformer_config.py @d98e8a6, its __post_init__ checks);
  // with PP > 1 it needs a virtual pipeline and it needs EP > 1 (below).
  const bool ep_overlap = job.ep_overlap && model.is_moe();
  if (ep_overlap) {
    const auto refused = [](const RecomputePlan& r) {
      return r.granularity == Recompute::full || (r.granularity == Recompute::selective && (r.modules & kRecMoe));
    };
    const auto kept = std::remove_if(recomputes.begin(), recomputes.end(), refused);
    if (kept != recomputes.end()) reject("ep-overlap-recompute", "recompute " + kept->text(), "--ep-overlap");
    recomputes.erase(kept, recomputes.end());
  }
  std::vector<std::pair<bool, bool>> offloads;  // (optimizer, activations), tried in order
  const bool can_offload = sys.c2c_Bps_per_gpu > 0;
  if (c.offload == "none" || !can_offload) offloads = {{false, false}};
  else if (c.offload == "optimizer") offloads = {{true, false}};
  else if (c.offload == "activations") offloads = {{false, true}};
  else if (c.offload == "both") offloads = {{true, true}};
  else offloads = {{false, false}, {true, false}, {false, true}, {true, true}};  // auto: all, the fastest wins
  const bool attention = has_attention(model);

  // Phase 1: enumerate, reject, and bound.
  struct Degrees {
    int shape = 0;
    std::vector<std::vector<MeshDim>> orders;  // those keeping TP and ETP inside fast domains
    std::vector<MeshGroups> groups;            // filled when first needed
  };
  struct Entry {
    ParallelLayout layout;
    std::vector<StageSlice> chunks;
    std::vector<MemoryChoice> choices;
    double bound = 0;
    int bound_stage = 0;  // the stage whose computation gives `bound`
    bool fitted = true;   // memory choices known (else `bound` has no recompute: fit_lazily)
    bool bounded = true;  // `bound` is step_lower_bound's (else step_split_free_bound's: bound_lazily)
    std::size_t degrees = 0;
  };
  std::vector<std::unique_ptr<RankPlacement>> placements;
  std::vector<Degrees> degrees_list;
  std::vector<Entry> candidates;  // layouts to screen (memory, bound), in enumeration order
  std::vector<Entry> entries;     // those that fit
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const MeshShape& shape = shapes[si];
    placements.push_back(std::make_unique<RankPlacement>(*sys.graph, shape.domains, shape.gpus_per_domain));
    const RankPlacement& placement = *placements.back();
    const int n = shape.gpus();
    for (int tp : divisors(n)) {
      if (c.tp && *c.tp != tp) continue;
      const std::string tp_s = "tp=" + std::to_string(tp);
      if (att.heads % tp != 0 || (model.mamba.heads > 0 && (model.mamba.heads % tp != 0 || model.mamba.groups % tp != 0))) {
        reject("tp-heads", tp_s, fmt::format("{} attention heads{}", att.heads,
                                             model.mamba.heads > 0 ? fmt::format(", {} Mamba heads in {} groups", model.mamba.heads, model.mamba.groups) : ""));
        continue;
      }
      if (!kv_ok(model, tp)) {
        reject("tp-kv-heads", tp_s, fmt::format("{} KV heads", att.kv_heads));
        continue;
      }
      for (int cp : divisors(n / tp)) {
        if (cp > c.max_cp || (c.cp && *c.cp != cp)) continue;
        if (cp > 1 && (job.seq_len % (2 * cp) != 0 || !attention)) {
          reject("cp-seq", fmt::format("cp={}", cp), fmt::format("sequence of {} tokens", job.seq_len));
          continue;
        }
        if (cp > 1 && model.mamba.heads > 0 && !c.cp) {
          reject("cp-mamba", fmt::format("cp={}", cp), "Mamba-2 layers");
          continue;
        }
        for (int pp : divisors(n / (tp * cp))) {
          if (c.pp && *c.pp != pp) continue;
          const int dp = n / (tp * cp * pp);
          if (c.dp && *c.dp != dp) continue;
          if (pp > pipeline_slots(model)) {
            reject("pp-layers", fmt::format("pp={}", pp), fmt::format("{} layers", model.layers));
            continue;
          }
          if (job.global_batch % dp != 0) {
            reject("batch", fmt::format("tp={} cp={} pp={} dp={}", tp, cp, pp, dp), fmt::format("{} sequences over DP = {}", job.global_batch, dp));
            continue;
          }
          const int fold = tp * cp * dp;
          std::vector<std::pair<int, int>> moe_options;  // (ep, etp)
          // The TP x EP and EDP pins, for a dense model too (EP = ETP = 1 there: they fix TP and TP x CP x DP).
          auto expert_pins_hold = [&](int ep, int etp) {
            return (!c.tp_times_ep || tp * ep == *c.tp_times_ep) && (!c.edp || fold / (ep * etp) == *c.edp);
          };
          if (!model.is_moe()) {
            if (expert_pins_hold(1, 1)) moe_options.push_back({1, 1});
          } else {
            for (int ep : divisors(fold)) {
              if (c.ep && *c.ep != ep) continue;
              if (c.tp_times_ep && tp * ep != *c.tp_times_ep) continue;
              if (model.moe.experts % ep != 0) {
                reject("ep-experts", fmt::format("ep={}", ep), fmt::format("{} experts", model.moe.experts));
                continue;
              }
              for (int etp : divisors(fold / ep)) {
                if (c.etp ? *c.etp != etp : (etp > c.max_etp || (etp != 1 && etp != tp))) continue;
                if (model.moe.expert_intermediate_size % etp != 0) {
                  reject("etp-width", fmt::format("etp={}", etp), fmt::format("expert width {}", model.moe.expert_intermediate_size));
                  continue;
                }
                if (!expert_pins_hold(ep, etp)) continue;
                moe_options.push_back({ep, etp});
              }
            }
            if (c.ep && fold % *c.ep != 0) reject("ep-fold", fmt::format("ep={}", *c.ep), fmt::format("TP x CP x DP = {}", fold));
          }
          const int per_rank = job.global_batch / dp;
          for (const auto& [ep, etp] : moe_options) {
            ParallelLayout base;
            base.tp = tp, base.cp = cp, base.pp = pp, base.dp = dp, base.ep = ep, base.etp = etp;
            if (ep_overlap && ep == 1) {
              reject("ep-overlap-ep1", base.degrees(), "--ep-overlap");
              continue;
            }
            // --vp 3 asks for an interleaved pipeline: a layout of one stage has none (it kept vp=1, the pin dropped).
            if (pp == 1 && c.vp && *c.vp > 1) {
              reject("vp-pp1", base.degrees(), "one pipeline stage");
              continue;
            }
            Degrees deg;
            deg.shape = static_cast<int>(si);
            for (const auto& order : mesh_orders(base, c.pp_outermost)) {
              ++res.considered;
              ParallelLayout l = base;
              l.order = order;
              std::string why;
              if (!c.allow_slow_tp &&
                  (placement.crosses_domain(l, GroupKind::tp, &why) || placement.crosses_domain(l, GroupKind::etp, &why))) {
                reject("tp-slow-link", l.degrees() + " mesh " + l.mesh(), why);
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
              if (pp == 1) {
                schedules.push_back({PipelineSchedule::none, 1});
              } else {
                if (ep_overlap && (!c.vp || *c.vp == 1)) reject("ep-overlap-1f1b", base.degrees(), "--ep-overlap");
                else if (!c.vp || *c.vp == 1) schedules.push_back({PipelineSchedule::one_f_one_b, 1});
                std::vector<int> vps = c.vp ? std::vector<int>{*c.vp} : c.virtual_stage_options;
                for (int v : vps) {
                  if (v <= 1) continue;
                  // Unpinned, only chunk counts that split the layers evenly, counting the embedding, the
                  // loss and the MTP modules as layers the way Megatron's pipeline layouts do (DeepSeek-V3's
                  // 61 layers + embedding + MTP + loss = 64 slots for PP 8 x VP 2): what recipes use.
                  if (!c.vp) {
                    bool even = false;
                    for (int extra = 0; extra <= 3; ++extra) even = even || (model.layers + extra) % (pp * v) == 0;
                    if (!even) continue;
                  }
                  if (pp * v > pipeline_slots(model)) {
                    reject("pp-layers", fmt::format("pp={} vp={}", pp, v), fmt::format("{} layers", model.layers));
                    continue;
                  }
                  if (m % pp != 0) {
                    reject("vp-microbatches", fmt::format("pp={} vp={} m={}", pp, v, m), fmt::format("{} micro-batches", m));
                    continue;
                  }
                  schedules.push_back({PipelineSchedule::interleaved, v});
                }
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
                l.pp_layout = c.pp_layout;
                e.degrees = deg_index;
                candidates.push_back(std::move(e));
              }
            }
            if (!any_mb) reject("batch", base.degrees(), fmt::format("{} sequences per DP rank, micro-batch options", per_rank));
            degrees_list.push_back(std::move(deg));
          }
        }
      }
    }
  }
  // Each candidate's pipeline chunks, memory choices and compute bound: independent of the others, so
  // spread over the cores (a thread's own LayerCostCache; the caches give the same values to the bit).
  // Its rejections are replayed in the candidates' order, so the counts and examples are the same as
  // on one thread.
  struct Screened {
    std::string reason, layout, detail;  // reason empty: the candidate is an entry
  };
  std::vector<Screened> screened(candidates.size());
  // The memory choices of a layout with its chunks, and its compute bound at the least recompute of them;
  // a rejection when none fits.
  // The memory choices' rules, the same for fit() and fits_somewhere(): Megatron offloads its distributed
  // optimizer only (plan.cpp, check_constraints), and ZeRO-3's shard group is the HSDP one asked for.
  auto choice_skipped = [](bool offload_optimizer, int zero) { return offload_optimizer && zero == 0; };
  auto shard_of = [&](int zero) { return zero >= 3 ? c.shard_group.value_or(0) : 0; };
  auto fit = [&](Entry& e) -> Screened {
    ParallelLayout& l = e.layout;
    // Memory savers: per offload mode and ZeRO stage, the least recompute that fits (streaming
    // states over C2C can beat recomputing or sharding them, so auto keeps every mode).
    MemoryBreakdown smallest;
    bool have_smallest = false;
    MemoryFitter fitter(model, job, l, e.chunks);
    for (const auto& [oo, oa] : offloads) {
      for (int z : zeros) {
        if (choice_skipped(oo, z)) continue;
        const int shard = shard_of(z);
        for (const RecomputePlan& r : recomputes) {
          const MemoryBreakdown mem = fitter.worst(z, shard, r, oo, oa);
          if (!have_smallest || mem.total() < smallest.total()) smallest = mem, have_smallest = true;
          if (fits(mem, job, sys)) {
            e.choices.push_back({z, shard, r, oo, oa});
            break;
          }
        }
      }
    }
    if (e.choices.empty() && price_unfit && zeros.size() == 1 && recomputes.size() == 1 && offloads.size() == 1)
      e.choices.push_back({zeros.front(), shard_of(zeros.front()), recomputes.front(),
                           offloads.front().first, offloads.front().second});
    if (e.choices.empty()) return {"memory", l.degrees() + " mb=" + std::to_string(l.micro_batch), memory_detail(smallest, capacity)};
    // The bound: compute alone, which only the recompute plan changes: the least of the choices.
    const MemoryChoice* least = &e.choices.front();
    for (const MemoryChoice& mc : e.choices)
      if (recompute_rank(mc.recompute) < recompute_rank(least->recompute)) least = &mc;
    apply(l, *least);
    e.bound = step_lower_bound(model, job, sys, l, &e.chunks, &e.bound_stage);
    apply(l, e.choices.front());
    e.fitted = true;
    return {};
  };
  // Whether some memory choice fits: fit()'s verdict without its choices. Tried from the savers' far end (the
  // last offload mode, ZeRO stage and recompute plan), where a layout that fits at all usually fits at once;
  // the order changes only how soon the answer comes.
  auto fits_somewhere = [&](const Entry& e) {
    MemoryFitter fitter(model, job, e.layout, e.chunks);
    for (auto o = offloads.rbegin(); o != offloads.rend(); ++o)
      for (auto z = zeros.rbegin(); z != zeros.rend(); ++z) {
        if (choice_skipped(o->first, *z)) continue;
        const int shard = shard_of(*z);
        for (auto r = recomputes.rbegin(); r != recomputes.rend(); ++r)
          if (fits(fitter.worst(*z, shard, *r, o->first, o->second), job, sys)) return true;
      }
    return false;
  };
  // Where the top is kept, a layout's bound orders it until the search reaches it: it starts at the split-free
  // bound (no stages needed, one value per layer shape), and the search computes step_lower_bound when it pops
  // the layout, putting it back in at that (never lower) bound, so the layouts are priced in the same order as
  // with every bound computed here. Only where pipeline_chunks splits the whole model (no --pp-layout string);
  // most layouts are never reached (the DeepSeek-V3 plan on 8 racks: 29 077 screened, ~5 000 within 25 % of the
  // best). Without full counts (a comparison) the stages themselves wait too, and with them a pp-layout
  // rejection, which only a search that fits nothing reports (then it pops every layout).
  const bool bound_lazily = fit_lazily && (c.pp_layout.empty() || c.pp_layout == "uniform");
  const bool split_lazily = bound_lazily && !count_every_layout;
  // A layout's pipeline chunks, or its pp-layout rejection.
  auto split = [&](Entry& e) -> Screened {
    try {
      e.chunks = pipeline_chunks(model, job, sys, e.layout);
    } catch (const std::invalid_argument& err) {
      return {"pp-layout", fmt::format("pp={} vp={}", e.layout.pp, e.layout.virtual_stages), err.what()};
    }
    return {};
  };
  // The compute bound at no recompute (recomputing only adds work: no memory choice's bound is lower).
  auto bound_without_recompute = [&](Entry& e) {
    ParallelLayout none = e.layout;
    none.recompute = RecomputePlan{};
    return step_lower_bound(model, job, sys, none, &e.chunks, &e.bound_stage);
  };
  auto screen = [&](std::size_t i) {
    Entry& e = candidates[i];
    ParallelLayout& l = e.layout;
    if (split_lazily) {
      e.bound = step_split_free_bound(model, job, sys, l);
      e.bounded = e.fitted = false;
      return;
    }
    if (!(screened[i] = split(e)).reason.empty()) return;
    if (!fit_lazily) {
      screened[i] = fit(e);
      return;
    }
    // Counting every layout: whether it fits is decided here, which choices fit only when the search reaches
    // it (most never are: 2 206 of 29 077 in the DeepSeek-V3 plan on 8 racks). A layout that fits nowhere
    // goes through fit() for its rejection (the smallest breakdown over every choice, as before); fit() keeps
    // the one a pinned layout prices anyway.
    if (count_every_layout && !fits_somewhere(e)) {
      screened[i] = fit(e);
      return;
    }
    e.fitted = false;
    if (bound_lazily) {
      e.bound = step_split_free_bound(model, job, sys, l);
      e.bounded = false;
      return;
    }
    e.bound = bound_without_recompute(e);
  };
  for_each_on_cores(candidates.size(), screen, [&] {
    return std::make_unique<step_detail::LayerCostCache>(model, job, *sys.compute);
  });
  // The entries are the candidates that passed, compacted in place (a second vector of ~30 000 layouts was
  // ~10 MB of fresh memory to fault in).
  std::size_t passed = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!screened[i].reason.empty()) reject(screened[i].reason, screened[i].layout, screened[i].detail);
    else if (passed++ != i) candidates[passed - 1] = std::move(candidates[i]);
  }
  candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(passed), candidates.end());
  entries = std::move(candidates);
  res.screened = static_cast<long>(entries.size());

  // Phase 2: price layouts in order of (bound, enumeration order); stop when the bound passes the keep-th
  // best. Once the top is full, a layout is priced only if its bound plus the least its collectives can
  // add (over its mesh orders) can still reach it: exact for the top `keep`, and most layouts whose experts
  // or tensor groups cross slow links are never priced. A layout fitted lazily goes back in with its bound
  // at its choices' least recompute, never lower, so the layouts are priced in the same order either way.
  using Queued = std::pair<double, std::size_t>;
  std::priority_queue<Queued, std::vector<Queued>, std::greater<Queued>> queue;
  for (std::size_t i = 0; i < entries.size(); ++i) queue.push({entries[i].bound, i});
  std::vector<std::pair<std::size_t, Screened>> lazy_rejections;  // replayed in enumeration order below
  std::vector<std::pair<std::size_t, Screened>> lazy_split_rejections;  // (split_lazily) replayed before them
  // The `keep` best so far, one per group the ranking folds (equal time, same work), sorted by step: counting a
  // layout's equal-time variants apart would set the bar below the keep-th distinct layout and cut some of them.
  std::vector<double> best_steps;
  std::vector<ParallelLayout> best_layouts;
  while (!queue.empty()) {
    const auto [key, idx] = queue.top();
    Entry& e = entries[idx];
    const bool top_full = keep > 0 && static_cast<int>(best_steps.size()) >= keep;
    if (top_full && key > best_steps.back()) break;
    queue.pop();
    if (!e.bounded) {
      if (split_lazily) {
        Screened rejected = split(e);
        if (!rejected.reason.empty()) {
          lazy_split_rejections.push_back({idx, std::move(rejected)});
          continue;
        }
      }
      const double bound = bound_without_recompute(e);
      if (bound < key)  // the order above would not be the bounds' order
        throw std::logic_error(fmt::format("internal: the split-free bound {:.17g} s of {} exceeds its step_lower_bound {:.17g} s",
                                           key, e.layout.degrees(), bound));
      e.bound = bound;
      e.bounded = true;
      queue.push({e.bound, idx});
      continue;
    }
    if (!e.fitted) {
      Screened rejected = fit(e);
      if (!rejected.reason.empty()) lazy_rejections.push_back({idx, std::move(rejected)});
      else queue.push({e.bound, idx});
      continue;
    }
    Degrees& deg = degrees_list[e.degrees];
    const RankPlacement& placement = *placements[static_cast<std::size_t>(deg.shape)];
    // Groups depend on the HSDP shard group too: recompute them when a choice sets one.
    auto groups_for = [&](const ParallelLayout& l, std::size_t o) {
      if (l.shard_group > 0) return mesh_groups(placement, l, comm);
      if (deg.groups.empty())
        for (const auto& order : deg.orders) {
          ParallelLayout x = e.layout;
          x.order = order;
          x.shard_group = 0;
          deg.groups.push_back(mesh_groups(placement, x, comm));
        }
      return deg.groups[o];
    };
    if (top_full) {
      // The TP, EP, pipeline and DP groups do not depend on the shard group: the orders' groups serve
      // (comm_lower_bound leaves HSDP's choices' data parallelism out).
      double least_comm = -1;
      std::vector<ParallelLayout> choices(e.choices.size(), e.layout);
      for (std::size_t o = 0; o < deg.orders.size(); ++o) {
        for (std::size_t k = 0; k < e.choices.size(); ++k) {
          choices[k].order = deg.orders[o];
          apply(choices[k], e.choices[k]);
        }
        ParallelLayout x = e.layout;
        x.order = deg.orders[o];
        const double c = comm_lower_bound(model, job, sys, choices, groups_for(x, o), comm, e.chunks, e.bound_stage);
        least_comm = least_comm < 0 ? c : std::min(least_comm, c);
      }
      // (a relative margin: the two sides sum the same terms in different orders)
      if (e.bound + least_comm > best_steps.back() * (1 + 1e-9)) {
        ++res.cut_by_comm;
        continue;
      }
    }
    if (++res.evaluated == 1 && pricing_starts) pricing_starts(e.layout.gpus());
    // The best order with the first memory choice, then the other memory choices on that order. Megatron FSDP
    // (ZeRO-3) runs on Megatron's default rank order only: it does not support use_tp_pp_dp_mapping
    // (Megatron-Bridge skills/perf-techniques/megatron-fsdp/card.yaml @033eb68, known_constraints).
    auto order_allowed = [&](std::size_t o, int zero) { return zero < 3 || deg.orders[o].front() != MeshDim::dp; };
    ParallelLayout l = e.layout;
    std::optional<Candidate> best;
    std::size_t best_order = 0;
    for (std::size_t o = 0; o < deg.orders.size(); ++o) {
      if (!order_allowed(o, l.zero_stage)) continue;
      l.order = deg.orders[o];
      const MeshGroups g = groups_for(l, o);
      StepEstimate est = estimate_step(model, job, sys, placement, l, comm, &g, &e.chunks);
      if (!best || est.step_s < best->estimate.step_s) {
        best = Candidate{l, shapes[static_cast<std::size_t>(deg.shape)], std::move(est), {}};
        best_order = o;
      }
    }
    for (std::size_t k = 1; k < e.choices.size(); ++k) {
      apply(l, e.choices[k]);
      std::size_t o = best_order;
      if (!best || !order_allowed(o, l.zero_stage)) {  // an FSDP choice on the default order (mesh_orders' first)
        o = 0;
        if (!order_allowed(o, l.zero_stage)) continue;
      }
      l.order = deg.orders[o];
      const MeshGroups g = groups_for(l, o);
      StepEstimate est = estimate_step(model, job, sys, placement, l, comm, &g, &e.chunks);
      if (!best || est.step_s < best->estimate.step_s) best = Candidate{l, shapes[static_cast<std::size_t>(deg.shape)], std::move(est), {}};
    }
    if (!best) continue;  // every choice FSDP on a pinned DP-outer order (check_constraints refuses that pin)
    const double step = best->estimate.step_s;
    res.ranked.push_back(std::move(*best));
    if (keep > 0) {
      bool folded_in = false;
      for (std::size_t i = 0; i < best_steps.size() && !folded_in; ++i)
        folded_in = equal_time(best_steps[i], step) && same_work(best_layouts[i], res.ranked.back().layout);
      if (!folded_in) {
        const auto at = std::upper_bound(best_steps.begin(), best_steps.end(), step) - best_steps.begin();
        best_steps.insert(best_steps.begin() + at, step);
        best_layouts.insert(best_layouts.begin() + at, res.ranked.back().layout);
        if (static_cast<int>(best_steps.size()) > keep) best_steps.pop_back(), best_layouts.pop_back();
      }
    }
  }
  if (fit_lazily) {  // the rejections of layouts split and fitted as the search reached them, in enumeration order
    const auto by_index = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::sort(lazy_split_rejections.begin(), lazy_split_rejections.end(), by_index);
    for (const auto& [idx, r] : lazy_split_rejections) reject(r.reason, r.layout, r.detail);
    std::sort(lazy_rejections.begin(), lazy_rejections.end(), by_index);
    for (const auto& [idx, r] : lazy_rejections) reject(r.reason, r.layout, r.detail);
    // Without full counts, what was fitted: the layouts reached, and every layout when none fits.
    if (!count_every_layout)
      res.screened = static_cast<long>(std::count_if(entries.begin(), entries.end(), [](const Entry& x) { return x.fitted; }));
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
      if (!equal_time(it->estimate.step_s, cand.estimate.step_s)) break;  // sorted: none further back folds
      if (same_work(it->layout, cand.layout)) {
        it->equivalents.push_back(cand.layout.key());
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
