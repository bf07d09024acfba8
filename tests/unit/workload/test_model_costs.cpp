// Model presets, parameter counts, FLOPs and KV cache against published numbers and hand computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tiny_model.hpp"
#include "models/workload/model_catalog.hpp"
#include "models/workload/model_costs.hpp"
#include "models/workload/model_spec.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

// A tiny dense model whose costs are worked out by hand below.
TEST(ModelCosts, TinyParamsByHand) {
  const ModelSpec m = model_from_json_text(kTiny, "tiny");
  const ParamCounts c = count_params(m);
  // attention: norm 8 + q 8x8 + k,v 2 x 8x4 + o 8x8 = 200; FFN: 3 x 8 x 16 + norm 8 = 392
  EXPECT_DOUBLE_EQ(c.attention_per_layer, 200);
  EXPECT_DOUBLE_EQ(c.dense_ffn_per_layer, 392);
  // 2 x 592 + embedding 80 + head 80 + final norm 8
  EXPECT_DOUBLE_EQ(c.total, 1352);
  EXPECT_DOUBLE_EQ(c.active, 1352);
  // matmul: 2 x (2 x 192 + 2 x 384 + head 80) = 2464; attention: 2 layers x 2 heads x 16 x (4 + 4) = 512
  const TokenFlops f = forward_flops_per_token(m, 16);
  EXPECT_DOUBLE_EQ(f.matmul_forward, 2464);
  EXPECT_DOUBLE_EQ(f.attention_forward, 512);
  EXPECT_DOUBLE_EQ(f.training(), 3 * (2464 + 512));
}

// Published totals (model cards / papers named in each preset) within 2 %: what the counts leave out is
// rounding in the published figure. Active counts within 3 %, with or without the embedding table (the
// cards differ: Qwen3's and DeepSeek's count it, gpt-oss's does not).
TEST(ModelCosts, PresetsMatchPublishedTotals) {
  const ModelCatalog catalog = ModelCatalog::shipped();
  const auto ids = catalog.ids();
  for (const char* want : {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mixtral-8x22b", "deepseek-v3", "qwen3-235b-a22b"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), want), ids.end()) << want;
  for (const auto& id : ids) {
    const ModelSpec m = catalog.load(id);
    ASSERT_GT(m.published_total_params, 0) << id;
    const ParamCounts c = count_params(m);
    EXPECT_NEAR(c.total / m.published_total_params, 1.0, 0.02) << id << " total " << c.total;
    if (m.published_active_params > 0) {
      const double with = c.active / m.published_active_params - 1, without = (c.active - c.embedding) / m.published_active_params - 1;
      EXPECT_LT(std::min(std::fabs(with), std::fabs(without)), 0.03) << id << " active " << c.active;
    }
  }
}

TEST(ModelCosts, DeepSeekV3Structure) {
  const ModelSpec m = ModelCatalog::shipped().load("deepseek-v3");
  EXPECT_EQ(m.moe_layer_count(), 58);  // 61 layers, first 3 dense
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_TRUE(m.is_moe_layer(3));
  const ParamCounts c = count_params(m);
  // one routed expert: 3 x 7168 x 2048
  EXPECT_DOUBLE_EQ(c.expert, 3.0 * 7168 * 2048);
  EXPECT_NEAR(c.total / 1e9, 671.0, 1.0);
}

TEST(ModelCosts, KvCachePerToken) {
  const ModelCatalog catalog = ModelCatalog::shipped();
  // Llama 3.1 8B: 2 (K, V) x 8 heads x 128 x 32 layers = 65536 elements = 128 KiB in bf16
  EXPECT_DOUBLE_EQ(kv_cache_elements_per_token(catalog.load("llama-3.1-8b")), 65536);
  // DeepSeek-V3 MLA: (512 + 64) x 61 layers = 35136 elements (~70 KB in bf16)
  EXPECT_DOUBLE_EQ(kv_cache_elements_per_token(catalog.load("deepseek-v3")), 35136);
}

TEST(ModelSpecJson, RoundTripAndStrictness) {
  const ModelSpec a = ModelCatalog::shipped().load("deepseek-v3");
  const ModelSpec b = model_from_json_text(model_to_json_text(a), "roundtrip");
  EXPECT_EQ(model_to_json_text(a), model_to_json_text(b));
  EXPECT_EQ(b.attention.kv_lora_rank, 512);
  EXPECT_EQ(b.moe.first_dense_layers, 3);

  std::string bad = kTiny;
  bad.insert(bad.find("\"layers\""), "\"layerz\": 3, ");
  try {
    model_from_json_text(bad, "user.json");
    FAIL() << "unknown key accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.json_path(), "/layerz");
    EXPECT_NE(std::string(e.what()).find("user.json"), std::string::npos);
  }
  std::string bad_kv = kTiny;
  bad_kv.replace(bad_kv.find("\"kv_heads\": 1"), 13, "\"kv_heads\": 3");
  EXPECT_THROW(model_from_json_text(bad_kv, "user.json"), InputError);  // 3 > heads
}

TEST(ModelCatalog, UnknownModelListsPresets) {
  try {
    ModelCatalog::shipped().load("gpt-5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--model");
    EXPECT_NE(e.allowed().find("deepseek-v3"), std::string::npos);
    EXPECT_NE(e.allowed().find("llama-3.1-405b"), std::string::npos);
  }
}

}  // namespace
}  // namespace racksim
