#include "models/workload/memory_fit.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "models/workload/model_costs.hpp"

namespace racksim {

namespace {

// Layer parameters by layer type for one pass over a GPU's layers: a model has a handful of types, and
// a search counts the parameters of thousands of stages (layer_params is a few dozen products a call).
class ParamsByType {
 public:
  explicit ParamsByType(const ModelSpec& m) : m_(m) {}
  const LayerParams& operator()(const LayerType& t) {
    for (const auto& [type, params] : seen_)
      if (type == t) return params;
    seen_.emplace_back(t, layer_params(m_, t));
    return seen_.back().second;
  }

 private:
  const ModelSpec& m_;
  std::vector<std::pair<LayerType, LayerParams>> seen_;
};

void add_layer(const LayerParams& p, const ParallelShape& s, double& dense, double& expert) {
  dense += p.replicated + p.tp_split / s.tp;
  expert += p.routed_experts / (static_cast<double>(s.ep) * s.etp);
}

// Parameters of the largest FSDP unit (a decoder or MTP layer, the embedding, the LM head) on one GPU
// holding `chunks`, before sharding: its TP and EP x ETP share.
double largest_unit(const ModelSpec& m, const std::vector<StageSlice>& chunks, const ParallelShape& s, bool mtp) {
  const double embedding = static_cast<double>(m.vocab_size) * m.hidden_size / s.tp;
  ParamsByType params(m);
  auto layer = [&](const LayerType& t) {
    double dense = 0, expert = 0;
    add_layer(params(t), s, dense, expert);
    return dense + expert;
  };
  std::map<LayerType, double> seen;
  double unit = 0;
  for (const StageSlice& st : chunks) {
    for (int l = st.first_layer; l < st.first_layer + st.layers; ++l) {
      const LayerType t = m.layer_type(l);
      auto it = seen.find(t);
      if (it == seen.end()) it = seen.emplace(t, layer(t)).first;
      unit = std::max(unit, it->second);
    }
    if (st.has_embedding || st.has_head) unit = std::max(unit, embedding);
    if (st.has_mtp && mtp && m.mtp_layers > 0)
      unit = std::max(unit, layer(m.mtp_layer_type()) + 3.0 * m.hidden_size + 2.0 * m.hidden_size * m.hidden_size / s.tp);
  }
  return unit;
}

}  // namespace

std::pair<double, double> chunk_params(const ModelSpec& m, const std::vector<StageSlice>& chunks, const ParallelShape& s, bool mtp) {
  const double embedding = static_cast<double>(m.vocab_size) * m.hidden_size;
  double dense = 0, expert = 0;
  ParamsByType params(m);
  for (const StageSlice& st : chunks) {
    for (int l = st.first_layer; l < st.first_layer + st.layers; ++l) add_layer(params(m.layer_type(l)), s, dense, expert);
    if (st.has_embedding) dense += embedding / s.tp;
    if (st.has_head) dense += m.hidden_size + embedding / s.tp;  // final norm, LM head (the embedding's copy when tied)
    if (st.has_mtp && mtp && m.mtp_layers > 0) {
      // the MTP modules' own parameters, split like the rest: the projection over TP, its blocks as layers
      for (int k = 0; k < m.mtp_layers; ++k) {
        dense += 3.0 * m.hidden_size + 2.0 * m.hidden_size * m.hidden_size / s.tp;
        add_layer(params(m.mtp_layer_type()), s, dense, expert);
      }
    }
  }
  return {dense, expert};
}

StageParams::StageParams(const ModelSpec& model, const std::vector<StageSlice>& chunks, const ParallelShape& shape, bool mtp)
    : model_(model), chunks_(chunks), shape_(shape), mtp_(mtp) {
  std::tie(dense_, expert_) = chunk_params(model, chunks, shape, mtp);
}

double StageParams::largest_unit() {
  if (largest_unit_ < 0) largest_unit_ = racksim::largest_unit(model_, chunks_, shape_, mtp_);
  return largest_unit_;
}

MemoryBreakdown parameter_memory(StageParams& params, const TrainingMemoryConfig& cfg) {
  MemoryBreakdown b;
  const double dense = params.dense(), expert = params.expert();
  b.dense_params = dense;
  b.expert_params = expert;
  const double dp_dense = static_cast<double>(cfg.dp) * cfg.shape.cp;
  const double dp_expert = std::max(1, cfg.edp());
  const double sharded = dense / dp_dense + expert / dp_expert;
  const double whole = dense + expert;
  // ZeRO-3 within HSDP groups: the weights and gradients are sharded over the group only.
  double fsdp = sharded;
  if (cfg.zero_stage >= 3 && cfg.shard_group > 0) {
    const double g = std::min<double>(cfg.shard_group, dp_dense);
    fsdp = dense / g + expert / std::min(g, dp_expert);
  }
  b.weights = (cfg.param_bytes + cfg.weight_copy_bytes) * (cfg.zero_stage >= 3 ? fsdp : whole);
  b.grads = cfg.grad_bytes * (cfg.zero_stage >= 3 ? fsdp : cfg.zero_stage >= 2 ? sharded : whole);
  if (cfg.zero_stage >= 3) b.gathered = 2 * params.largest_unit() * (cfg.param_bytes + cfg.grad_bytes);
  const double optimizer_params = cfg.zero_stage >= 1 ? sharded : whole;
  const double optimizer = cfg.optimizer_bytes * optimizer_params;
  if (cfg.offload_optimizer) {
    // Megatron's HybridDeviceOptimizer keeps a host copy of the offloaded fp32 parameters with their Adam moments
    // and updates the GPU's fp32 main parameters from it, which stay in HBM: the moments are what leaves it
    // (Megatron-Bridge measured 15.3 GB freed at full offload where these states are 22.9 GB: 2/3 of them;
    // models/planner/step_model.cpp, kCpuAdamParamsPerSecondPerRank).
    b.host_offloaded += optimizer;
    b.optimizer = std::min(cfg.optimizer_bytes, kFp32MasterBytesPerParam) * optimizer_params;
  } else {
    b.optimizer = optimizer;
  }
  return b;
}

const SavedActivations::Layer& SavedActivations::layer(const LayerType& type) {
  for (const auto& [t, saved] : layers_)
    if (t == type) return saved;
  const LayerWork w = layer_work(model_, type, shape_);
  layers_.push_back({type, Layer{w.saved, w.offloadable, w.saved_all(), w.input_bytes}});
  return layers_.back().second;
}

double SavedActivations::mtp_all() {
  if (mtp_all_ < 0) mtp_all_ = mtp_work(model_, shape_).saved_all();
  return mtp_all_;
}

double SavedActivations::head_all() {
  if (head_all_ < 0) head_all_ = head_work(model_, shape_).saved_all();
  return head_all_;
}

LayerShape activation_shape(const TrainingMemoryConfig& cfg) {
  LayerShape ls;
  ls.par = cfg.shape;
  ls.micro_batch = cfg.micro_batch;
  ls.seq_len = cfg.seq_len;
  ls.imbalance = cfg.imbalance;
  ls.saved_input_bytes = cfg.saved_input_bytes;
  return ls;
}

MemoryBreakdown activation_memory(const ModelSpec& m, const std::vector<StageSlice>& chunks, const TrainingMemoryConfig& cfg,
                                  SavedActivations& saved) {
  MemoryBreakdown b;
  // Activations of one micro-batch on every chunk, then times the micro-batches in flight. Per layer:
  // everything, what selective recompute leaves, or its input.
  const RecomputePlan& rc = cfg.recompute;
  double per_mb = 0, per_mb_offloadable = 0, one_layer_full = 0;
  for (const StageSlice& st : chunks) {
    for (int i = 0; i < st.layers; ++i) {
      const SavedActivations::Layer& w = saved.layer(m.layer_type(st.first_layer + i));
      one_layer_full = std::max(one_layer_full, w.all);
      switch (rc.granularity) {
        case Recompute::none:
          per_mb += w.all;
          per_mb_offloadable += w.offloadable.kept(0);
          break;
        case Recompute::selective:
          per_mb += w.saved.kept(rc.modules);
          per_mb_offloadable += w.offloadable.kept(rc.modules);
          break;
        case Recompute::full:
          if (rc.full_layers == 0) per_mb += w.input;
          else if (rc.block_method) per_mb += i < rc.full_layers ? w.input : w.all;
          else per_mb += i % rc.full_layers == 0 ? w.input : 0;  // uniform: one input per group
          break;
      }
    }
    if (st.has_mtp && cfg.mtp && m.mtp_layers > 0) per_mb += m.mtp_layers * saved.mtp_all();
  }
  const double in_flight = std::max(1.0, cfg.micro_batches_in_flight * cfg.interleave_factor);
  double kept = per_mb * in_flight;
  if (cfg.offload_activations && in_flight > 1) {
    // Megatron's fine-grained activation offload moves the offload modules' tensors (LayerWork::offloadable) of
    // the micro-batches in flight beyond one; the rest stays (a full-recompute layer keeps only its input, which
    // is no offload module's).
    b.host_offloaded += per_mb_offloadable * (in_flight - 1);
    kept -= per_mb_offloadable * (in_flight - 1);
  }
  // Full recompute re-creates a layer's (uniform: a group's) activations during its backward.
  double recomputing = 0;
  if (rc.granularity == Recompute::full) recomputing = one_layer_full * std::max(1, rc.block_method ? 1 : rc.full_layers);
  b.activations = kept + recomputing;
  for (const StageSlice& st : chunks)
    if (st.has_head) b.logits = saved.head_all() * (1 + (st.has_mtp && cfg.mtp ? m.mtp_layers : 0));
  return b;
}

MemoryBreakdown training_memory_per_gpu(const ModelSpec& m, const std::vector<StageSlice>& chunks, const TrainingMemoryConfig& cfg) {
  StageParams params(m, chunks, cfg.shape, cfg.mtp);
  MemoryBreakdown b = parameter_memory(params, cfg);
  SavedActivations saved(m, activation_shape(cfg));
  const MemoryBreakdown a = activation_memory(m, chunks, cfg, saved);
  b.activations = a.activations;
  b.logits = a.logits;
  b.host_offloaded += a.host_offloaded;
  return b;
}

InferenceMemory inference_memory_per_gpu(const ModelSpec& m, int sequences, int context, const ParallelShape& s, int pp,
                                         double param_bytes, double kv_bytes) {
  InferenceMemory r;
  // Weights of the largest stage: ceil(layers / pp) layers, embedding and head counted on it.
  const int layers = (m.layers + pp - 1) / pp;
  const auto [dense, expert] = chunk_params(m, {StageSlice{0, layers, true, true, false}}, s, false);
  r.weights = param_bytes * (dense + expert);
  const auto& a = m.attention;
  const double per_token_layer = a.kind == AttentionKind::gqa
                                     ? 2.0 * std::max(1.0, static_cast<double>(a.kv_heads) / s.tp) * a.head_dim
                                     : static_cast<double>(a.kv_lora_rank) + a.qk_rope_head_dim;
  int attention_layers = 0;
  for (int l = 0; l < layers; ++l) attention_layers += m.layer_type(l).attention != LayerType::no_attention ? 1 : 0;
  r.kv_cache = kv_bytes * per_token_layer * attention_layers * static_cast<double>(sequences) * context / s.cp;
  return r;
}

}  // namespace racksim
