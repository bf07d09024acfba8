#include "models/workload/memory_fit.hpp"

#include <algorithm>
#include <utility>

#include "models/workload/model_costs.hpp"

namespace racksim {

namespace {

// Attention parameters that every TP rank holds whole: the norms, and MLA's down-projections.
double replicated_attention_params(const ModelSpec& m) {
  const double h = m.hidden_size;
  const auto& a = m.attention;
  if (a.kind == AttentionKind::gqa) return h + (a.qk_norm ? 2.0 * a.head_dim : 0);
  double p = h + h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
  if (a.q_lora_rank > 0) p += h * a.q_lora_rank + a.q_lora_rank;
  return p;
}

struct StageParams {
  double dense = 0, expert = 0;
};

StageParams stage_params(const ModelSpec& m, const StageSlice& st, const ParallelShape& s) {
  const ParamCounts c = count_params(m);
  const double tp = s.tp, h = m.hidden_size;
  const double attn_rep = replicated_attention_params(m);
  StageParams p;
  for (int l = st.first_layer; l < st.first_layer + st.layers; ++l) {
    p.dense += attn_rep + (c.attention_per_layer - attn_rep) / tp;
    if (m.is_moe_layer(l)) {
      p.dense += c.router_per_layer + c.moe_norm_per_layer + c.shared_per_layer / tp;
      p.expert += c.expert * m.moe.experts / (static_cast<double>(s.ep) * tp);
    } else {
      p.dense += h + (c.dense_ffn_per_layer - h) / tp;
    }
  }
  if (st.has_embedding) p.dense += c.embedding / tp;
  if (st.has_head) p.dense += c.final_norm + (m.tie_embeddings ? c.embedding : c.lm_head) / tp;
  return p;
}

}  // namespace

MemoryBreakdown training_memory_per_gpu(const ModelSpec& m, const StageSlice& st, const TrainingMemoryConfig& cfg) {
  MemoryBreakdown b;
  const StageParams p = stage_params(m, st, cfg.shape);
  b.dense_params = p.dense;
  b.expert_params = p.expert;
  const double dp_dense = static_cast<double>(cfg.dp) * cfg.shape.ep * cfg.shape.cp;
  const double dp_expert = static_cast<double>(cfg.dp) * cfg.shape.cp;
  const double sharded = p.dense / dp_dense + p.expert / dp_expert;
  const double whole = p.dense + p.expert;
  b.weights = cfg.param_bytes * (cfg.zero_stage >= 3 ? sharded : whole);
  b.grads = cfg.grad_bytes * (cfg.zero_stage >= 2 ? sharded : whole);
  const double optimizer = cfg.optimizer_bytes * (cfg.zero_stage >= 1 ? sharded : whole);
  if (cfg.offload_optimizer) b.host_offloaded += optimizer;
  else b.optimizer = optimizer;

  // Activations: every layer of the stage for each micro-batch in flight, plus (full recompute) one
  // layer's complete activations while it is being recomputed.
  int moe_layers = 0;
  for (int l = st.first_layer; l < st.first_layer + st.layers; ++l) moe_layers += m.is_moe_layer(l) ? 1 : 0;
  const int dense_layers = st.layers - moe_layers;
  double per_mb = 0, one_layer_full = 0;
  for (const auto& [count, moe] : {std::pair{dense_layers, false}, std::pair{moe_layers, true}}) {
    if (count == 0) continue;
    const LayerWork w = layer_work(m, moe, cfg.micro_batch, cfg.seq_len, cfg.shape, cfg.imbalance);
    per_mb += count * w.activation_bytes(cfg.recompute);
    one_layer_full = std::max(one_layer_full, w.activation_bytes_none);
  }
  const double in_flight = std::max(1.0, cfg.micro_batches_in_flight * cfg.interleave_factor);
  double kept = per_mb * in_flight;
  if (cfg.offload_activations && in_flight > 1) {
    b.host_offloaded += per_mb * (in_flight - 1);
    kept = per_mb;
  }
  b.activations = kept + (cfg.recompute == Recompute::full ? one_layer_full : 0);
  if (st.has_head) b.logits = head_work(m, cfg.micro_batch, cfg.seq_len, cfg.shape).logits_bytes;
  return b;
}

InferenceMemory inference_memory_per_gpu(const ModelSpec& m, int sequences, int context, const ParallelShape& s, int pp,
                                         double param_bytes, double kv_bytes) {
  InferenceMemory r;
  // Weights of the largest stage: ceil(layers / pp) layers, embedding and head counted on it.
  const int layers = (m.layers + pp - 1) / pp;
  StageSlice st{0, layers, true, true};
  const StageParams p = stage_params(m, st, s);
  r.weights = param_bytes * (p.dense + p.expert);
  const auto& a = m.attention;
  const double per_token_layer = a.kind == AttentionKind::gqa
                                     ? 2.0 * std::max(1.0, static_cast<double>(a.kv_heads) / s.tp) * a.head_dim
                                     : static_cast<double>(a.kv_lora_rank) + a.qk_rope_head_dim;
  r.kv_cache = kv_bytes * per_token_layer * layers * static_cast<double>(sequences) * context / s.cp;
  return r;
}

}  // namespace racksim
