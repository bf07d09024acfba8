#pragma once
// The Megatron-LM command-line arguments that run a planned layout: what a planner's user pastes into a
// launch script to reproduce the layout racksim priced. Parallelism, batch, optimizer sharding, rank
// order, recompute, offload, precision and the MoE dispatcher; not the model's own architecture flags
// (--num-layers, --hidden-size, --num-experts, ...), which the user's model already has.
//
// Flag names and choices: Megatron-LM @d98e8a6 (megatron/training/arguments.py and the config dataclasses
// its ArgumentGroupFactory turns into flags: megatron/core/model_parallel_config.py,
// megatron/core/transformer/transformer_config.py, megatron/training/config/{training,common}_config.py);
// the precision recipes as Megatron-Bridge sets them (src/megatron/bridge/training/mixed_precision.py:
// tensorwise, delayed and blockwise with --fp8-format hybrid, MXFP8 with e4m3, NVFP4 with e2m1).
#include <string>
#include <vector>

#include "models/planner/layout.hpp"
#include "models/planner/step_model.hpp"

namespace racksim {

struct MegatronArgs {
  std::vector<std::string> argv;   // each flag and each value its own entry, in a fixed order
  std::vector<std::string> notes;  // what the arguments leave to the user (hybrid stacks' pipeline split, ...)
  // The arguments as one shell-quoted line ("--tensor-model-parallel-size 4 ... --pipeline-model-parallel-layout 'Et*4|...'").
  std::string command_line() const;
};

// `pp_layout`: the chunks as Megatron's --pipeline-model-parallel-layout (StepEstimate::pp_layout; "" for one
// chunk); `moe`: the model has routed experts; `hybrid`: a hybrid stack (Megatron's --hybrid-layer-pattern,
// whose pipeline split is written into the pattern itself rather than given as a layout).
MegatronArgs megatron_args(const ParallelLayout& layout, const TrainingJob& job, const std::string& pp_layout, bool moe,
                           bool hybrid);

}  // namespace racksim
