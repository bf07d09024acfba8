// Memory accounting against hand-computed numbers for a tiny model, and the compute table.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "tiny_model.hpp"
#include "models/workload/compute_model.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/memory_fit.hpp"
#include "models/workload/model_catalog.hpp"
#include "models/workload/model_costs.hpp"
#include "models/workload/model_spec.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

TEST(MemoryFit, TinyModelByHand) {
  const ModelSpec m = model_from_json_text(kTiny, "tiny");
  TrainingMemoryConfig cfg;
  cfg.dp = 2;
  cfg.seq_len = 16;
  cfg.zero_stage = 1;
  const StageSlice all{0, 2, true, true, true};
  const MemoryBreakdown b = training_memory_per_gpu(m, all, cfg);
  // 1352 parameters (test_model_costs): bf16 weights 2 B, fp32 grads 4 B, Adam 12 B sharded over DP = 2
  EXPECT_DOUBLE_EQ(b.weights, 2704);
  EXPECT_DOUBLE_EQ(b.grads, 5408);
  EXPECT_DOUBLE_EQ(b.optimizer, 8112);
  // saved per token per layer (elements): attention block: its input 8, norm 8, q k v 16, attention output
  // 8, softmax statistics 2 heads x 4 B; MLP block: input 8, norm 8, gate+up 32, product 16; at 2 B:
  // (8 + 8 + 16 + 8) x 2 + 8 + (8 + 8 + 32 + 16) x 2 = 216 B; x 16 tokens x 2 layers = 6912 B
  EXPECT_DOUBLE_EQ(b.activations, 6912);
  // the head's norm output (16 x 8 x 2 B) and fp32 logits (16 tokens x 10 x 4 B)
  EXPECT_DOUBLE_EQ(b.logits, 256 + 640);
  EXPECT_DOUBLE_EQ(b.total(), 2704 + 5408 + 8112 + 6912 + 896);

  cfg.recompute = parse_recompute("selective", "test");  // drops both norms' outputs and the MLP's inner tensors
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).activations, 2 * 16 * (216 - 2 * 16 - 96));
  cfg.recompute = parse_recompute("full", "test");       // keeps each layer's input, plus one layer's full set
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).activations, 2 * 16 * 8 * 2 + 3456);
  cfg.recompute = parse_recompute("full:block:1", "test");  // only the first layer recomputed
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).activations, 16 * 8 * 2 + 3456 + 3456);

  cfg.recompute = RecomputePlan{};
  cfg.zero_stage = 3;                    // everything sharded over DP = 2
  const MemoryBreakdown z3 = training_memory_per_gpu(m, all, cfg);
  EXPECT_DOUBLE_EQ(z3.weights, 1352);
  EXPECT_DOUBLE_EQ(z3.grads, 2704);
  // and runs each FSDP unit (here a decoder layer, larger than the 80-parameter embedding) on whole
  // parameters and gradients: two units of each alive at the peak (one computing, one prefetched or reducing)
  const double unit = layer_params(m, m.layer_type(0)).total();
  EXPECT_GT(unit, 80);
  EXPECT_DOUBLE_EQ(z3.gathered, 2 * unit * (2 + 4));
  EXPECT_DOUBLE_EQ(z3.total(), z3.weights + z3.grads + z3.optimizer + z3.activations + z3.logits + z3.gathered);
  EXPECT_DOUBLE_EQ(b.gathered, 0);  // ZeRO-1 keeps whole weights: nothing to gather
  cfg.zero_stage = 0;
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).optimizer, 16224);

  cfg.zero_stage = 1;
  cfg.offload_optimizer = true;          // Megatron's HybridDeviceOptimizer: the fp32 main parameters stay in HBM,
  const MemoryBreakdown opt = training_memory_per_gpu(m, all, cfg);  // the host keeps their copy and Adam's moments
  EXPECT_DOUBLE_EQ(opt.optimizer, 4 * 676);
  EXPECT_DOUBLE_EQ(opt.host_offloaded, 12 * 676);
  cfg.offload_optimizer = false;
  cfg.micro_batches_in_flight = 3;       // 1F1B stage 0 with PP = 3
  EXPECT_DOUBLE_EQ(training_memory_per_gpu(m, all, cfg).activations, 3 * 6912);
  cfg.offload_activations = true;        // two of the three move their offload modules' tensors to host memory:
  // per token and layer the norm outputs 8 + 8, q k v 16 and the attention output 8 (x 2 B) and the softmax
  // statistics 8 B = 88 of the 216 B (the block inputs and the MLP's inner tensors stay); x 16 tokens x 2 layers
  const MemoryBreakdown off = training_memory_per_gpu(m, all, cfg);
  EXPECT_DOUBLE_EQ(off.host_offloaded, 2 * 88 * 16 * 2);
  EXPECT_DOUBLE_EQ(off.activations, 3 * 6912 - 2 * 88 * 16 * 2);
  // FP8 recipes: weights keep their low-precision copies, saved GEMM inputs are 1 B
  cfg.offload_activations = false;
  cfg.micro_batches_in_flight = 1;
  cfg.weight_copy_bytes = 2;
  cfg.saved_input_bytes = 1;
  const MemoryBreakdown fp8 = training_memory_per_gpu(m, all, cfg);
  EXPECT_DOUBLE_EQ(fp8.weights, 4 * 1352);
  // GEMM inputs per token per layer: attention norm 8, attention output 8, MLP norm 8, product 16
  EXPECT_DOUBLE_EQ(fp8.activations, 6912 - 2 * 16 * (8 + 8 + 8 + 16));
}

TEST(MemoryFit, TinyModelTensorParallelByHand) {
  const ModelSpec m = model_from_json_text(kTiny, "tiny");
  TrainingMemoryConfig cfg;
  cfg.shape.tp = 2;
  cfg.seq_len = 16;
  const MemoryBreakdown b = training_memory_per_gpu(m, StageSlice{0, 2, true, true, true}, cfg);
  // per layer: attention norm 8 + 192/2 = 104, FFN norm 8 + 384/2 = 200; embedding 40; head 40 + norm 8
  EXPECT_DOUBLE_EQ(b.dense_params, 2 * 304 + 40 + 48);
  // per token: inputs and norms split over TP (4 x 8 / 2 = 16); q 4, k 4 and v 4 (one KV head,
  // replicated), attention output 4, gate+up 16 and product 8: 56 elements x 2 B, plus one head's softmax
  // statistics (4 B): 116 B x 16 tokens x 2 layers
  EXPECT_DOUBLE_EQ(b.activations, 116 * 16 * 2);
  EXPECT_DOUBLE_EQ(b.logits, 16 * 4 * 2 + 16 * 5 * 4);
}

TEST(MemoryFit, ExpertsFoldIntoTheDataParallelRanks) {
  // A 4-layer MoE: routed experts split over EP x ETP, their optimizer states over EDP = TP x CP x DP / (EP x ETP)
  const ModelSpec m = model_from_json_text(R"({"schema_version": 1, "id": "m", "name": "m", "source": "test",
    "layers": 4, "hidden_size": 64, "vocab_size": 100, "attention": {"kind": "gqa", "heads": 4, "kv_heads": 4, "head_dim": 16},
    "moe": {"experts": 16, "top_k": 2, "expert_intermediate_size": 32}})", "m");
  TrainingMemoryConfig cfg;
  cfg.seq_len = 64;
  cfg.dp = 8;
  cfg.shape.ep = 4;
  EXPECT_EQ(cfg.edp(), 2);
  const StageSlice all{0, 4, true, true, true};
  const MemoryBreakdown b = training_memory_per_gpu(m, all, cfg);
  const double experts = 4 * 16 * 3.0 * 64 * 32;  // layers x experts x 3 h f
  EXPECT_DOUBLE_EQ(b.expert_params, experts / 4);
  EXPECT_DOUBLE_EQ(b.optimizer, 12 * (b.dense_params / 8 + b.expert_params / 2));
}

TEST(MemoryFit, FsdpWithoutExpertParallelismGathersEveryExpert) {
  // DeepSeek-V3 under FSDP: with EP = 1 a MoE layer's unit holds all 256 experts (11.3 B parameters of
  // 3 x 7168 x 2048, plus attention and the shared expert), so two layers' bf16 parameters and gradients
  // alone take 93 GB, half of a B200's 186; with EP = 64 each GPU gathers its 4 experts per layer and the
  // largest unit is the 129280 x 7168 embedding.
  const ModelSpec m = ModelCatalog::shipped().load("deepseek-v3");
  TrainingMemoryConfig cfg;
  cfg.seq_len = 4096;
  cfg.dp = 256;
  cfg.zero_stage = 3;
  cfg.grad_bytes = 2;
  const StageSlice all{0, m.layers, true, true, true};
  const double experts = 256 * 3.0 * 7168 * 2048;
  const MemoryBreakdown one = training_memory_per_gpu(m, all, cfg);
  EXPECT_GT(one.gathered, 2 * experts * (2 + 2));
  EXPECT_LT(one.gathered, 2 * 1.05 * experts * (2 + 2));
  EXPECT_GT(one.gathered, 90e9);
  cfg.shape.ep = 64;
  const MemoryBreakdown wide = training_memory_per_gpu(m, all, cfg);
  EXPECT_DOUBLE_EQ(wide.gathered, 2 * 129280.0 * 7168 * (2 + 2));
}

TEST(MemoryFit, MambaMixerKeepsWhatTheFusedKernelSaves) {
  // One Mamba-2 layer: d_inner = 2 heads x 4 = 8, groups x state = 1 x 2, so in_proj makes
  // zxbcdt = 2 x 8 + 2 x 2 + 2 heads = 22 features per token. Megatron's mixer runs mamba_ssm's fused
  // mamba_split_conv1d_scan_combined, which saves zxbcdt and the scan output and recomputes the conv1d.
  const ModelSpec m = model_from_json_text(
      R"({"schema_version": 1, "id": "tiny-mamba", "name": "tiny-mamba", "source": "test", "layers": 1,
          "layer_pattern": "M", "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10,
          "attention": {"kind": "gqa", "heads": 2, "kv_heads": 1, "head_dim": 4},
          "mamba": {"heads": 2, "head_dim": 4, "state_size": 2, "groups": 1, "conv_kernel": 4, "chunk_size": 128}})",
      "tiny-mamba");
  TrainingMemoryConfig cfg;
  cfg.seq_len = 16;
  const MemoryBreakdown b = training_memory_per_gpu(m, StageSlice{0, 1, true, true, true}, cfg);
  // per token, 2 B each: block input 8, norm output 8, zxbcdt 22, scan output 8 and the norm's input 8,
  // out_proj's input 8 = 62 elements (no conv1d output: 8 + 2 x 2 more before session 50); x 16 tokens
  EXPECT_DOUBLE_EQ(b.activations, 62 * 2 * 16);
}

TEST(MemoryFit, InferenceKvCache) {
  const ModelSpec m = ModelCatalog::shipped().load("llama-3.1-8b");
  // one 8192-token sequence: 8192 x 128 KiB = 1 GiB
  const InferenceMemory r = inference_memory_per_gpu(m, 1, 8192, ParallelShape{}, 1);
  EXPECT_DOUBLE_EQ(r.kv_cache, 1024.0 * 1024 * 1024);
  // TP = 8 splits the 8 KV heads
  EXPECT_DOUBLE_EQ(inference_memory_per_gpu(m, 1, 8192, ParallelShape{8, 1, 1, 1}, 1).kv_cache, 128.0 * 1024 * 1024);
}

TEST(GpuCompute, H200MatchesProbe) {
  const ComputeTable t = ComputeTable::shipped();
  const GpuCompute& h200 = t.lookup("h200-pcie", "h200");
  const ComputeModel cm(h200, t.params(h200.generation), 4.8e12, 132);
  // calibrate/data/h200-pcie-1gpu-2026-11-29/gemm_bf16.jsonl: the fit's probe points, within 7 %
  for (const auto& [n, measured] : std::vector<std::pair<double, double>>{{2048, 474.27}, {4096, 731.37}, {8192, 770.96}}) {
    Work w;
    cm.add_gemm(w, GemmShape{n, n, n, 1, false}, "bf16", 1);
    EXPECT_NEAR(2 * n * n * n / cm.time_s(w) / 1e12, measured, measured * 0.07) << n;
  }
  // tile quantisation: m = 300 runs as 384 rows (3 tiles of 128)
  Work ragged, padded;
  cm.add_gemm(ragged, GemmShape{300, 4096, 4096, 1, false}, "bf16", 1);
  cm.add_gemm(padded, GemmShape{384, 4096, 4096, 1, false}, "bf16", 1);
  EXPECT_DOUBLE_EQ(cm.time_s(ragged), cm.time_s(padded));
  // a skinny product is memory-bound: it moves to the HBM feature
  Work skinny;
  cm.add_gemm(skinny, GemmShape{16, 8192, 8192, 1, false}, "bf16", 1);
  EXPECT_EQ(skinny.x[kGemmBf16], 0);
  EXPECT_NEAR(skinny.x[kHbm], 2 * (8192.0 * 8192 + 2 * 8192 * 16) / 4.8e12, 1e-15);
  // peaks per GPU, and the generation whose fit applies
  EXPECT_EQ(t.lookup("hgx-b200", "b200-sxm").peak_dense_TFLOPs.at("bf16"), 2250);
  EXPECT_EQ(t.lookup("gb200-nvl72", "b200").peak_dense_TFLOPs.at("fp4"), 10000);
  EXPECT_EQ(t.lookup("gb300-nvl72", "b300").generation, "blackwell-ultra");
  EXPECT_EQ(t.params_origin("blackwell-ultra"), "blackwell (no rows of its own)");
  EXPECT_THROW(h200.peak_Fps("fp4"), InputError);
  EXPECT_THROW(t.precision("fp6"), InputError);
}

}  // namespace
}  // namespace racksim
