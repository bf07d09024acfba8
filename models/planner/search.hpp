#pragma once
// The layout search: every factorisation of the GPUs into TP x CP x PP x DP, the MoE layers' EP x ETP
// folded into TP x CP x DP, every micro-batch size and pipeline schedule (1F1B, interleaved with VP
// chunks), both of Megatron's rank orders (PP or DP outermost); for each, the cheapest memory savers that
// fit (ZeRO stage / FSDP, recompute, offload). Layouts that cannot run are rejected with a reason: a
// divisibility that fails, TP or ETP across a slow link (a group spanning two fast domains), or memory.
// The rest are ranked by step time.
// Two phases: a pre-screen prices every layout's compute alone (a lower bound of its step time, no
// collective model); then layouts are fully evaluated in order of that bound until the bound passes
// the `keep`-th best step time found, so the top `keep` are exact and the rest need not be priced. Once
// `keep` are found, a layout whose bound plus the least its TP, EP, CP and pipeline collectives add
// (comm_lower_bound, over its mesh orders) passes the `keep`-th best is skipped without pricing.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/planner/layout.hpp"
#include "models/planner/step_model.hpp"

namespace racksim {

class CommCost;

// What the user pins down; unset = searched.
struct SearchConstraints {
  std::optional<int> tp, cp, pp, dp, ep, etp, vp, micro_batch;
  std::optional<int> edp;                      // expert data parallelism (TP x CP x DP / (EP x ETP))
  std::optional<int> tp_times_ep;              // self-check 6: TP x EP = 64
  std::optional<PipelineSchedule> schedule;
  std::optional<int> zero_stage;               // auto: 1, 2, 3
  std::optional<int> shard_group;              // ZeRO-3 HSDP shard group (0: plain FSDP)
  std::optional<RecomputePlan> recompute;      // auto: the least that fits
  std::optional<bool> pp_outermost;            // Megatron's rank order: tp-cp-dp-pp (true) or tp-cp-pp-dp
  std::string pp_layout;                       // ParallelLayout::pp_layout for every layout ("": balanced by time)
  std::string offload = "auto";                // none, optimizer, activations, both, auto (every mode, the fastest wins)
  std::vector<int> micro_batch_options{1, 2, 4, 8};
  std::vector<int> virtual_stage_options{2, 3, 4, 5, 6, 7, 8, 12, 16, 24};  // what published recipes use
  int max_cp = 8;
  int max_etp = 8;
  bool allow_slow_tp = false;                  // keep TP/ETP groups that cross fast domains (for comparisons)
  bool pinned() const { return tp && cp && pp && dp; }
};

// A GPU count as `domains` fast domains of `gpus_per_domain` GPUs each.
struct MeshShape {
  int domains = 1;
  int gpus_per_domain = 1;
  int gpus() const { return domains * gpus_per_domain; }
};

struct Candidate {
  ParallelLayout layout;
  MeshShape shape;
  StepEstimate estimate;
  // Layouts folded into this one: the same step time and the same work per GPU, split differently
  // (CP = 2 with half the DP and twice the micro-batch), as Layout::key() strings.
  std::vector<std::string> equivalents;
};

struct Rejection {
  std::string reason;   // category: "memory", "tp-slow-link", "batch", ...
  std::string layout;   // ParallelLayout::key() or the degrees
  std::string detail;
};

struct SearchResult {
  std::vector<Candidate> ranked;                    // fastest first; one entry per layout (best mesh order)
  std::map<std::string, long> rejected;             // reason -> count
  std::vector<Rejection> examples;                  // the first few of each reason, in search order
  long considered = 0;                              // (degrees, mesh order) combinations
  long screened = 0;                                // layouts (degrees, micro-batch, schedule) that fit
  long evaluated = 0;                               // of those, fully priced (the rest cannot reach the top)
  long cut_by_comm = 0;                             // of those not priced, skipped by the bound with communication
  std::size_t comm_evaluations = 0;                 // distinct collectives priced
};

// Plain-words text for a rejection category.
std::string rejection_text(const std::string& reason);

// The memory savers tried, cheapest first, when the recompute plan is not pinned.
std::vector<RecomputePlan> recompute_ladder(const ModelSpec& model);

// keep: how many of the best layouts must be exact (0 = price every layout). With every degree, the
// micro-batch, the schedule and the memory savers pinned, `price_unfit` prices the layout even when the
// memory model says it does not fit (its estimate says so: fits = false). `count_every_layout` false (with
// keep > 0): a layout is split into stages and its memory fitted only when the search reaches it, so `screened`
// and the pp-layout and memory rejections count only those (all of them when nothing fits); the ranked layouts
// are the same.
// `pricing_starts`, when given, is called once on this thread as the pricing begins, with the GPU count of the
// first layout priced (the least bound): a guess at the best's count that comes before most of the pricing's
// time, for a caller that starts work needing the count on cores the pricing leaves idle. Nothing else depends
// on it.
SearchResult search_layouts(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                            const std::vector<MeshShape>& shapes, const SearchConstraints& constraints, CommCost& comm,
                            int keep = 0, bool price_unfit = false, bool count_every_layout = true,
                            const std::function<void(int gpus)>& pricing_starts = {});

}  // namespace racksim
