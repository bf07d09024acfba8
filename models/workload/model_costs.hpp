#pragma once
// What a model costs independent of how it is laid out: parameter counts by kind, forward FLOPs per
// token, and the KV cache per token. Conventions: a matrix product of an [m x k] by a [k x n] matrix is
// 2 m k n FLOPs; causal attention over a context of s tokens averages s/2 keys per query.
#include "models/workload/model_spec.hpp"

namespace racksim {

struct ParamCounts {
  double embedding = 0;            // vocab x hidden
  double lm_head = 0;              // vocab x hidden; 0 when tied to the embedding
  double final_norm = 0;           // hidden
  double attention_per_layer = 0;  // projections + input RMSNorm (+ q/k norms, MLA latent norms)
  double dense_ffn_per_layer = 0;  // SwiGLU 3 h f + the FFN-side RMSNorm, in a dense layer
  double router_per_layer = 0;     // h x experts, in a MoE layer
  double expert = 0;               // one routed expert, 3 h f_e
  double shared_per_layer = 0;     // all shared experts of a MoE layer
  double moe_norm_per_layer = 0;   // the FFN-side RMSNorm of a MoE layer
  double total = 0;                // every parameter
  double active = 0;               // parameters one token touches (top-k experts, embedding row, head)

  // Per layer, excluding routed experts (replicated or tensor-split, never expert-split).
  double dense_part_of_moe_layer() const { return attention_per_layer + router_per_layer + shared_per_layer + moe_norm_per_layer; }
  double routed_experts_per_layer(int experts) const { return expert * experts; }
};

ParamCounts count_params(const ModelSpec& model);

struct TokenFlops {
  double matmul_forward = 0;     // 2 x active matmul parameters (projections, experts, router, LM head)
  double attention_forward = 0;  // scores and weighted sum: layers x heads x s x (d_qk + d_v)
  double forward() const { return matmul_forward + attention_forward; }
  // Model FLOPs of one training token (forward + backward = 3 x forward; recomputation not counted).
  double training() const { return 3 * forward(); }
};

// Forward FLOPs of one token with a causal context of seq_len tokens.
TokenFlops forward_flops_per_token(const ModelSpec& model, int seq_len);

// KV cache elements per token for the whole model: GQA keeps K and V of kv_heads heads per layer;
// MLA keeps the compressed latent (kv_lora_rank + qk_rope_head_dim) per layer.
double kv_cache_elements_per_token(const ModelSpec& model);

}  // namespace racksim
