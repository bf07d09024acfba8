#pragma once
// ModelSpec: a language model as plain data, exactly as its JSON file says (the presets in
// models/workload/presets/*.json; format in docs/planner.md). Decoder-only, pre-norm, rotary positions.
// Two shapes of layer stack:
//  * transformer: every layer is an attention block and an FFN block, the FFN dense or a mixture of
//    experts (routed top-k + shared; MoE from `first_dense_layers` on, every `layer_frequency`-th);
//  * hybrid (Megatron's hybrid_override_pattern, Nemotron-H): `layer_pattern` gives one block per layer,
//    'M' Mamba-2, '*' attention, '-' dense MLP, 'E' mixture of experts.
// Attention is grouped-query (GQA, optionally with a sliding window on some layers) or multi-head latent
// (MLA, DeepSeek-V3); FFNs are gated (SwiGLU/GeGLU: three matrices) or not (squared ReLU: two).
#include <string>
#include <vector>

namespace racksim {

inline constexpr int kModelSchemaVersion = 1;

enum class AttentionKind { gqa, mla };
const char* to_string(AttentionKind kind);

enum class FfnActivation { swiglu, geglu, relu2 };
const char* to_string(FfnActivation a);
inline bool gated(FfnActivation a) { return a != FfnActivation::relu2; }

struct AttentionSpec {
  AttentionKind kind = AttentionKind::gqa;
  int heads = 0;              // query heads
  // gqa
  int kv_heads = 0;           // key/value heads (GQA groups); == heads for plain multi-head attention
  int head_dim = 0;           // per-head q/k/v width
  bool qk_norm = false;       // per-head RMSNorm on q and k (Qwen3)
  int sliding_window = 0;     // tokens a query sees on windowed layers (0: every layer full, causal)
  int full_attention_every = 1;  // with a window: layers l with (l + 1) % n == 0 attend fully (GPT-OSS: 2)
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
  int experts = 0;                   // routed experts per MoE layer; 0 = no MoE
  int shared_experts = 0;            // always-active experts
  int top_k = 0;                     // routed experts per token
  int expert_intermediate_size = 0;  // FFN width of one routed expert
  int shared_intermediate_size = 0;  // FFN width of all shared experts together (default experts x width)
  int latent_size = 0;               // LatentMoE: routed experts work in this width (0: the hidden size)
  int first_dense_layers = 0;        // transformer stacks: leading layers that keep a dense FFN (DeepSeek-V3: 3)
  int layer_frequency = 1;           // after those, every n-th layer is MoE (1 = all)
};

// Mamba-2 mixer (Dao & Gu 2024): in_proj h -> [z, x, B, C, dt], depthwise conv over x, B, C, the chunked
// state-space scan (SSD), a gated RMSNorm and out_proj d_inner -> h.
struct MambaSpec {
  int heads = 0;          // d_inner = heads x head_dim
  int head_dim = 0;
  int state_size = 0;     // N
  int groups = 1;         // B and C groups
  int conv_kernel = 4;
  int chunk_size = 128;   // SSD chunk length
  int d_inner() const { return heads * head_dim; }
};

// What one layer holds. Transformer layers: attention + dense FFN or MoE. Hybrid layers: one block.
struct LayerType {
  enum Attention { no_attention = 0, full = 1, windowed = 2 };
  enum Ffn { no_ffn = 0, dense = 1, moe = 2 };
  int attention = no_attention;
  int ffn = no_ffn;
  bool mamba = false;
  // The precision recipe keeps this layer's GEMMs in BF16 (Megatron's first_last_layers_bf16: ModelSpec's
  // nvfp4_bf16_at_start / _at_end under NVFP4); set per job by recipe_layer_type, never by the model alone.
  bool bf16_gemms = false;
  bool operator<(const LayerType& o) const {
    return attention != o.attention ? attention < o.attention
           : ffn != o.ffn           ? ffn < o.ffn
           : mamba != o.mamba       ? mamba < o.mamba
                                    : bf16_gemms < o.bf16_gemms;
  }
  bool operator==(const LayerType& o) const {
    return attention == o.attention && ffn == o.ffn && mamba == o.mamba && bf16_gemms == o.bf16_gemms;
  }
  std::string text() const;  // "attention+moe", "mamba", ...
};

struct ModelSpec {
  int schema_version = kModelSchemaVersion;
  std::string id, name;
  std::string source;                // where every number comes from (a config.json address)
  std::string notes;                 // what is left out (biases, ...)
  int layers = 0;
  int hidden_size = 0;
  int intermediate_size = 0;         // dense FFN width (0 only if no layer has a dense FFN)
  int vocab_size = 0;
  bool tie_embeddings = false;       // output head shares the embedding matrix
  FfnActivation ffn_activation = FfnActivation::swiglu;  // dense FFNs and experts
  std::string layer_pattern;         // hybrid stacks: one character per layer (M * - E); "" = transformer
  AttentionSpec attention;
  MoeSpec moe;
  MambaSpec mamba;
  // Multi-token prediction (DeepSeek-V3, Nemotron 3 Super): modules after the last layer, each a 2h -> h
  // projection, one more layer (mtp_pattern's blocks; "" = the last layer's type) and the shared output
  // head again. Trained with the model, left out of its published parameter count.
  int mtp_layers = 0;
  std::string mtp_pattern;
  // Layers an NVFP4 recipe for this model keeps in BF16 (Megatron's first_last_layers_bf16 with
  // num_layers_at_start_in_bf16 / num_layers_at_end_in_bf16), and where that recipe says so; 0: none (the
  // generic bf16_with_nvfp4_mixed keeps none).
  int nvfp4_bf16_at_start = 0, nvfp4_bf16_at_end = 0;
  std::string nvfp4_bf16_source;
  // Published parameter counts, for validation (0 = not given) and their source.
  double published_total_params = 0;
  double published_active_params = 0;
  std::string published_source;
  std::vector<LayerType> layer_types_;  // cache of layer_type (the search asks it millions of times)

  bool is_moe() const { return moe.experts > 0; }
  bool is_hybrid() const { return !layer_pattern.empty(); }
  LayerType layer_type(int layer) const {  // layer in [0, layers)
    return static_cast<int>(layer_types_.size()) == layers ? layer_types_[static_cast<std::size_t>(layer)] : compute_layer_type(layer);
  }
  LayerType compute_layer_type(int layer) const;
  void cache_layer_types();                // after changing the stack by hand (the JSON reader does it)
  LayerType mtp_layer_type() const;        // the blocks of one MTP module (all of mtp_pattern together)
  bool is_moe_layer(int layer) const { return layer_type(layer).ffn == LayerType::moe; }
  int moe_layer_count() const;
  int dense_layer_count() const;           // layers with a dense FFN
};

// Parses and validates (strict: unknown keys are errors); `where` names the origin in errors.
ModelSpec model_from_json_text(const std::string& text, const std::string& where);
ModelSpec load_model_file(const std::string& path);
// Canonical JSON text that model_from_json_text reads back to an equal spec.
std::string model_to_json_text(const ModelSpec& spec);

}  // namespace racksim
