#pragma once
// Memory per GPU for training (weights, gradients, optimizer states with the ZeRO stage, activations
// with the recompute mode, the LM head's logits) and for inference (weights and KV cache). Bytes.
// Parameter split: attention projections, dense FFNs, shared experts and the LM head are divided over
// TP; routed experts over EP x TP; norms, the router and MLA's down-projections are replicated over
// TP. ZeRO shards over the data-parallel group of each parameter: DP x EP x CP for the dense part,
// DP x CP for routed experts (each expert already lives on one EP rank).
#include "models/workload/layer_work.hpp"
#include "models/workload/model_spec.hpp"

namespace racksim {

// Which layers one pipeline stage holds.
struct StageSlice {
  int first_layer = 0;
  int layers = 0;
  bool has_embedding = false;
  bool has_head = false;   // the LM head and the final norm (a copy of the embedding when tied)
};

struct TrainingMemoryConfig {
  ParallelShape shape;            // tp, ep, cp
  int dp = 1;
  int micro_batch = 1;
  int seq_len = 0;
  int zero_stage = 1;             // 0: nothing sharded; 1: optimizer; 2: + gradients; 3: + weights (FSDP)
  Recompute recompute = Recompute::none;
  double param_bytes = 2;         // bf16 weights
  double grad_bytes = 4;          // fp32 gradient accumulation (Megatron's default for bf16)
  double optimizer_bytes = 12;    // Adam: fp32 master weights + m + v
  double imbalance = 1;           // MoE tokens on the busiest EP rank / mean
  double micro_batches_in_flight = 1;  // activations alive at the peak (1F1B stage s: min(m, p - s))
  double interleave_factor = 1;   // interleaved 1F1B keeps 1 + (p - 1)/(p v) times more
  bool offload_optimizer = false; // optimizer states live in the Grace LPDDR (C2C), not HBM
  bool offload_activations = false;  // in-flight activations beyond one micro-batch live in LPDDR
};

struct MemoryBreakdown {
  double dense_params = 0;        // parameters on this GPU before ZeRO sharding
  double expert_params = 0;
  double weights = 0, grads = 0, optimizer = 0, activations = 0, logits = 0;
  double host_offloaded = 0;      // bytes placed in host memory instead of HBM
  double total() const { return weights + grads + optimizer + activations + logits; }
};

MemoryBreakdown training_memory_per_gpu(const ModelSpec& model, const StageSlice& stage, const TrainingMemoryConfig& config);

// Inference: bf16 weights (param_bytes each) split over TP and PP (experts over EP x TP) plus the KV
// cache of `sequences` sequences of `context` tokens (GQA: K/V heads split over TP; MLA: the latent
// cache is replicated on every TP rank).
struct InferenceMemory {
  double weights = 0, kv_cache = 0;
  double total() const { return weights + kv_cache; }
};
InferenceMemory inference_memory_per_gpu(const ModelSpec& model, int sequences, int context, const ParallelShape& shape,
                                         int pp, double param_bytes = 2, double kv_bytes = 2);

}  // namespace racksim
