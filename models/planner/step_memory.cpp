// Memory per GPU of a layout's fullest pipeline stage, under the memory savers a search tries
// (step_model.hpp); the byte counts are the memory model's (models/workload/memory_fit.hpp).
#include <algorithm>
#include <map>
#include <tuple>

#include "models/planner/step_costs.hpp"

namespace racksim {

namespace step_detail {

double in_flight(const ParallelLayout& l, int stage) {
  if (l.pp == 1) return 1;
  return std::min<double>(l.micro_batches, l.pp - stage);
}

double interleave_factor(const ParallelLayout& l) {
  if (l.schedule != PipelineSchedule::interleaved) return 1;
  return 1 + static_cast<double>(l.pp - 1) / (static_cast<double>(l.pp) * l.virtual_stages);
}

TrainingMemoryConfig memory_config(const TrainingJob& job, const ParallelLayout& l, int stage) {
  TrainingMemoryConfig c;
  c.shape = ParallelShape{l.tp, l.cp, l.ep, l.etp};
  c.dp = l.dp;
  c.micro_batch = l.micro_batch;
  c.seq_len = job.seq_len;
  c.zero_stage = l.zero_stage;
  c.shard_group = l.shard_group;
  c.recompute = l.recompute;
  c.grad_bytes = job.grad_bytes;
  c.weight_copy_bytes = job.precision.weight_copy_bytes;
  c.param_bytes = job.precision.param_bytes;
  c.saved_input_bytes = job.precision.saved_input_bytes;
  c.imbalance = job.moe_imbalance;
  c.mtp = job.mtp;
  c.micro_batches_in_flight = in_flight(l, stage);
  c.interleave_factor = interleave_factor(l);
  c.offload_optimizer = l.offload_optimizer;
  c.offload_activations = l.offload_activations;
  return c;
}

}  // namespace step_detail

using namespace step_detail;

namespace {

// Whether GPU stages a and b hold the same make-up: as many chunks, each with the same layer count,
// embedding, head and MTP, and the same layer types in order.
bool same_makeup(const ModelSpec& model, const std::vector<StageSlice>& chunks, int pp, int a, int b) {
  std::size_t ca = static_cast<std::size_t>(a), cb = static_cast<std::size_t>(b);
  const std::size_t step = static_cast<std::size_t>(pp);
  for (; ca < chunks.size() && cb < chunks.size(); ca += step, cb += step) {
    const StageSlice &x = chunks[ca], &y = chunks[cb];
    if (x.layers != y.layers || x.has_embedding != y.has_embedding || x.has_head != y.has_head || x.has_mtp != y.has_mtp)
      return false;
    for (int i = 0; i < x.layers; ++i)
      if (!(model.layer_type(x.first_layer + i) == model.layer_type(y.first_layer + i))) return false;
  }
  return ca >= chunks.size() && cb >= chunks.size();
}

// Stages holding the same layers (types and counts) and the same embedding/head differ only in
// micro-batches in flight, which fall with the stage index: the first of each make-up is the fullest.
// (Compared in place: a search sizes thousands of layouts' stages.)
std::vector<int> distinct_stages(const ModelSpec& model, const std::vector<StageSlice>& chunks, int pp) {
  std::vector<int> out;
  for (int s = 0; s < pp; ++s) {
    bool seen = false;
    for (int t : out) seen = seen || same_makeup(model, chunks, pp, t, s);
    if (!seen) out.push_back(s);
  }
  return out;
}

}  // namespace

MemoryBreakdown layout_memory(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l,
                              int* stage_out, const std::vector<StageSlice>* given) {
  const std::vector<StageSlice> chunks = given ? *given : pipeline_chunks(model, job, sys, l);
  MemoryFitter fitter(model, job, l, chunks);
  return fitter.worst(l.zero_stage, l.shard_group, l.recompute, l.offload_optimizer, l.offload_activations, stage_out);
}

MemoryFitter::MemoryFitter(const ModelSpec& model, const TrainingJob& job, const ParallelLayout& layout, const std::vector<StageSlice>& chunks)
    : model_(model),
      job_(job),
      layout_(layout),
      stages_(distinct_stages(model, chunks, layout.pp)) {
  const LayerShape shape = activation_shape(memory_config(job, layout, 0));
  if (LayerCostCache* shared = LayerCostCache::active(model, job)) saved_ = &shared->saved_activations(shape);
  else saved_ = &own_saved_.emplace(model, shape);
  chunks_.reserve(stages_.size());  // stage_params_ refers to them
  for (int s : stages_) chunks_.push_back(chunks_of_stage(chunks, layout.pp, s));
  stage_params_.reserve(stages_.size());
  for (const auto& c : chunks_) stage_params_.emplace_back(model, c, ParallelShape{layout.tp, layout.cp, layout.ep, layout.etp}, job.mtp);
}

MemoryBreakdown MemoryFitter::worst(int zero, int shard, const RecomputePlan& rc, bool oo, bool oa, int* stage_out) {
  MemoryBreakdown worst;
  int worst_stage = 0;
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    const int s = stages_[i];
    // the parameter part (weights, gradients, optimizer) and the activation part, each kept per key (a
    // handful per stage: a linear search, no allocation)
    const ParamsKey pk{i, zero, shard, oo};
    auto pit = std::find_if(params_.begin(), params_.end(), [&](const auto& e) { return e.first == pk; });
    if (pit == params_.end()) {
      TrainingMemoryConfig c = memory_config(job_, layout_, s);
      c.zero_stage = zero, c.shard_group = shard, c.offload_optimizer = oo, c.offload_activations = false;
      c.recompute = RecomputePlan{};
      params_.emplace_back(pk, parameter_memory(stage_params_[i], c));
      pit = params_.end() - 1;
    }
    const ActivationsKey ak{i, rc.granularity, rc.modules, rc.full_layers, rc.block_method, oa};
    auto ait = std::find_if(activations_.begin(), activations_.end(), [&](const auto& e) { return e.first == ak; });
    if (ait == activations_.end()) {
      TrainingMemoryConfig c = memory_config(job_, layout_, s);
      c.recompute = rc, c.offload_activations = oa, c.offload_optimizer = false;
      activations_.emplace_back(ak, activation_memory(model_, chunks_[i], c, *saved_));
      ait = activations_.end() - 1;
    }
    MemoryBreakdown b = pit->second;
    const MemoryBreakdown& a = ait->second;
    b.activations = a.activations;
    b.logits = a.logits;
    b.host_offloaded = pit->second.host_offloaded + (a.host_offloaded - 0);  // activation offload (optimizer off there)
    if (i == 0 || b.total() > worst.total()) {
      worst = b;
      worst_stage = s;
    }
  }
  if (stage_out) *stage_out = worst_stage;
  return worst;
}

bool fits(const MemoryBreakdown& m, const TrainingJob& job, const SystemContext& sys) {
  // The reserve fraction applies to host memory too (data loading, the framework, page cache).
  return m.total() <= sys.hbm_bytes * (1 - job.memory_reserve) &&
         m.host_offloaded <= sys.host_bytes_per_gpu * (1 - job.memory_reserve);
}

}  // namespace racksim
