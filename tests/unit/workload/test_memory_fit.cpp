// Memory accounting against hand-computed numbers for a tiny model, and the compute table.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "models/workload/gpu_compute.hpp"
#include "models/workload/memory_fit.hpp"
#include "models/workload/model_catalog.hpp"
#include "models/workload/model_spec.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

const char* kTiny = R"({"schema_version": 1, "id": "tiny", "name": "tiny", "source": "test",
  "layers": 2, "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10,
  "attention": {"kind": "gqa", "heads": 2, "kv_heads": 1, "head_dim": 4}})";

TEST(MemoryFit, TinyModelByHand) {
  const ModelSpec m = model_from_json_text(kTiny, "tiny");
  TrainingMemoryConfig cfg;
  cfg.dp = 2;
  cfg.seq_len = 16;
  cfg.zero_stage = 1;
  const StageSlice all{0, 2, true, true};
  const MemoryBreakdown b = training_memory_per_gpu(m, all, cfg);
  // 1352 parameters (test_model_costs): bf16 weights 2 B, fp32 grads 4 B, Adam 12 B sharded over DP = 2
  EXPECT_DOUBLE_EQ(b.weights, 2704);
  EXPECT_DOUBLE_EQ(b.grads, 5408);
  EXPECT_DOUBLE_EQ(b.optimizer, 8112);
  // activations per token per layer: x, norm(x), x2, norm(x2) = 4 x 8; q 8, k 4, v 4, out 8; gate, up,
  // product 3 x 16: 104 elements = 208 B; x 16 tokens x 2 layers = 6656 B
  EXPECT_DOUBLE_EQ(b.activations, 6656);
  // fp32 logits: 16 tokens x 10 x 4 B
  EXPECT_DOUBLE_EQ(b.logits, 640);
  EXPECT_DOUBLE_EQ(b.total(), 23520);

  cfg.recompute = Recompute::selective;  // drops norm(x), norm(x2), the SwiGLU product: 72 elements
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).activations, 2 * 16 * 72 * 2);
  cfg.recompute = Recompute::full;       // keeps x (8) per layer, plus one layer's full set while recomputing
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).activations, 2 * 16 * 8 * 2 + 3328);

  cfg.recompute = Recompute::none;
  cfg.zero_stage = 3;                    // everything sharded over DP = 2
  const MemoryBreakdown z3 = training_memory_per_gpu(m, all, cfg);
  EXPECT_DOUBLE_EQ(z3.weights, 1352);
  EXPECT_DOUBLE_EQ(z3.grads, 2704);
  cfg.zero_stage = 0;
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).optimizer, 16224);

  cfg.zero_stage = 1;
  cfg.micro_batches_in_flight = 3;       // 1F1B stage 0 with PP = 3
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).activations, 3 * 6656);
  cfg.offload_activations = true;        // two of the three go to host memory
  const MemoryBreakdown off = training_memory_per_gpu(m, all, cfg);
  EXPECT_DOUBLE_EQ(off.activations, 6656);
  EXPECT_DOUBLE_EQ(off.host_offloaded, 2 * 6656);
}

TEST(MemoryFit, TinyModelTensorParallelByHand) {
  const ModelSpec m = model_from_json_text(kTiny, "tiny");
  TrainingMemoryConfig cfg;
  cfg.shape.tp = 2;
  cfg.seq_len = 16;
  const MemoryBreakdown b = training_memory_per_gpu(m, StageSlice{0, 2, true, true}, cfg);
  // per layer: attention norm 8 + 192/2 = 104, FFN norm 8 + 384/2 = 200; embedding 40; head 40 + norm 8
  EXPECT_DOUBLE_EQ(b.dense_params, 2 * 304 + 40 + 48);
  // activations per token: 32 split over TP -> 16; q 4, k 4 and v 4 (one KV head, replicated), out 4,
  // FFN 3 x 8: 56 elements x 2 B x 16 tokens x 2 layers
  EXPECT_DOUBLE_EQ(b.activations, 56 * 2 * 16 * 2);
  EXPECT_DOUBLE_EQ(b.logits, 16 * 5 * 4);
}

TEST(MemoryFit, InferenceKvCache) {
  const ModelSpec m = ModelCatalog::shipped().load("llama-3.1-8b");
  // one 8192-token sequence: 8192 x 128 KiB = 1 GiB
  const InferenceMemory r = inference_memory_per_gpu(m, 1, 8192, ParallelShape{}, 1);
  EXPECT_DOUBLE_EQ(r.kv_cache, 1024.0 * 1024 * 1024);
  // TP = 8 splits the 8 KV heads
  EXPECT_DOUBLE_EQ(inference_memory_per_gpu(m, 1, 8192, ParallelShape{8, 1, 1}, 1).kv_cache, 128.0 * 1024 * 1024);
}

TEST(GpuCompute, H200MatchesProbe) {
  const ComputeTable t = ComputeTable::shipped();
  const GpuCompute& h200 = t.lookup("h200-pcie", "h200");
  // calibrate/data/h200-pcie-1gpu-2026-11-29/gemm_bf16.jsonl (cuBLAS bf16, TN, median of 20): the table
  // reproduces the measured square products within 5 % from 2048 up (1024 is launch-bound).
  const double hbm = 4.8e12;
  for (const auto& [n, measured] : std::vector<std::pair<double, double>>{{2048, 474.27}, {4096, 731.37}, {8192, 770.96}}) {
    const Gemm g{"square", n, n, n, 1};
    EXPECT_NEAR(g.flops() / h200.gemm_time_s(g, "bf16", hbm) / 1e12, measured, measured * 0.05) << n;
  }
  // a skinny product is HBM-bound: 8192 x 8192 by 8192 x 16 moves ~2 x 67 MB for 2.1 GFLOP
  const Gemm skinny{"skinny", 8192, 16, 8192, 1};
  EXPECT_NEAR(h200.gemm_time_s(skinny, "bf16", hbm), 2 * (8192.0 * 8192 + 2 * 8192 * 16) / (hbm * 0.9) + 12.8e-6, 1e-9);
  // tile quantisation: m = 300 runs as 384 rows (3 tiles of 128)
  const Gemm ragged{"ragged", 300, 8192, 8192, 1}, padded{"padded", 384, 8192, 8192, 1};
  EXPECT_DOUBLE_EQ(h200.gemm_time_s(ragged, "bf16"), h200.gemm_time_s(padded, "bf16"));
  // the HGX B200 (1000 W) has its own GPU type; GB200's B200 (1200 W) another
  EXPECT_EQ(t.lookup("hgx-b200", "b200-sxm").dtype("bf16").peak_dense_TFLOPs, 2250);
  EXPECT_EQ(t.lookup("gb200-nvl72", "b200").dtype("bf16").peak_dense_TFLOPs, 2500);
  EXPECT_THROW(t.lookup("x", "rtx9090"), InputError);
}

}  // namespace
}  // namespace racksim
