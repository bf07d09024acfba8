#pragma once
// Internal to the step model (step_model.cpp, step_costs.cpp, pipeline_split.cpp, step_memory.cpp): what
// one layer type and one pipeline chunk cost per micro-batch on one GPU, as Work (compute, recompute and
// the exposed TP/EP/CP collectives), cached per layer type for one estimate; the pipeline partition that
// balances chunks by those costs; the memory model's configuration of a layout's stage.
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "models/planner/step_model.hpp"
#include "models/workload/layer_work.hpp"

namespace racksim::step_detail {

constexpr double kAttentionBackward = 2.5;  // flash-attention's backward / forward (FlashAttention-2 paper, section 3.1)
constexpr double kOtherBackward = 2;        // GEMMs: dgrad + wgrad; elementwise, scan: assumption

LayerShape layer_shape(const TrainingJob& job, const ParallelLayout& l);

// Everything one layer type costs per micro-batch on one GPU, as Work.
struct LayerCost {
  Work compute;         // forward + backward
  Work recompute;       // recomputed forward work
  Work comm;            // exposed TP/EP/CP (features kTpComm, kEpOverlapComm, kFixed)
  Work fwd_window;      // forward compute + exposed comm (DP overlap windows)
  double tp_total = 0, ep_total = 0, cp_total = 0, cp_exposed = 0;
  double ep_sm = 0;     // overlapped EP (--ep-overlap): all-to-all seconds x the SM share its kernels hold
};

struct CostContext {
  const ModelSpec& model;
  const TrainingJob& job;
  const SystemContext& sys;
  const ParallelLayout& layout;
  const MeshGroups* groups;  // nullptr: no communication (the lower bound)
  CommCost* comm;
  LayerShape shape;
};
LayerCost cost_of(const LayerWork& w, const CostContext& cx, bool full_recompute, int moe_top_k);

// Per-layer-type costs of a layout, cached for the duration of one estimate.
class Costs {
 public:
  explicit Costs(CostContext cx) : cx_(std::move(cx)) {}
  const LayerCost& layer(const LayerType& t, bool full) {
    const auto key = std::make_pair(t, full);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      const LayerWork w = layer_work(cx_.model, t, cx_.shape);
      it = cache_.emplace(key, cost_of(w, cx_, full, cx_.model.moe.top_k)).first;
    }
    return it->second;
  }
  const LayerCost& head() {
    if (!head_) head_ = cost_of(head_work(cx_.model, cx_.shape), cx_, false, 0);
    return *head_;
  }
  const LayerCost& mtp() {
    if (!mtp_) mtp_ = cost_of(mtp_work(cx_.model, cx_.shape), cx_, cx_.layout.recompute.granularity == Recompute::full, 0);
    return *mtp_;
  }
  const CostContext& context() const { return cx_; }

 private:
  CostContext cx_;
  std::map<std::pair<LayerType, bool>, LayerCost> cache_;
  std::optional<LayerCost> head_, mtp_;
};

inline bool full_recompute_at(const RecomputePlan& rc, int index_in_chunk) {
  if (rc.granularity != Recompute::full) return false;
  if (rc.full_layers == 0 || !rc.block_method) return true;
  return index_in_chunk < rc.full_layers;
}

// The cost of one chunk for one micro-batch.
struct ChunkCost {
  Work compute, recompute, comm, fwd_window;
  double tp = 0, ep = 0, cp = 0, cp_exposed = 0, ep_sm = 0;
  void add(const LayerCost& c) {
    compute += c.compute;
    recompute += c.recompute;
    comm += c.comm;
    fwd_window += c.fwd_window;
    tp += c.tp_total, ep += c.ep_total, cp += c.cp_total, cp_exposed += c.cp_exposed, ep_sm += c.ep_sm;
  }
  ChunkCost& operator+=(const ChunkCost& c) {
    compute += c.compute, recompute += c.recompute, comm += c.comm, fwd_window += c.fwd_window;
    tp += c.tp, ep += c.ep, cp += c.cp, cp_exposed += c.cp_exposed, ep_sm += c.ep_sm;
    return *this;
  }
  Work total() const { return compute + recompute + comm; }
};
ChunkCost chunk_cost(const StageSlice& st, Costs& costs);

CostContext context_for(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l,
                        const MeshGroups* groups, CommCost* comm);
// Weight of each layer (and of the head/MTP/embedding) for balancing the pipeline: its compute time
// for one micro-batch at the current parameters.
double layer_weight(Costs& costs, const LayerType& t);

// The layout's PP x VP chunks (pipeline_split.cpp): its layout string, Megatron's uniform split, or
// balanced by the layer costs.
std::vector<StageSlice> partition(const ModelSpec& model, const ParallelLayout& l, Costs& costs);

// The memory model's view of stage `stage` (step_memory.cpp): micro-batches in flight, interleaving.
double in_flight(const ParallelLayout& l, int stage);
double interleave_factor(const ParallelLayout& l);
TrainingMemoryConfig memory_config(const TrainingJob& job, const ParallelLayout& l, int stage);

}  // namespace racksim::step_detail
