#include "models/workload/model_costs.hpp"

#include <algorithm>

namespace racksim {

namespace {

// An attention block: (tp-split projections, replicated norms and down-projections).
std::pair<double, double> attention_params(const ModelSpec& m) {
  const double h = m.hidden_size;
  const auto& a = m.attention;
  double split = 0, rep = h;  // input norm
  if (a.kind == AttentionKind::gqa) {
    const double q = static_cast<double>(a.heads) * a.head_dim;
    const double kv = static_cast<double>(a.kv_heads) * a.head_dim;
    split += h * q + 2 * h * kv + q * h;
    if (a.qk_norm) rep += 2.0 * a.head_dim;
  } else {
    const double qk = a.qk_head_dim();
    if (a.q_lora_rank > 0) {
      rep += h * a.q_lora_rank + a.q_lora_rank;
      split += static_cast<double>(a.q_lora_rank) * a.heads * qk;
    } else {
      split += h * a.heads * qk;
    }
    rep += h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
    split += static_cast<double>(a.kv_lora_rank) * a.heads * (a.qk_nope_head_dim + a.v_head_dim);
    split += static_cast<double>(a.heads) * a.v_head_dim * h;
  }
  return {split, rep};
}

double ffn_matrices(const ModelSpec& m) { return gated(m.ffn_activation) ? 3 : 2; }

}  // namespace

LayerParams layer_params(const ModelSpec& m, const LayerType& t) {
  LayerParams p;
  const double h = m.hidden_size;
  if (t.attention != LayerType::no_attention) {
    const auto [split, rep] = attention_params(m);
    p.tp_split += split;
    p.replicated += rep;
    p.active_matmul += split + rep - h - (m.attention.kind == AttentionKind::gqa
                                              ? (m.attention.qk_norm ? 2.0 * m.attention.head_dim : 0)
                                              : m.attention.kv_lora_rank + m.attention.q_lora_rank);
  }
  if (t.mamba) {
    const auto& s = m.mamba;
    const double di = s.d_inner(), gn = static_cast<double>(s.groups) * s.state_size, nh = s.heads;
    const double in_proj = h * (2 * di + 2 * gn + nh), out_proj = di * h;
    const double conv = (di + 2 * gn) * (s.conv_kernel + 1);
    p.tp_split += in_proj + out_proj + conv + 3 * nh + di;  // + A_log, D, dt_bias, the gated norm
    p.replicated += h;
    p.active_matmul += in_proj + out_proj;
  }
  if (t.ffn == LayerType::dense) {
    const double mats = ffn_matrices(m) * h * m.intermediate_size;
    p.tp_split += mats;
    p.replicated += h;
    p.active_matmul += mats;
  }
  if (t.ffn == LayerType::moe) {
    const auto& e = m.moe;
    const double d = e.latent_size > 0 ? e.latent_size : h;
    const double expert = ffn_matrices(m) * d * e.expert_intermediate_size;
    const double shared = ffn_matrices(m) * h * e.shared_intermediate_size;
    const double router = h * e.experts;
    const double latent = e.latent_size > 0 ? 2 * h * d : 0;
    p.replicated += h + router + latent;
    p.tp_split += shared;
    p.routed_experts += expert * e.experts;
    p.active_matmul += router + latent + shared + expert * e.top_k;
  }
  return p;
}

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts c;
  const double h = m.hidden_size;
  c.embedding = static_cast<double>(m.vocab_size) * h;
  c.lm_head = m.tie_embeddings ? 0 : c.embedding;
  c.final_norm = h;
  {
    const auto [split, rep] = attention_params(m);
    c.attention_per_layer = split + rep;
  }
  if (m.intermediate_size > 0) c.dense_ffn_per_layer = ffn_matrices(m) * h * m.intermediate_size + h;
  if (m.mamba.heads > 0) c.mamba_per_layer = layer_params(m, LayerType{LayerType::no_attention, LayerType::no_ffn, true}).total();
  if (m.is_moe()) {
    const LayerParams moe = layer_params(m, LayerType{LayerType::no_attention, LayerType::moe, false});
    c.router_per_layer = h * m.moe.experts;
    c.expert = moe.routed_experts / m.moe.experts;
    c.shared_per_layer = ffn_matrices(m) * h * m.moe.shared_intermediate_size;
    c.moe_norm_per_layer = moe.replicated - c.router_per_layer;
  }
  double layers_total = 0, layers_active = 0;
  for (int l = 0; l < m.layers; ++l) {
    const LayerParams p = layer_params(m, m.layer_type(l));
    layers_total += p.total();
    layers_active += p.total() - p.routed_experts + (m.is_moe() && m.layer_type(l).ffn == LayerType::moe
                                                          ? p.routed_experts * m.moe.top_k / m.moe.experts : 0);
  }
  const double outer = c.embedding + c.lm_head + c.final_norm;
  c.total = outer + layers_total;
  c.active = outer + layers_active;
  // One MTP module: norms of the two inputs, the 2h -> h projection, its layer(s), a final norm.
  if (m.mtp_layers > 0) {
    double module = 3 * h + 2 * h * h;
    if (m.mtp_pattern.empty()) module += layer_params(m, m.mtp_layer_type()).total();
    else
      for (char ch : m.mtp_pattern) {
        ModelSpec one = m;
        one.layer_pattern = std::string(1, ch);
        one.layers = 1;
        one.layer_types_.clear();
        module += layer_params(m, one.compute_layer_type(0)).total();
      }
    c.mtp = m.mtp_layers * module;
  }
  return c;
}

double attention_flops_per_token(const ModelSpec& m, const LayerType& t, int seq_len) {
  if (t.attention == LayerType::no_attention) return 0;
  const auto& a = m.attention;
  double keys = seq_len / 2.0;  // causal: s/2 keys on average
  if (t.attention == LayerType::windowed) keys = std::min<double>(a.sliding_window, keys);
  // two products (scores, weighted sum), 2 FLOPs per multiply-add
  return 2.0 * keys * a.heads * (a.qk_head_dim() + a.v_dim_per_head());
}

double ssm_flops_per_token(const ModelSpec& m) {
  const auto& s = m.mamba;
  if (s.heads == 0) return 0;
  const double q = s.chunk_size, n = s.state_size, p = s.head_dim;
  return s.heads * (2 * q * (n + p) + 4 * n * p);
}

TokenFlops forward_flops_per_token(const ModelSpec& m, int seq_len) {
  const ParamCounts c = count_params(m);
  TokenFlops f;
  double matmul = m.tie_embeddings ? c.embedding : c.lm_head;
  for (int l = 0; l < m.layers; ++l) {
    const LayerType t = m.layer_type(l);
    matmul += layer_params(m, t).active_matmul;
    f.attention_forward += attention_flops_per_token(m, t, seq_len);
    if (t.mamba) f.ssm_forward += ssm_flops_per_token(m);
  }
  f.matmul_forward = 2 * matmul;
  return f;
}

double kv_cache_elements_per_token(const ModelSpec& m) {
  const auto& a = m.attention;
  const double per_layer = a.kind == AttentionKind::gqa ? 2.0 * a.kv_heads * a.head_dim
                                                        : static_cast<double>(a.kv_lora_rank) + a.qk_rope_head_dim;
  int attention_layers = 0;
  for (int l = 0; l < m.layers; ++l) attention_layers += m.layer_type(l).attention != LayerType::no_attention ? 1 : 0;
  return per_layer * attention_layers;
}

}  // namespace racksim
