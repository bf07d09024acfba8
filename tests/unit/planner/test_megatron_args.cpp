// The Megatron-LM arguments a planned layout prints: each layout feature maps to the flag Megatron-LM
// (@d98e8a6) names it by, and Megatron's own refusals (layout flags with a hybrid pattern) become notes.
#include <gtest/gtest.h>

#include "models/planner/megatron_args.hpp"
#include "models/workload/gpu_compute.hpp"

namespace racksim {
namespace {

TrainingJob job_of(const std::string& precision, int global_batch = 128, int seq_len = 8192) {
  TrainingJob job;
  job.global_batch = global_batch;
  job.seq_len = seq_len;
  job.precision.id = precision;
  job.precision.gemm_dtype = precision == "bf16" ? "bf16" : precision == "nvfp4" ? "fp4" : "fp8";
  return job;
}

// NVIDIA's Llama 3 70B recipe on H100 (TP 4, PP 8, VP 5, FP8 current scaling): the flags a Megatron-Bridge
// perf config sets for it, in racksim's order.
TEST(MegatronArgs, DenseInterleavedRecipe) {
  ParallelLayout l;
  l.tp = 4, l.pp = 8, l.dp = 2, l.virtual_stages = 5, l.micro_batch = 1;
  const MegatronArgs m = megatron_args(l, job_of("fp8-cs"), "", false, false);
  EXPECT_EQ(m.command_line(),
            "--tensor-model-parallel-size 4 --sequence-parallel --pipeline-model-parallel-size 8 --context-parallel-size 1 "
            "--num-virtual-stages-per-pipeline-rank 5 --micro-batch-size 1 --global-batch-size 128 --seq-length 8192 "
            "--use-distributed-optimizer --bf16 --fp8-format hybrid --fp8-recipe tensorwise");
  EXPECT_TRUE(m.notes.empty());
}

// A layout string wins over the VP count (Megatron takes one of the two) and is quoted for the shell.
TEST(MegatronArgs, LayoutStringIsQuotedAndReplacesTheVirtualStageCount) {
  ParallelLayout l;
  l.pp = 9, l.dp = 32, l.ep = 8, l.virtual_stages = 1;
  l.order = {MeshDim::dp, MeshDim::pp, MeshDim::cp, MeshDim::tp};
  TrainingJob job = job_of("mxfp8", 4096, 4096);
  job.precision.param_bytes = 1;
  job.dispatcher = MoeDispatcher::hybridep;
  job.moe_imbalance = 1;
  job.ep_overlap = true;
  const MegatronArgs m = megatron_args(l, job, "Et*8|(t*7|)*7t*4mL", true, false);
  EXPECT_EQ(m.command_line(),
            "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 9 --context-parallel-size 1 "
            "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 --pipeline-model-parallel-layout 'Et*8|(t*7|)*7t*4mL' "
            "--micro-batch-size 1 --global-batch-size 4096 --seq-length 4096 --use-distributed-optimizer --use-tp-pp-dp-mapping "
            "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather --moe-token-dispatcher-type flex "
            "--moe-flex-dispatcher-backend hybridep --moe-router-force-load-balancing --overlap-moe-expert-parallel-comm");
}

// Megatron FSDP with HSDP shard groups of 8 over 64 DP ranks: 8 distributed-optimizer instances; ZeRO 0 has no
// distributed optimizer; selective recompute lists its modules; offloads name Megatron's flags and modules.
TEST(MegatronArgs, ShardingRecomputeAndOffload) {
  ParallelLayout l;
  l.dp = 64, l.zero_stage = 3, l.shard_group = 8;
  l.recompute.granularity = Recompute::selective;
  l.recompute.modules = kRecLayernorm | kRecMoeAct;
  l.offload_optimizer = true;
  l.offload_activations = true;
  TrainingJob job = job_of("bf16");
  job.grad_bytes = 2;
  const MegatronArgs m = megatron_args(l, job, "", false, false);
  EXPECT_EQ(m.command_line(),
            "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --context-parallel-size 1 --micro-batch-size 1 "
            "--global-batch-size 128 --seq-length 8192 --use-distributed-optimizer --use-megatron-fsdp "
            "--data-parallel-sharding-strategy optim_grads_params --ckpt-format fsdp_dtensor --num-distributed-optimizer-instances 8 "
            "--recompute-granularity selective --recompute-modules layernorm moe_act --optimizer-cpu-offload "
            "--use-precision-aware-optimizer "
            "--fine-grained-activation-offloading --offload-modules core_attn attn_proj --bf16 --grad-reduce-in-bf16");
  // Megatron-LM asserts fsdp_dtensor checkpoints and CUDA_DEVICE_MAX_CONNECTIONS != 1 with Megatron-FSDP
  // (megatron/training/arguments.py @d98e8a6): the flag is in the line, the environment in a note.
  // Likewise --use-precision-aware-optimizer with the optimizer offload, and NVTE_CPU_OFFLOAD_V1=1 with the
  // fine-grained activation offload (a note: an environment variable).
  auto noted = [&](const char* what) {
    bool found = false;
    for (const auto& n : m.notes) found = found || n.find(what) != std::string::npos;
    return found;
  };
  EXPECT_TRUE(noted("CUDA_DEVICE_MAX_CONNECTIONS"));
  EXPECT_TRUE(noted("NVTE_CPU_OFFLOAD_V1=1"));
  EXPECT_TRUE(noted("precision-aware optimizer off with FSDP"));
  // The norm outputs are recomputed (layernorm): offloading them would move nothing. A MoE model offloads its
  // experts' fc1 input and output too, unless module moe recomputes them.
  l.recompute.modules = kRecMoeAct;
  EXPECT_NE(megatron_args(l, job, "", true, false).command_line().find(
                "--offload-modules attn_norm core_attn attn_proj mlp_norm expert_fc1 moe_act --bf16"),
            std::string::npos);
  l.recompute.modules = kRecMoe;
  EXPECT_NE(megatron_args(l, job, "", true, false).command_line().find(
                "--offload-modules attn_norm core_attn attn_proj mlp_norm --bf16"),
            std::string::npos);

  l.zero_stage = 0, l.shard_group = 0, l.offload_optimizer = false, l.offload_activations = false;
  l.recompute = RecomputePlan{};
  l.recompute.granularity = Recompute::full;
  l.recompute.full_layers = 4, l.recompute.block_method = true;
  const MegatronArgs plain = megatron_args(l, job_of("nvfp4"), "", false, false);
  EXPECT_EQ(plain.command_line(),
            "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --context-parallel-size 1 --micro-batch-size 1 "
            "--global-batch-size 128 --seq-length 8192 --recompute-granularity full --recompute-method block "
            "--recompute-num-layers 4 --bf16 --fp4-format e2m1 --fp4-recipe nvfp4");

  l.recompute.full_layers = 0, l.recompute.block_method = false;  // every layer of a chunk
  const std::string every = megatron_args(l, job_of("bf16"), "", false, false).command_line();
  EXPECT_NE(every.find("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1"), std::string::npos);
}

// Every precision recipe racksim ships has its Megatron flags; one it does not know is a note, not a silent
// BF16 line.
TEST(MegatronArgs, EveryShippedRecipeHasItsFlags) {
  const ComputeTable table = ComputeTable::shipped();
  for (const auto& id : table.precision_ids()) {
    const MegatronArgs m = megatron_args(ParallelLayout{}, job_of(id), "", false, false);
    EXPECT_TRUE(m.notes.empty()) << id;
    EXPECT_EQ(m.command_line().find("--fp") != std::string::npos, id != "bf16") << id;
  }
  const MegatronArgs unknown = megatron_args(ParallelLayout{}, job_of("fp6-new"), "", false, false);
  ASSERT_EQ(unknown.notes.size(), 1u);
  EXPECT_NE(unknown.notes[0].find("'fp6-new'"), std::string::npos);
}

// A hybrid (Mamba) stack's pipeline split goes into its pattern: Megatron refuses the layout flags with
// --hybrid-layer-pattern, so the arguments leave them out and say so.
TEST(MegatronArgs, HybridStackSplitIsANote) {
  ParallelLayout l;
  l.pp = 4, l.dp = 2, l.virtual_stages = 2;
  const MegatronArgs m = megatron_args(l, job_of("bf16"), "E(M*|)*7ML", false, true);
  EXPECT_EQ(m.command_line().find("layout"), std::string::npos);
  EXPECT_EQ(m.command_line().find("virtual"), std::string::npos);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("--hybrid-layer-pattern"), std::string::npos);
  EXPECT_NE(m.notes[0].find("E(M*|)*7ML"), std::string::npos);
}

}  // namespace
}  // namespace racksim
