#include "models/workload/model_spec.hpp"

#include "sim/core/json_reader.hpp"

namespace racksim {

const char* to_string(AttentionKind kind) { return kind == AttentionKind::mla ? "mla" : "gqa"; }

bool ModelSpec::is_moe_layer(int layer) const {
  if (!is_moe() || layer < moe.first_dense_layers) return false;
  return (layer - moe.first_dense_layers) % moe.layer_frequency == 0;
}

int ModelSpec::moe_layer_count() const {
  int n = 0;
  for (int l = 0; l < layers; ++l) n += is_moe_layer(l) ? 1 : 0;
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

MoeSpec read_moe(JsonObjectReader r, int layers) {
  MoeSpec m;
  m.experts = static_cast<int>(r.integer_in("experts", 1, 65536));
  m.top_k = static_cast<int>(r.integer_in("top_k", 1, m.experts));
  m.shared_experts = static_cast<int>(r.integer_in_or("shared_experts", 0, 1024, 0));
  m.expert_intermediate_size = static_cast<int>(r.integer_in("expert_intermediate_size", 1, kMaxDim));
  m.first_dense_layers = static_cast<int>(r.integer_in_or("first_dense_layers", 0, layers - 1, 0));
  m.layer_frequency = static_cast<int>(r.integer_in_or("layer_frequency", 1, layers, 1));
  r.finish();
  return m;
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
  m.attention = read_attention(r.object("attention"));
  if (r.has("moe")) m.moe = read_moe(r.object("moe"), m.layers);
  m.intermediate_size = static_cast<int>(r.integer_in_or("intermediate_size", 0, kMaxDim, 0));
  if (m.intermediate_size == 0 && m.dense_layer_count() > 0)
    r.fail("intermediate_size", "0 (missing)",
           "a dense FFN width > 0: " + std::to_string(m.dense_layer_count()) + " layer(s) have a dense FFN");
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
  j["hidden_size"] = m.hidden_size;
  if (m.intermediate_size > 0) j["intermediate_size"] = m.intermediate_size;
  j["vocab_size"] = m.vocab_size;
  j["tie_embeddings"] = m.tie_embeddings;
  j["attention"] = attention;
  if (m.is_moe()) {
    j["moe"] = {{"experts", m.moe.experts},
                {"shared_experts", m.moe.shared_experts},
                {"top_k", m.moe.top_k},
                {"expert_intermediate_size", m.moe.expert_intermediate_size},
                {"first_dense_layers", m.moe.first_dense_layers},
                {"layer_frequency", m.moe.layer_frequency}};
  }
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
