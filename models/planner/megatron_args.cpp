#include "models/planner/megatron_args.hpp"

#include <algorithm>
#include <cctype>

#include "models/workload/layer_work.hpp"

namespace racksim {

namespace {

// Megatron's precision flags beyond --bf16 for racksim's recipe ids (gpu_compute.json), as Megatron-Bridge's
// mixed_precision.py sets them.
struct PrecisionFlags {
  const char* id;
  std::vector<std::string> flags;
};
const std::vector<PrecisionFlags> kPrecisionFlags{
    {"bf16", {}},
    {"fp8-ds", {"--fp8-format", "hybrid", "--fp8-recipe", "delayed"}},
    {"fp8-cs", {"--fp8-format", "hybrid", "--fp8-recipe", "tensorwise"}},
    {"fp8-block", {"--fp8-format", "hybrid", "--fp8-recipe", "blockwise"}},
    {"mxfp8", {"--fp8-format", "e4m3", "--fp8-recipe", "mxfp8"}},
    {"nvfp4", {"--fp4-format", "e2m1", "--fp4-recipe", "nvfp4"}},
};

// FP8 primary weights (one byte a parameter): the DP all-gather moves FP8 (gpu_compute.hpp's param_bytes).
bool fp8_param_gather(const PrecisionRecipe& p) { return p.param_bytes == 1 && p.gemm_dtype == "fp8"; }

// The flags of `p`, or a note where the table has none (a recipe added to gpu_compute.json without its flags).
void add_precision(MegatronArgs& m, const PrecisionRecipe& p) {
  m.argv.push_back("--bf16");
  const auto it = std::find_if(kPrecisionFlags.begin(), kPrecisionFlags.end(), [&](const auto& r) { return p.id == r.id; });
  if (it == kPrecisionFlags.end())
    m.notes.push_back("precision recipe '" + p.id + "': no Megatron flags known to racksim; add its --fp8-* / --fp4-* flags by hand");
  else
    m.argv.insert(m.argv.end(), it->flags.begin(), it->flags.end());
  if (fp8_param_gather(p)) m.argv.push_back("--fp8-param-gather");
}

std::string shell_quote(const std::string& s) {
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/' || c == '=' || c == ','))
      return "'" + s + "'";  // no argument here holds a quote itself
  return s;
}

}  // namespace

std::string MegatronArgs::command_line() const {
  std::string o;
  for (const auto& a : argv) o += (o.empty() ? "" : " ") + shell_quote(a);
  return o;
}

MegatronArgs megatron_args(const ParallelLayout& l, const TrainingJob& job, const std::string& pp_layout, bool moe,
                           bool hybrid) {
  MegatronArgs m;
  auto add = [&](std::initializer_list<std::string> items) { m.argv.insert(m.argv.end(), items); };
  add({"--tensor-model-parallel-size", std::to_string(l.tp)});
  // racksim prices TP with sequence parallelism (step_costs.cpp), as every NVIDIA recipe with TP > 1 runs it.
  if (l.tp > 1) add({"--sequence-parallel"});
  add({"--pipeline-model-parallel-size", std::to_string(l.pp), "--context-parallel-size", std::to_string(l.cp)});
  if (moe) add({"--expert-model-parallel-size", std::to_string(l.ep), "--expert-tensor-parallel-size", std::to_string(l.etp)});
  if (l.pp > 1 || l.virtual_stages > 1) {
    if (hybrid) {
      // Megatron refuses the layout flags with a hybrid pattern: the split goes into the pattern.
      m.notes.push_back("hybrid stack: Megatron takes its pipeline split from '|' between chunks in --hybrid-layer-pattern "
                        "(--hybrid-override-pattern before the rename) and refuses the layout flags with a pattern" +
                        (pp_layout.empty() ? std::string() : "; racksim's split, one 't' per layer of the pattern: " + pp_layout));
    } else if (!pp_layout.empty()) {
      add({"--pipeline-model-parallel-layout", pp_layout});
    } else if (l.virtual_stages > 1) {
      add({"--num-virtual-stages-per-pipeline-rank", std::to_string(l.virtual_stages)});
    }
  }
  add({"--micro-batch-size", std::to_string(l.micro_batch), "--global-batch-size", std::to_string(job.global_batch),
       "--seq-length", std::to_string(job.seq_len)});
  if (l.zero_stage >= 1) add({"--use-distributed-optimizer"});
  if (l.zero_stage >= 2) {
    // Megatron FSDP (version 1, the default, runs with the distributed optimizer); ZeRO-2 shards optimizer and
    // gradients, ZeRO-3 the parameters too.
    add({"--use-megatron-fsdp", "--data-parallel-sharding-strategy", l.zero_stage == 2 ? "optim_grads" : "optim_grads_params"});
    // megatron/training/arguments.py @d98e8a6 (validate_args, under use_megatron_fsdp): asserts
    // ckpt_format == "fsdp_dtensor" (its default is torch_dist) and CUDA_DEVICE_MAX_CONNECTIONS != 1.
    add({"--ckpt-format", "fsdp_dtensor"});
    m.notes.push_back("Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS unset; Megatron asserts it is not 1 with "
                      "--use-megatron-fsdp");
    // HSDP: shard inside groups of shard_group DP x CP ranks, replicate across the groups.
    if (l.shard_group > 0 && l.shard_group < l.dp * l.cp)
      add({"--num-distributed-optimizer-instances", std::to_string(l.dp * l.cp / l.shard_group)});
  }
  if (!l.pp_outermost()) add({"--use-tp-pp-dp-mapping"});
  switch (l.recompute.granularity) {
    case Recompute::none: break;
    case Recompute::selective: {
      add({"--recompute-granularity", "selective", "--recompute-modules"});
      // racksim's module names are Megatron's (transformer_config.py's check of recompute_modules)
      for (const auto& name : recompute_module_list(l.recompute.modules)) m.argv.push_back(name);
      break;
    }
    case Recompute::full:
      // Every layer of a chunk (full_layers 0): uniform, one layer per checkpoint.
      add({"--recompute-granularity", "full", "--recompute-method", l.recompute.block_method ? "block" : "uniform",
           "--recompute-num-layers", std::to_string(l.recompute.full_layers == 0 ? 1 : l.recompute.full_layers)});
      break;
  }
  // megatron/training/arguments.py @d98e8a6 asserts --use-precision-aware-optimizer with the offload (its hybrid
  // device optimizer reuses that path), and --fp8-recipe delayed where --fp8-param-gather is on too.
  if (l.offload_optimizer) {
    add({"--optimizer-cpu-offload", "--use-precision-aware-optimizer"});
    if (l.zero_stage >= 2)
      m.notes.push_back("the optimizer offload with Megatron-FSDP: Megatron-Bridge's performance scripts turn the "
                        "precision-aware optimizer off with FSDP ('cannot work with FSDP together', "
                        "scripts/performance/utils/overrides.py @v0.4.0), which the offload requires; check that "
                        "your Megatron runs both");
    if (fp8_param_gather(job.precision) && job.precision.id != "fp8-ds")
      m.notes.push_back("Megatron refuses --optimizer-cpu-offload with --fp8-param-gather unless --fp8-recipe is delayed: "
                        "drop one of them; racksim priced both");
  }
  if (l.offload_activations) {
    // The modules racksim moves (layer_work.cpp's offloadable tensors), less those whose tensors the selective
    // recompute drops anyway (norm outputs: layernorm; the experts' fc1 input and output: moe); the expert ones
    // exist in MoE layers only.
    const unsigned recomputed = l.recompute.granularity == Recompute::selective ? l.recompute.modules : 0u;
    add({"--fine-grained-activation-offloading", "--offload-modules"});
    m.notes.push_back("fine-grained activation offloading: with Transformer Engine >= 2.10 set NVTE_CPU_OFFLOAD_V1=1, "
                      "which Megatron asserts");
    const bool norms = !(recomputed & kRecLayernorm), experts = moe && !(recomputed & kRecMoe);
    if (norms) add({"attn_norm"});
    add({"core_attn", "attn_proj"});
    if (norms) add({"mlp_norm"});
    if (experts) add({"expert_fc1", "moe_act"});
  }
  add_precision(m, job.precision);
  if (job.grad_bytes == 2) add({"--grad-reduce-in-bf16"});
  if (moe) {
    switch (job.dispatcher) {
      case MoeDispatcher::alltoall: add({"--moe-token-dispatcher-type", "alltoall"}); break;
      case MoeDispatcher::deepep: add({"--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "deepep"}); break;
      case MoeDispatcher::hybridep: add({"--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "hybridep"}); break;
    }
    if (job.moe_imbalance == 1) add({"--moe-router-force-load-balancing"});
    if (job.ep_overlap) add({"--overlap-moe-expert-parallel-comm"});
  }
  return m;
}

}  // namespace racksim
