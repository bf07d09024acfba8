#pragma once
// What a model costs independent of how it is laid out: parameter counts by kind and by layer type,
// forward FLOPs per token, and the KV cache per token. Conventions: a matrix product of an [m x k] by a
// [k x n] matrix is 2 m k n FLOPs; causal attention over a context of s tokens averages s/2 keys per
// query (a sliding window w: min(w, s/2)); the Mamba-2 scan as the chunked SSD algorithm computes it.
#include "models/workload/model_spec.hpp"

namespace racksim {

// Parameters of one layer of a type, by how Megatron's parallelism splits them.
struct LayerParams {
  double tp_split = 0;        // divided over TP: attention/Mamba projections, dense FFN, shared experts
  double replicated = 0;      // whole on every TP rank: norms, router, MLA's down-projections, latent projections
  double routed_experts = 0;  // every routed expert of the layer, divided over EP x ETP
  double active_matmul = 0;   // matrix parameters one token multiplies with (top-k experts only)
  double total() const { return tp_split + replicated + routed_experts; }
};
LayerParams layer_params(const ModelSpec& model, const LayerType& type);

struct ParamCounts {
  double embedding = 0;            // vocab x hidden
  double lm_head = 0;              // vocab x hidden; 0 when tied to the embedding
  double final_norm = 0;           // hidden
  double attention_per_layer = 0;  // one attention block: projections + its input norm (+ q/k norms, MLA latent norms)
  double dense_ffn_per_layer = 0;  // one dense FFN block with its norm
  double mamba_per_layer = 0;      // one Mamba-2 block with its norm
  double router_per_layer = 0;     // h x experts, in a MoE block
  double expert = 0;               // one routed expert
  double shared_per_layer = 0;     // all shared experts of a MoE block
  double moe_norm_per_layer = 0;   // a MoE block's norm (+ LatentMoE's two projections)
  double mtp = 0;                  // the multi-token-prediction modules (not in total/active)
  double total = 0;                // every parameter of the published model
  double active = 0;               // parameters one token touches (top-k experts, embedding row, head)
};

ParamCounts count_params(const ModelSpec& model);

struct TokenFlops {
  double matmul_forward = 0;     // 2 x active matmul parameters (projections, experts, router, LM head)
  double attention_forward = 0;  // scores and weighted sum, causal (windowed where the model says)
  double ssm_forward = 0;        // Mamba-2 SSD scan
  double forward() const { return matmul_forward + attention_forward + ssm_forward; }
  // Model FLOPs of one training token (forward + backward = 3 x forward; recomputation not counted).
  double training() const { return 3 * forward(); }
};

// Forward FLOPs of one token with a causal context of seq_len tokens (the MTP modules left out).
TokenFlops forward_flops_per_token(const ModelSpec& model, int seq_len);

// Forward attention-core FLOPs of one query token on one layer of this type over all heads.
double attention_flops_per_token(const ModelSpec& model, const LayerType& type, int seq_len);
// Forward SSD-scan FLOPs of one token on one Mamba-2 layer over all heads: per head and chunk of Q
// tokens, C B^T (Q x Q x N), its product with x (Q x Q x P), the chunk state B^T x (N x P per token) and
// its read-out C state (N x P per token): 2 Q (N + P) + 4 N P per token.
double ssm_flops_per_token(const ModelSpec& model);

// KV cache elements per token for the whole model: GQA keeps K and V of kv_heads heads per attention
// layer; MLA keeps the compressed latent (kv_lora_rank + qk_rope_head_dim) per layer.
double kv_cache_elements_per_token(const ModelSpec& model);

}  // namespace racksim
