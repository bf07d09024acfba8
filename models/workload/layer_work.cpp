#include "models/workload/layer_work.hpp"

#include <algorithm>

namespace racksim {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "none";
}

double LayerWork::matmul_flops() const {
  double f = 0;
  for (const auto& g : gemms) f += g.flops();
  return f;
}

double LayerWork::activation_bytes(Recompute r) const {
  switch (r) {
    case Recompute::none: return activation_bytes_none;
    case Recompute::selective: return activation_bytes_selective;
    case Recompute::full: return activation_bytes_full;
  }
  return activation_bytes_none;
}

LayerWork layer_work(const ModelSpec& m, bool moe_layer, int micro_batch, int seq_len, const ParallelShape& s,
                     double imbalance, double act_bytes) {
  LayerWork w;
  const double tp = s.tp, h = m.hidden_size;
  const double t = static_cast<double>(micro_batch) * seq_len / s.cp;
  w.tokens = t;
  const auto& a = m.attention;
  const double heads_local = static_cast<double>(a.heads) / tp;

  // Per-token activation elements kept for backward: `split` ones are sharded over TP (sequence
  // parallel or head split), `whole` ones sit complete on every TP rank; `sel` marks the ones that
  // selective recompute drops.
  double split = 0, whole = 0, sel_split = 0, sel_whole = 0;
  split += 2 * h;       // attention block input x and its norm (SP shards)
  sel_split += h;       // the normed x

  if (a.kind == AttentionKind::gqa) {
    const double q = heads_local * a.head_dim;
    // K/V heads are split over TP while there are enough of them, else replicated.
    const double kv = std::max(1.0, a.kv_heads / tp) * a.head_dim;
    w.gemms.push_back({"qkv", t, q + 2 * kv, h, 1});
    w.gemms.push_back({"attn_out", t, h, q, 1});
    whole += (q + 2 * kv + q);  // q, k, v, attention output (already per-GPU widths)
    w.cp_bytes = t * 2 * kv * act_bytes;
  } else {
    const double qk = a.qk_head_dim(), v = a.v_head_dim;
    if (a.q_lora_rank > 0) {
      w.gemms.push_back({"q_down", t, static_cast<double>(a.q_lora_rank), h, 1});   // duplicated on TP ranks
      w.gemms.push_back({"q_up", t, heads_local * qk, static_cast<double>(a.q_lora_rank), 1});
      whole += a.q_lora_rank;
    } else {
      w.gemms.push_back({"q_proj", t, heads_local * qk, h, 1});
    }
    w.gemms.push_back({"kv_down", t, static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim), h, 1});
    w.gemms.push_back({"kv_up", t, heads_local * (a.qk_nope_head_dim + v), static_cast<double>(a.kv_lora_rank), 1});
    w.gemms.push_back({"attn_out", t, h, heads_local * v, 1});
    whole += a.kv_lora_rank + a.qk_rope_head_dim + heads_local * (2 * qk + 2 * v);
    w.cp_bytes = t * heads_local * (qk + v) * act_bytes;
  }
  w.attention_flops = t * heads_local * seq_len * (a.qk_head_dim() + a.v_dim_per_head());

  split += 2 * h;       // FFN block input and its norm
  sel_split += h;
  if (!moe_layer) {
    const double f = m.intermediate_size / tp;
    w.gemms.push_back({"ffn_gate_up", t, 2 * f, h, 1});
    w.gemms.push_back({"ffn_down", t, h, f, 1});
    whole += 3 * f;     // gate, up, product
    sel_whole += f;     // the SwiGLU product
  } else {
    const auto& e = m.moe;
    const double fe = e.expert_intermediate_size / tp;
    const double local_experts = static_cast<double>(e.experts) / s.ep;
    const double assignments = t * e.top_k * imbalance;  // token-expert pairs this GPU computes
    const double per_expert = assignments / local_experts;
    w.gemms.push_back({"router", t, static_cast<double>(e.experts), h, 1});
    w.gemms.push_back({"expert_gate_up", per_expert, 2 * fe, h, local_experts});
    w.gemms.push_back({"expert_down", per_expert, h, fe, local_experts});
    // dispatched inputs and expert outputs (full width), gate/up/product (TP width), router probs (fp32)
    whole += (assignments / t) * (2 * h + 3 * fe) + 2.0 * e.experts;
    sel_whole += (assignments / t) * fe;
    if (e.shared_experts > 0) {
      const double fs = fe * e.shared_experts;
      w.gemms.push_back({"shared_gate_up", t, 2 * fs, h, 1});
      w.gemms.push_back({"shared_down", t, h, fs, 1});
      whole += 3 * fs;
      sel_whole += fs;
    }
    if (s.ep > 1) {
      w.ep_bytes = t * e.top_k * h * act_bytes / tp;
      w.ep_all_to_alls_forward = 2;
    }
  }
  if (s.tp > 1) {
    w.tp_bytes = t * h * act_bytes;
    w.tp_pairs_forward = 2;
  }
  if (s.cp > 1) w.cp_steps_forward = s.cp - 1;
  else w.cp_bytes = 0;

  const double per_token_none = split / tp + whole;
  const double per_token_sel = (split - sel_split) / tp + (whole - sel_whole);
  w.activation_bytes_none = t * per_token_none * act_bytes;
  w.activation_bytes_selective = t * per_token_sel * act_bytes;
  w.activation_bytes_full = t * (h / tp) * act_bytes;
  return w;
}

HeadWork head_work(const ModelSpec& m, int micro_batch, int seq_len, const ParallelShape& s) {
  HeadWork hw;
  const double t = static_cast<double>(micro_batch) * seq_len / s.cp;
  const double v = static_cast<double>(m.vocab_size) / s.tp;
  hw.gemm = {"lm_head", t, v, static_cast<double>(m.hidden_size), 1};
  hw.logits_bytes = t * v * 4;
  return hw;
}

}  // namespace racksim
