#pragma once
// ModelSpec: a transformer language model as plain data, exactly as its JSON file says (the presets in
// models/workload/presets/*.json; format in docs/planner.md). Decoder-only, pre-norm RMSNorm, SwiGLU
// FFNs, rotary positions; attention is grouped-query (GQA, Llama/Mixtral/Qwen3) or multi-head latent
// (MLA, DeepSeek-V3); the FFN of a layer is dense or a mixture of experts (routed top-k + shared).
#include <string>

namespace racksim {

inline constexpr int kModelSchemaVersion = 1;

enum class AttentionKind { gqa, mla };
const char* to_string(AttentionKind kind);

struct AttentionSpec {
  AttentionKind kind = AttentionKind::gqa;
  int heads = 0;              // query heads
  // gqa
  int kv_heads = 0;           // key/value heads (GQA groups); == heads for plain multi-head attention
  int head_dim = 0;           // per-head q/k/v width
  bool qk_norm = false;       // per-head RMSNorm on q and k (Qwen3)
  // mla (DeepSeek-V2/V3): q = W_qb(norm(W_qa x)), [c_kv, k_rope] = W_kva x, [k_nope, v] = W_kvb(norm(c_kv))
  int q_lora_rank = 0;        // 0: q is one projection h -> heads * qk_head_dim
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  int qk_head_dim() const { return kind == AttentionKind::mla ? qk_nope_head_dim + qk_rope_head_dim : head_dim; }
  int v_dim_per_head() const { return kind == AttentionKind::mla ? v_head_dim : head_dim; }
};

struct MoeSpec {
  int experts = 0;                   // routed experts per MoE layer; 0 = dense model
  int shared_experts = 0;            // always-active experts, each expert_intermediate_size wide
  int top_k = 0;                     // routed experts per token
  int expert_intermediate_size = 0;  // SwiGLU width of one expert
  int first_dense_layers = 0;        // leading layers that keep a dense FFN (DeepSeek-V3: 3)
  int layer_frequency = 1;           // after those, every n-th layer is MoE (1 = all)
};

struct ModelSpec {
  int schema_version = kModelSchemaVersion;
  std::string id, name;
  std::string source;                // where every number comes from (a config.json address)
  std::string notes;                 // what is left out (MTP heads, biases, ...)
  int layers = 0;
  int hidden_size = 0;
  int intermediate_size = 0;         // dense SwiGLU FFN width (0 only if every layer is MoE)
  int vocab_size = 0;
  bool tie_embeddings = false;       // output head shares the embedding matrix
  AttentionSpec attention;
  MoeSpec moe;
  // Published parameter counts, for validation (0 = not given) and their source.
  double published_total_params = 0;
  double published_active_params = 0;
  std::string published_source;

  bool is_moe() const { return moe.experts > 0; }
  bool is_moe_layer(int layer) const;  // layer in [0, layers)
  int moe_layer_count() const;
  int dense_layer_count() const { return layers - moe_layer_count(); }
};

// Parses and validates (strict: unknown keys are errors); `where` names the origin in errors.
ModelSpec model_from_json_text(const std::string& text, const std::string& where);
ModelSpec load_model_file(const std::string& path);
// Canonical JSON text that model_from_json_text reads back to an equal spec.
std::string model_to_json_text(const ModelSpec& spec);

}  // namespace racksim
