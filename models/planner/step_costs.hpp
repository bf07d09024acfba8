#pragma once
// Internal to the step model (step_model.cpp, step_costs.cpp, pipeline_split.cpp, step_memory.cpp; the
// search holds its LayerCostCache): what
// one layer type and one pipeline chunk cost per micro-batch on one GPU, as Work (compute, recompute and
// the exposed TP/EP/CP collectives), cached per layer type for one estimate; the pipeline partition that
// balances chunks by those costs; the memory model's configuration of a layout's stage.
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/planner/step_model.hpp"
#include "models/workload/layer_work.hpp"
#include "sim/core/hash.hpp"
#include "sim/core/thread_scope.hpp"

namespace racksim::step_detail {

constexpr double kAttentionBackward = 2.5;  // flash-attention's backward / forward (FlashAttention-2 paper, section 3.1)
constexpr double kOtherBackward = 2;        // GEMMs: dgrad + wgrad; elementwise, scan: assumption

LayerShape layer_shape(const TrainingJob& job, const ParallelLayout& l);
// Whether the job's precision recipe keeps some of the model's layers in BF16: under NVFP4, the model's
// first nvfp4_bf16_at_start and last nvfp4_bf16_at_end layers (Megatron's first_last_layers_bf16).
bool keeps_bf16_layers(const ModelSpec& model, const TrainingJob& job);
// A layer's type as the recipe runs it; `bf16_layers`: keeps_bf16_layers(model, job), asked once per
// layout rather than per layer (a string comparison per layer was ~8 % of an 8-rack plan's search).
inline LayerType recipe_layer_type(const ModelSpec& model, bool bf16_layers, int layer) {
  LayerType t = model.layer_type(layer);
  if (bf16_layers) t.bf16_gemms = layer < model.nvfp4_bf16_at_start || layer >= model.layers - model.nvfp4_bf16_at_end;
  return t;
}

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
  bool bf16_layers;  // keeps_bf16_layers(model, job)
};
// The compute part of a LayerCost (no communication): what the layer work, the precision recipe, the
// compute model and the recompute plan give.
struct LayerCompute {
  Work compute, recompute, fwd_window;
  bool recompute_moe = false;  // selective recompute of the MoE module (its all-to-alls repeat)
};
LayerCompute compute_of(const LayerWork& w, const CostContext& cx, bool full_recompute);
// compute_of(w, cx, full_recompute) plus the communication of cx's groups.
LayerCost cost_of(const LayerWork& w, const LayerCompute& compute, const CostContext& cx, bool full_recompute, int moe_top_k);
LayerCost cost_of(const LayerWork& w, const CostContext& cx, bool full_recompute, int moe_top_k);

enum class WorkKind { layer, head, mtp };

// Layer works and their compute parts for one search (one model, job and compute model), while a
// LayerCostCache::Scope lives on this thread: a search prices the same few layer types at the same
// shapes for thousands of layouts that differ only in PP, VP, DP or the mesh order, which change
// neither (issue 14). Keyed by every input layer_work and compute_of read (the work's kind and layer
// type, the layer shape, full recompute and the recompute plan), doubles bit for bit, so the results are
// the same to the bit; without a scope nothing is kept across estimates.
class LayerCostCache {
 public:
  LayerCostCache(const ModelSpec& model, const TrainingJob& job, const ComputeModel& compute)
      : model_(model), job_(job), compute_(compute) {}
  LayerCostCache(const LayerCostCache&) = delete;
  LayerCostCache& operator=(const LayerCostCache&) = delete;

  using Scope = ThreadScope<LayerCostCache>;
  // The active cache when it was made for cx's model, job and compute model; else nullptr.
  static LayerCostCache* active(const CostContext& cx);
  // The active cache when it was made for this model and job (memory needs no compute model).
  static LayerCostCache* active(const ModelSpec& model, const TrainingJob& job);

  const LayerWork& work(WorkKind kind, const LayerType& type, const LayerShape& shape);
  // The layer work at cx's shape and its compute part under cx's recompute plan.
  struct WorkAndCompute {
    const LayerWork* work = nullptr;
    LayerCompute compute;
  };
  const WorkAndCompute& compute(WorkKind kind, const LayerType& type, const CostContext& cx, bool full_recompute);
  // What each layer type keeps for its backward at `shape` (MemoryFitter's activations).
  SavedActivations& saved_activations(const LayerShape& shape);
  // The chunks balanced_partition gives `chunks` chunks over `pp` stages at cx's layer shape (it reads the
  // layers' compute, which neither the recompute plan nor the collectives change), computed by `make` once.
  template <class Make>
  const std::vector<StageSlice>& balanced_chunks(const CostContext& cx, int chunks, int pp, Make make) {
    std::tuple<WorkKey, int, int> key{work_key(WorkKind::layer, LayerType{}, cx.shape), chunks, pp};
    auto it = partitions_.find(key);
    if (it == partitions_.end()) it = partitions_.emplace(std::move(key), make()).first;
    return it->second;
  }
  // The compute time of every layer, the head and the MTP modules once at cx's layer shape (no recompute, no
  // communication), computed by `make` once per shape: what any split into stages sums to (step_split_free_bound).
  template <class Make>
  double whole_model_s(const CostContext& cx, Make make) {
    const WorkKey key = work_key(WorkKind::layer, LayerType{}, cx.shape);
    auto it = whole_model_s_.find(key);
    if (it == whole_model_s_.end()) it = whole_model_s_.emplace(key, make()).first;
    return it->second;
  }
  // forward_flops_per_token(model, job.seq_len).training(), once.
  double training_flops_per_token();
  std::size_t works() const { return works_.size(); }
  std::size_t computes() const { return computes_.size(); }

 private:
  using WorkKey = std::array<std::uint64_t, 12>;
  using ComputeKey = std::array<std::uint64_t, 17>;
  static WorkKey work_key(WorkKind kind, const LayerType& type, const LayerShape& shape);

  const ModelSpec& model_;
  const TrainingJob& job_;
  const ComputeModel& compute_;
  // Hashed: a search looks these up for every layer type of every layout it bounds or prices (with
  // ordered maps, comparing the keys word by word was ~5 % of a search). Node-based, so the pointers
  // computes_ keeps into works_ stay valid.
  struct KeyHash {
    template <std::size_t N>
    std::size_t operator()(const std::array<std::uint64_t, N>& key) const {
      std::size_t h = N;
      for (std::uint64_t x : key) h = hash_combine(h, x);
      return h;
    }
  };
  std::unordered_map<WorkKey, LayerWork, KeyHash> works_;
  std::unordered_map<ComputeKey, WorkAndCompute, KeyHash> computes_;
  std::map<WorkKey, std::unique_ptr<SavedActivations>> saved_;
  std::map<std::tuple<WorkKey, int, int>, std::vector<StageSlice>> partitions_;
  std::unordered_map<WorkKey, double, KeyHash> whole_model_s_;
  double training_flops_per_token_ = -1;
};

// Per-layer-type costs of a layout, cached for the duration of one estimate (their layer works and
// compute parts from the active LayerCostCache, if any).
class Costs {
 public:
  explicit Costs(CostContext cx) : cx_(std::move(cx)), shared_(LayerCostCache::active(cx_)) {}
  const LayerCost& layer(const LayerType& t, bool full) {
    // a handful of (type, full) pairs per layout: a linear search
    for (const auto& [key, cost] : cache_)
      if (key.second == full && key.first == t) return cost;
    cache_.emplace_back(std::make_pair(t, full), cost(WorkKind::layer, t, full, cx_.model.moe.top_k));
    return cache_.back().second;
  }
  const LayerCost& head() {
    if (!head_) head_ = cost(WorkKind::head, LayerType{}, false, 0);
    return *head_;
  }
  const LayerCost& mtp() {
    if (!mtp_) mtp_ = cost(WorkKind::mtp, LayerType{}, cx_.layout.recompute.granularity == Recompute::full, 0);
    return *mtp_;
  }
  const CostContext& context() const { return cx_; }

 private:
  LayerCost cost(WorkKind kind, const LayerType& t, bool full, int moe_top_k);

  CostContext cx_;
  LayerCostCache* shared_;
  std::deque<std::pair<std::pair<LayerType, bool>, LayerCost>> cache_;  // a deque: layer() hands out references
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
