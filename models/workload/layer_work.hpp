#pragma once
// The work one GPU does for one transformer layer and one micro-batch, given how the layer is split
// (Megatron-style): tensor parallel TP splits heads and FFN widths, with sequence parallelism (norms and
// residuals sharded over TP, an all-gather before and a reduce-scatter after each block); expert
// parallel EP splits the routed experts (tokens travel by all-to-all; experts are also split over TP);
// context parallel CP splits the sequence (ring attention exchanges K/V chunks).
// Forward only: the backward pass is 2x the matrix products and 2.5x the attention core.
#include <string>
#include <vector>

#include "models/workload/model_spec.hpp"

namespace racksim {

struct ParallelShape {
  int tp = 1;
  int ep = 1;
  int cp = 1;
};

struct Gemm {
  const char* name = "";       // static text ("qkv", "expert_down", ...)
  double m = 0, n = 0, k = 0;  // [m x k] x [k x n]
  double count = 1;            // identical products (the local experts)
  double flops() const { return 2 * m * n * k * count; }
};

enum class Recompute { none, selective, full };
const char* to_string(Recompute r);

struct LayerWork {
  double tokens = 0;              // tokens of this micro-batch on this GPU (micro_batch x seq / CP)
  std::vector<Gemm> gemms;        // forward matrix products on one GPU
  double attention_flops = 0;     // forward attention-core FLOPs on one GPU
  double matmul_flops() const;
  // Collective payloads of one micro-batch (bytes, following CollectiveRequest's nccl-tests convention).
  double tp_bytes = 0;            // one all-gather output (= one reduce-scatter input): tokens x h x 2
  int tp_pairs_forward = 0;       // all-gather + reduce-scatter pairs in the forward (2 per layer if TP>1)
  double ep_bytes = 0;            // one all-to-all send buffer per GPU (dispatch; combine is the same size)
  int ep_all_to_alls_forward = 0; // dispatch + combine (2 per MoE layer if EP>1)
  double cp_bytes = 0;            // K and V of the local chunk, exchanged once per ring step
  int cp_steps_forward = 0;       // CP - 1
  // Activation bytes kept for the backward pass, per recompute mode.
  double activation_bytes_none = 0;
  double activation_bytes_selective = 0;  // norms' outputs and SwiGLU products recomputed
  double activation_bytes_full = 0;       // only the layer input kept
  double activation_bytes(Recompute r) const;
};

// micro_batch: sequences per micro-batch; seq_len: tokens per sequence; imbalance: tokens on the
// busiest expert-parallel rank / the mean (>= 1); act_bytes: bytes per activation element (2 = bf16).
LayerWork layer_work(const ModelSpec& model, bool moe_layer, int micro_batch, int seq_len, const ParallelShape& shape,
                     double imbalance, double act_bytes = 2);

// The output head on the last pipeline stage: the vocabulary-parallel LM head GEMM and the fp32 logits.
struct HeadWork {
  Gemm gemm;
  double logits_bytes = 0;  // fp32 logits of one micro-batch on one GPU, kept for the loss backward
};
HeadWork head_work(const ModelSpec& model, int micro_batch, int seq_len, const ParallelShape& shape);

}  // namespace racksim
