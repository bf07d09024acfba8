#include "models/workload/model_spec.hpp"

#include <algorithm>

#include "sim/core/json_reader.hpp"

namespace racksim {

const char* to_string(AttentionKind kind) { return kind == AttentionKind::mla ? "mla" : "gqa"; }

const char* to_string(FfnActivation a) {
  switch (a) {
    case FfnActivation::swiglu: return "swiglu";
    case FfnActivation::geglu: return "geglu";
    case FfnActivation::relu2: return "relu2";
  }
  return "swiglu";
}

std::string LayerType::text() const {
  std::string out;
  auto add = [&](const char* s) { out += (out.empty() ? "" : "+") + std::string(s); };
  if (mamba) add("mamba");
  if (attention == full) add("attention");
  if (attention == windowed) add("windowed-attention");
  if (ffn == dense) add("mlp");
  if (ffn == moe) add("moe");
  if (bf16_gemms) add("bf16");
  return out.empty() ? "empty" : out;
}

namespace {

LayerType block_of(char c) {
  LayerType t;
  if (c == 'M') t.mamba = true;
  if (c == '*') t.attention = LayerType::full;
  if (c == '-') t.ffn = LayerType::dense;
  if (c == 'E') t.ffn = LayerType::moe;
  return t;
}

}  // namespace

LayerType ModelSpec::compute_layer_type(int layer) const {
  if (is_hybrid()) return block_of(layer_pattern.at(static_cast<std::size_t>(layer)));
  LayerType t;
  const bool window = attention.sliding_window > 0 && (layer + 1) % attention.full_attention_every != 0;
  t.attention = window ? LayerType::windowed : LayerType::full;
  const bool moe_layer = is_moe() && layer >= moe.first_dense_layers && (layer - moe.first_dense_layers) % moe.layer_frequency == 0;
  t.ffn = moe_layer ? LayerType::moe : LayerType::dense;
  return t;
}

LayerType ModelSpec::mtp_layer_type() const {
  if (mtp_pattern.empty()) return layer_type(layers - 1);
  LayerType t;
  for (char c : mtp_pattern) {
    const LayerType b = block_of(c);
    t.mamba = t.mamba || b.mamba;
    t.attention = std::max(t.attention, b.attention);
    t.ffn = std::max(t.ffn, b.ffn);
  }
  return t;
}

void ModelSpec::cache_layer_types() {
  layer_types_.clear();
  for (int l = 0; l < layers; ++l) layer_types_.push_back(compute_layer_type(l));
}

int ModelSpec::moe_layer_count() const {
  int n = 0;
  for (int l = 0; l < layers; ++l) n += layer_type(l).ffn == LayerType::moe ? 1 : 0;
  return n;
}

int ModelSpec::dense_layer_count() const {
  int n = 0;
  for (int l = 0; l < layers; ++l) n += layer_type(l).ffn == LayerType::dense ? 1 : 0;
  return n;
}

namespace {

constexpr long kMaxDim = 1L << 20;

AttentionSpec read_attention(JsonObjectReader r) {
  AttentionSpec a;
  a.kind = r.one_of("kind", {"gqa", "mla"}) == "mla" ? AttentionKind::mla : AttentionKind::gqa;
  a.heads = static_cast<int>(r.integer_in("heads", 1, 4096));
  if (a.kind == AttentionKind::gqa) {
    a.kv_heads = static_cast<int>(r.integer_in("kv_heads", 1, a.heads));
    if (a.heads % a.kv_heads != 0)
      r.fail("kv_heads", std::to_string(a.kv_heads), "a divisor of heads (" + std::to_string(a.heads) + ")");
    a.head_dim = static_cast<int>(r.integer_in("head_dim", 1, 4096));
    a.qk_norm = r.boolean_or("qk_norm", false);
    a.sliding_window = static_cast<int>(r.integer_in_or("sliding_window", 0, 1L << 24, 0));
    a.full_attention_every = static_cast<int>(r.integer_in_or("full_attention_every", 1, 1000, 1));
    if (a.sliding_window == 0 && r.has("full_attention_every"))
      r.fail("full_attention_every", std::to_string(a.full_attention_every), "only with sliding_window > 0");
  } else {
    a.q_lora_rank = static_cast<int>(r.integer_in_or("q_lora_rank", 0, kMaxDim, 0));
    a.kv_lora_rank = static_cast<int>(r.integer_in("kv_lora_rank", 1, kMaxDim));
    a.qk_nope_head_dim = static_cast<int>(r.integer_in("qk_nope_head_dim", 1, 4096));
    a.qk_rope_head_dim = static_cast<int>(r.integer_in("qk_rope_head_dim", 1, 4096));
    a.v_head_dim = static_cast<int>(r.integer_in("v_head_dim", 1, 4096));
  }
  r.finish();
  return a;
}

MoeSpec read_moe(JsonObjectReader r, int layers, bool hybrid) {
  MoeSpec m;
  m.experts = static_cast<int>(r.integer_in("experts", 1, 65536));
  m.top_k = static_cast<int>(r.integer_in("top_k", 1, m.experts));
  m.shared_experts = static_cast<int>(r.integer_in_or("shared_experts", 0, 1024, 0));
  m.expert_intermediate_size = static_cast<int>(r.integer_in("expert_intermediate_size", 1, kMaxDim));
  m.shared_intermediate_size = static_cast<int>(
      r.integer_in_or("shared_intermediate_size", 1, kMaxDim, static_cast<long>(m.shared_experts) * m.expert_intermediate_size));
  if (m.shared_experts == 0 && r.has("shared_intermediate_size"))
    r.fail("shared_intermediate_size", std::to_string(m.shared_intermediate_size), "only with shared_experts > 0");
  if (m.shared_experts == 0) m.shared_intermediate_size = 0;
  m.latent_size = static_cast<int>(r.integer_in_or("latent_size", 0, kMaxDim, 0));
  if (hybrid && (r.has("first_dense_layers") || r.has("layer_frequency")))
    r.fail(r.has("first_dense_layers") ? "first_dense_layers" : "layer_frequency", "(given)",
           "no value: with layer_pattern the 'E' characters say which layers are MoE");
  m.first_dense_layers = static_cast<int>(r.integer_in_or("first_dense_layers", 0, layers - 1, 0));
  m.layer_frequency = static_cast<int>(r.integer_in_or("layer_frequency", 1, layers, 1));
  r.finish();
  return m;
}

MambaSpec read_mamba(JsonObjectReader r) {
  MambaSpec m;
  m.heads = static_cast<int>(r.integer_in("heads", 1, 65536));
  m.head_dim = static_cast<int>(r.integer_in("head_dim", 1, 4096));
  m.state_size = static_cast<int>(r.integer_in("state_size", 1, 65536));
  m.groups = static_cast<int>(r.integer_in_or("groups", 1, m.heads, 1));
  if (m.heads % m.groups != 0) r.fail("groups", std::to_string(m.groups), "a divisor of heads (" + std::to_string(m.heads) + ")");
  m.conv_kernel = static_cast<int>(r.integer_in_or("conv_kernel", 1, 64, 4));
  m.chunk_size = static_cast<int>(r.integer_in_or("chunk_size", 1, 65536, 128));
  r.finish();
  return m;
}

void check_pattern(const JsonObjectReader& r, const std::string& key, const std::string& p, const std::string& allowed) {
  for (char c : p)
    if (allowed.find(c) == std::string::npos)
      r.fail(key, "'" + p + "'", "characters from '" + allowed + "' (M Mamba-2, * attention, - dense MLP, E mixture of experts)");
}

}  // namespace

ModelSpec model_from_json_text(const std::string& text, const std::string& where) {
  const nlohmann::json doc = parse_json_text(text, where);
  JsonObjectReader r(doc, where);
  ModelSpec m;
  m.schema_version = static_cast<int>(r.integer_in("schema_version", kModelSchemaVersion, kModelSchemaVersion));
  m.id = r.string("id");
  m.name = r.string("name");
  m.source = r.string("source");
  m.notes = r.string_or("notes", "");
  m.layers = static_cast<int>(r.integer_in("layers", 1, 10000));
  m.hidden_size = static_cast<int>(r.integer_in("hidden_size", 1, kMaxDim));
  m.vocab_size = static_cast<int>(r.integer_in("vocab_size", 1, 1L << 24));
  m.tie_embeddings = r.boolean_or("tie_embeddings", false);
  const std::string act = r.one_of_or("ffn_activation", {"swiglu", "geglu", "relu2"}, "swiglu");
  m.ffn_activation = act == "relu2" ? FfnActivation::relu2 : act == "geglu" ? FfnActivation::geglu : FfnActivation::swiglu;
  m.layer_pattern = r.string_or("layer_pattern", "");
  if (m.is_hybrid()) {
    check_pattern(r, "layer_pattern", m.layer_pattern, "M*-E");
    if (static_cast<int>(m.layer_pattern.size()) != m.layers)
      r.fail("layer_pattern", std::to_string(m.layer_pattern.size()) + " characters",
             "one character per layer (layers = " + std::to_string(m.layers) + ")");
  }
  m.attention = read_attention(r.object("attention"));
  if (r.has("moe")) m.moe = read_moe(r.object("moe"), m.layers, m.is_hybrid());
  if (r.has("mamba")) m.mamba = read_mamba(r.object("mamba"));
  const auto uses = [&](char c) { return m.layer_pattern.find(c) != std::string::npos; };
  if (uses('E') && !m.is_moe()) r.fail("moe", "(missing)", "a moe object: layer_pattern has 'E' layers");
  if (uses('M') && m.mamba.heads == 0) r.fail("mamba", "(missing)", "a mamba object: layer_pattern has 'M' layers");
  if (m.is_hybrid() && m.is_moe() && !uses('E')) r.fail("moe", "(given)", "no moe object: layer_pattern has no 'E' layer");
  if (!uses('M') && r.has("mamba")) r.fail("mamba", "(given)", "no mamba object: no layer_pattern 'M' layer");
  m.mtp_layers = static_cast<int>(r.integer_in_or("mtp_layers", 0, 16, 0));
  m.mtp_pattern = r.string_or("mtp_pattern", "");
  check_pattern(r, "mtp_pattern", m.mtp_pattern, "M*-E");
  if (!m.mtp_pattern.empty() && m.mtp_layers == 0) r.fail("mtp_pattern", "'" + m.mtp_pattern + "'", "only with mtp_layers > 0");
  m.intermediate_size = static_cast<int>(r.integer_in_or("intermediate_size", 0, kMaxDim, 0));
  if (m.intermediate_size == 0 && m.dense_layer_count() > 0)
    r.fail("intermediate_size", "0 (missing)",
           "a dense FFN width > 0: " + std::to_string(m.dense_layer_count()) + " layer(s) have a dense FFN");
  m.cache_layer_types();
  if (r.has("nvfp4_bf16_layers")) {
    JsonObjectReader q = r.object("nvfp4_bf16_layers");
    m.nvfp4_bf16_at_start = static_cast<int>(q.integer_in_or("at_start", 0, m.layers, 0));
    m.nvfp4_bf16_at_end = static_cast<int>(q.integer_in_or("at_end", 0, m.layers, 0));
    m.nvfp4_bf16_source = q.string("source");
    if (m.nvfp4_bf16_at_start + m.nvfp4_bf16_at_end > m.layers)
      q.fail("at_end", std::to_string(m.nvfp4_bf16_at_end),
             "at most " + std::to_string(m.layers - m.nvfp4_bf16_at_start) + " (layers less at_start)");
    q.finish();
  }
  if (r.has("published")) {
    JsonObjectReader p = r.object("published");
    m.published_total_params = p.positive("total_params");
    m.published_active_params = p.positive_or("active_params", 0);
    m.published_source = p.string("source");
    p.finish();
  }
  r.finish();
  return m;
}

ModelSpec load_model_file(const std::string& path) {
  const nlohmann::json doc = parse_json_file(path);
  return model_from_json_text(dump_json(doc), path);
}

std::string model_to_json_text(const ModelSpec& m) {
  nlohmann::ordered_json attention;
  attention["kind"] = to_string(m.attention.kind);
  attention["heads"] = m.attention.heads;
  if (m.attention.kind == AttentionKind::gqa) {
    attention["kv_heads"] = m.attention.kv_heads;
    attention["head_dim"] = m.attention.head_dim;
    attention["qk_norm"] = m.attention.qk_norm;
    if (m.attention.sliding_window > 0) {
      attention["sliding_window"] = m.attention.sliding_window;
      attention["full_attention_every"] = m.attention.full_attention_every;
    }
  } else {
    attention["q_lora_rank"] = m.attention.q_lora_rank;
    attention["kv_lora_rank"] = m.attention.kv_lora_rank;
    attention["qk_nope_head_dim"] = m.attention.qk_nope_head_dim;
    attention["qk_rope_head_dim"] = m.attention.qk_rope_head_dim;
    attention["v_head_dim"] = m.attention.v_head_dim;
  }
  nlohmann::ordered_json j;
  j["schema_version"] = m.schema_version;
  j["id"] = m.id;
  j["name"] = m.name;
  j["source"] = m.source;
  if (!m.notes.empty()) j["notes"] = m.notes;
  j["layers"] = m.layers;
  if (m.is_hybrid()) j["layer_pattern"] = m.layer_pattern;
  j["hidden_size"] = m.hidden_size;
  if (m.intermediate_size > 0) j["intermediate_size"] = m.intermediate_size;
  j["vocab_size"] = m.vocab_size;
  j["tie_embeddings"] = m.tie_embeddings;
  j["ffn_activation"] = to_string(m.ffn_activation);
  j["attention"] = attention;
  if (m.is_moe()) {
    nlohmann::ordered_json moe{{"experts", m.moe.experts},
                               {"shared_experts", m.moe.shared_experts},
                               {"top_k", m.moe.top_k},
                               {"expert_intermediate_size", m.moe.expert_intermediate_size}};
    if (m.moe.shared_experts > 0) moe["shared_intermediate_size"] = m.moe.shared_intermediate_size;
    if (m.moe.latent_size > 0) moe["latent_size"] = m.moe.latent_size;
    if (!m.is_hybrid()) {
      moe["first_dense_layers"] = m.moe.first_dense_layers;
      moe["layer_frequency"] = m.moe.layer_frequency;
    }
    j["moe"] = moe;
  }
  if (m.mamba.heads > 0)
    j["mamba"] = {{"heads", m.mamba.heads},         {"head_dim", m.mamba.head_dim},   {"state_size", m.mamba.state_size},
                  {"groups", m.mamba.groups},       {"conv_kernel", m.mamba.conv_kernel}, {"chunk_size", m.mamba.chunk_size}};
  if (m.mtp_layers > 0) {
    j["mtp_layers"] = m.mtp_layers;
    if (!m.mtp_pattern.empty()) j["mtp_pattern"] = m.mtp_pattern;
  }
  if (m.nvfp4_bf16_at_start > 0 || m.nvfp4_bf16_at_end > 0)
    j["nvfp4_bf16_layers"] = {{"at_start", m.nvfp4_bf16_at_start}, {"at_end", m.nvfp4_bf16_at_end}, {"source", m.nvfp4_bf16_source}};
  if (m.published_total_params > 0) {
    nlohmann::ordered_json p;
    p["total_params"] = m.published_total_params;
    if (m.published_active_params > 0) p["active_params"] = m.published_active_params;
    p["source"] = m.published_source;
    j["published"] = p;
  }
  return dump_json(j, 2) + "\n";
}

}  // namespace racksim
