#pragma once
// Memory per GPU for training (weights, gradients, optimizer states with the ZeRO / FSDP stage, low-
// precision weight copies, activations with the recompute plan, the LM head's logits) and for inference
// (weights and KV cache). Bytes.
// Parameter split: attention and Mamba projections, dense FFNs, shared experts and the LM head are
// divided over TP; routed experts over EP x ETP; norms, the router, MLA's down-projections and LatentMoE's
// projections are replicated over TP. The distributed optimizer (ZeRO-1) shards the optimizer states over
// each parameter's data-parallel group: DP x CP for the dense part, EDP = TP x CP x DP / (EP x ETP) for
// routed experts (Megatron's folding); ZeRO-2 shards the gradients too, ZeRO-3 (Megatron FSDP) the
// weights as well; HSDP shards within groups of `shard_group` ranks and replicates across them.
#include <deque>
#include <vector>

#include "models/workload/layer_work.hpp"
#include "models/workload/model_spec.hpp"

namespace racksim {

// Which layers one pipeline chunk (a virtual stage) holds; a GPU holds vp chunks.
struct StageSlice {
  int first_layer = 0;
  int layers = 0;
  bool has_embedding = false;
  bool has_head = false;   // the final norm and the LM head (a copy of the embedding when tied)
  bool has_mtp = false;    // the multi-token-prediction modules (last chunk)
};

// With the optimizer offloaded the fp32 main parameters stay in HBM (Megatron's HybridDeviceOptimizer; memory_fit.cpp).
inline constexpr double kFp32MasterBytesPerParam = 4;

struct TrainingMemoryConfig {
  ParallelShape shape;            // tp, cp, ep, etp
  int dp = 1;                     // attention data parallelism (GPUs = TP x CP x PP x DP)
  int micro_batch = 1;
  int seq_len = 0;
  int zero_stage = 1;             // 0: nothing sharded; 1: optimizer (distributed optimizer); 2: + gradients; 3: + weights
  int shard_group = 0;            // ZeRO-3 only: shard within groups of this many DP x CP ranks (HSDP); 0: all
  RecomputePlan recompute;
  double param_bytes = 2;         // bf16 weights
  double grad_bytes = 4;          // fp32 gradient accumulation (Megatron's default)
  double optimizer_bytes = 12;    // Adam: fp32 master weights + m + v
  double weight_copy_bytes = 0;   // the precision recipe's low-precision weight copies
  double saved_input_bytes = 2;   // the precision recipe's saved GEMM inputs
  double imbalance = 1;           // MoE tokens on the busiest EP rank / mean
  bool mtp = true;                // train the model's MTP modules (if it has any)
  double micro_batches_in_flight = 1;  // activations alive at the peak (1F1B stage s: min(m, p - s))
  double interleave_factor = 1;   // interleaved 1F1B keeps 1 + (p - 1)/(p v) times more
  bool offload_optimizer = false; // optimizer states live in host memory (Grace LPDDR over C2C)
  bool offload_activations = false;  // in-flight activations beyond one micro-batch live in host memory
  int edp() const { return shape.tp * shape.cp * dp / (shape.ep * shape.etp); }
};

struct MemoryBreakdown {
  double dense_params = 0;        // parameters on this GPU before ZeRO sharding
  double expert_params = 0;
  double weights = 0, grads = 0, optimizer = 0, activations = 0, logits = 0;
  // ZeRO-3 / FSDP: the unsharded copies of the FSDP units (a layer, the embedding, the LM head) in use,
  // parameters and gradients (see training_memory_per_gpu)
  double gathered = 0;
  double host_offloaded = 0;      // bytes placed in host memory instead of HBM
  double total() const { return weights + grads + optimizer + activations + logits + gathered; }
};

// The GPU holding `chunks` (its pipeline chunks; one without virtual pipelining).
// ZeRO-3 (Megatron FSDP, HSDP) keeps each parameter sharded but runs every FSDP unit (each decoder layer,
// the embedding, the LM head) on its whole parameters: before the unit's forward and backward they are
// all-gathered into an unsharded buffer, and its backward writes unsharded gradients that are then
// reduce-scattered. With the next unit prefetched while one computes, and one unit's gradients reducing
// while the next one's are produced, two units' parameters (param_bytes) and two units' gradients
// (grad_bytes) are alive at the peak (PyTorch FSDP notes, "FSDP Prefetch Nuances"; Megatron-FSDP's
// all-gather pipeline and double buffers). The unit is the largest on this GPU before sharding: a MoE
// layer with EP = 1 holds every routed expert (DeepSeek-V3: 11.3 B parameters, 45 GB in bf16 for the
// two copies of its parameters alone).
MemoryBreakdown training_memory_per_gpu(const ModelSpec& model, const std::vector<StageSlice>& chunks,
                                        const TrainingMemoryConfig& config);
inline MemoryBreakdown training_memory_per_gpu(const ModelSpec& model, const StageSlice& stage, const TrainingMemoryConfig& config) {
  return training_memory_per_gpu(model, std::vector<StageSlice>{stage}, config);
}

// The two halves of training_memory_per_gpu, for a caller that tries many memory savers on one GPU's
// chunks (the planner's MemoryFitter): the same arithmetic, with what does not change between the
// savers computed once.
// The GPU's parameters before sharding (chunk_params) and its largest FSDP unit (ZeRO-3 only, computed
// when first asked).
class StageParams {
 public:
  StageParams(const ModelSpec& model, const std::vector<StageSlice>& chunks, const ParallelShape& shape, bool mtp);
  double dense() const { return dense_; }
  double expert() const { return expert_; }
  double largest_unit();

 private:
  const ModelSpec& model_;
  const std::vector<StageSlice>& chunks_;
  ParallelShape shape_;
  bool mtp_;
  double dense_ = 0, expert_ = 0, largest_unit_ = -1;
};
// Weights, gradients, optimizer states (in HBM or offloaded) and the FSDP buffers; activations and
// logits 0. Reads the config's shape, dp, ZeRO stage, HSDP group, byte sizes and optimizer offload.
MemoryBreakdown parameter_memory(StageParams& params, const TrainingMemoryConfig& config);
// What one layer of each type (and an MTP module, the head) keeps for its backward at one layer shape,
// each computed once (layer_work) and kept.
class SavedActivations {
 public:
  SavedActivations(const ModelSpec& model, const LayerShape& shape) : model_(model), shape_(shape) {}
  struct Layer {
    ModuleBytes saved;  // by recompute module (LayerWork::saved)
    ModuleBytes offloadable;  // the part fine-grained activation offload can move (LayerWork::offloadable)
    double all = 0;     // everything (LayerWork::saved_all)
    double input = 0;   // the layer's input (what full recompute keeps)
  };
  const Layer& layer(const LayerType& type);
  double mtp_all();
  double head_all();

 private:
  const ModelSpec& model_;
  LayerShape shape_;
  std::deque<std::pair<LayerType, Layer>> layers_;  // a deque: layer() hands out references
  double mtp_all_ = -1, head_all_ = -1;
};
// Activations (with the recompute plan and activation offload), logits and the offloaded activation
// bytes; the parameter part 0. `saved` at the config's layer shape (shape, micro-batch, sequence,
// imbalance, saved input bytes).
MemoryBreakdown activation_memory(const ModelSpec& model, const std::vector<StageSlice>& chunks, const TrainingMemoryConfig& config,
                                  SavedActivations& saved);
// The layer shape training_memory_per_gpu prices activations at.
LayerShape activation_shape(const TrainingMemoryConfig& config);

// Parameters on one GPU holding `chunks`, before sharding: (dense, routed experts).
std::pair<double, double> chunk_params(const ModelSpec& model, const std::vector<StageSlice>& chunks, const ParallelShape& shape,
                                       bool mtp);

// Inference: bf16 weights (param_bytes each) split over TP and PP (experts over EP x ETP) plus the KV
// cache of `sequences` sequences of `context` tokens (GQA: K/V heads split over TP; MLA: the latent
// cache is replicated on every TP rank).
struct InferenceMemory {
  double weights = 0, kv_cache = 0;
  double total() const { return weights + kv_cache; }
};
InferenceMemory inference_memory_per_gpu(const ModelSpec& model, int sequences, int context, const ParallelShape& shape,
                                         int pp, double param_bytes = 2, double kv_bytes = 2);

}  // namespace racksim
