#include "models/workload/model_costs.hpp"

namespace racksim {

namespace {

double attention_params(const ModelSpec& m) {
  const double h = m.hidden_size;
  const auto& a = m.attention;
  double p = h;  // input RMSNorm
  if (a.kind == AttentionKind::gqa) {
    const double q = static_cast<double>(a.heads) * a.head_dim;
    const double kv = static_cast<double>(a.kv_heads) * a.head_dim;
    p += h * q + 2 * h * kv + q * h;
    if (a.qk_norm) p += 2.0 * a.head_dim;
  } else {
    const double qk = a.qk_head_dim();
    if (a.q_lora_rank > 0)
      p += h * a.q_lora_rank + a.q_lora_rank + static_cast<double>(a.q_lora_rank) * a.heads * qk;
    else
      p += h * a.heads * qk;
    p += h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
    p += static_cast<double>(a.kv_lora_rank) * a.heads * (a.qk_nope_head_dim + a.v_head_dim);
    p += static_cast<double>(a.heads) * a.v_head_dim * h;
  }
  return p;
}

}  // namespace

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts c;
  const double h = m.hidden_size;
  c.embedding = static_cast<double>(m.vocab_size) * h;
  c.lm_head = m.tie_embeddings ? 0 : c.embedding;
  c.final_norm = h;
  c.attention_per_layer = attention_params(m);
  c.dense_ffn_per_layer = m.intermediate_size > 0 ? 3 * h * m.intermediate_size + h : 0;
  if (m.is_moe()) {
    c.router_per_layer = h * m.moe.experts;
    c.expert = 3 * h * m.moe.expert_intermediate_size;
    c.shared_per_layer = c.expert * m.moe.shared_experts;
    c.moe_norm_per_layer = h;
  }
  const int moe_layers = m.moe_layer_count();
  const int dense_layers = m.layers - moe_layers;
  const double shared = c.embedding + c.lm_head + c.final_norm + m.layers * c.attention_per_layer +
                        dense_layers * c.dense_ffn_per_layer +
                        moe_layers * (c.router_per_layer + c.shared_per_layer + c.moe_norm_per_layer);
  c.total = shared + moe_layers * c.expert * m.moe.experts;
  c.active = shared + moe_layers * c.expert * m.moe.top_k;
  return c;
}

TokenFlops forward_flops_per_token(const ModelSpec& m, int seq_len) {
  const ParamCounts c = count_params(m);
  const int moe_layers = m.moe_layer_count();
  const int dense_layers = m.layers - moe_layers;
  // Norm weights are elementwise, not matrix products; the embedding is a lookup.
  const double h = m.hidden_size;
  const double attention_matmul = c.attention_per_layer - h - (m.attention.kind == AttentionKind::gqa
                                                                   ? (m.attention.qk_norm ? 2.0 * m.attention.head_dim : 0)
                                                                   : m.attention.kv_lora_rank + m.attention.q_lora_rank);
  const double dense_ffn_matmul = c.dense_ffn_per_layer > 0 ? c.dense_ffn_per_layer - h : 0;
  const double moe_matmul = c.router_per_layer + c.shared_per_layer + c.expert * m.moe.top_k;
  const double head = m.tie_embeddings ? c.embedding : c.lm_head;
  TokenFlops f;
  f.matmul_forward = 2 * (m.layers * attention_matmul + dense_layers * dense_ffn_matmul + moe_layers * moe_matmul + head);
  f.attention_forward = static_cast<double>(m.layers) * m.attention.heads * seq_len *
                        (m.attention.qk_head_dim() + m.attention.v_dim_per_head());
  return f;
}

double kv_cache_elements_per_token(const ModelSpec& m) {
  const auto& a = m.attention;
  const double per_layer = a.kind == AttentionKind::gqa ? 2.0 * a.kv_heads * a.head_dim
                                                        : static_cast<double>(a.kv_lora_rank) + a.qk_rope_head_dim;
  return per_layer * m.layers;
}

}  // namespace racksim
