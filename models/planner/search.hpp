#pragma once
// The layout search: every factorisation of the GPUs into TP x EP x CP x PP x DP, every micro-batch
// size and pipeline schedule, every DeviceMesh order of the non-trivial dimensions (TP innermost);
// for each, the cheapest memory savers that fit (ZeRO stage, recompute, offload). Layouts that cannot
// run are rejected with a reason: a divisibility that fails, TP or EP across a slow link (a group
// spanning two fast domains), or memory. The rest are ranked by step time.
// Two phases: a pre-screen prices every layout's compute alone (a lower bound of its step time, no
// collective model); then layouts are fully evaluated in order of that bound until the bound passes
// the `keep`-th best step time found, so the top `keep` are exact and the rest need not be priced.
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
  std::optional<int> tp, ep, cp, pp, dp, micro_batch;
  std::optional<int> tp_times_ep;              // self-check 6: TP x EP = 64
  std::optional<PipelineSchedule> schedule;
  std::optional<int> zero_stage;               // auto: 1, 2, 3
  std::optional<Recompute> recompute;          // auto: the least that fits
  std::string offload = "auto";                // none, optimizer, activations, both, auto (every mode, the fastest wins)
  std::vector<int> micro_batch_options{1, 2, 4, 8};
  std::vector<int> virtual_stage_options{2, 4};
  int max_cp = 8;
  bool allow_slow_tp_ep = false;               // keep TP/EP groups that cross fast domains (for comparisons)
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
  std::string reason;   // category: "memory", "tp-slow-link", "ep-slow-link", "batch", ...
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
  std::size_t comm_evaluations = 0;                 // distinct collectives priced
};

// Plain-words text for a rejection category.
std::string rejection_text(const std::string& reason);

// keep: how many of the best layouts must be exact (0 = price every layout).
SearchResult search_layouts(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                            const std::vector<MeshShape>& shapes, const SearchConstraints& constraints, CommCost& comm,
                            int keep = 0);

}  // namespace racksim
