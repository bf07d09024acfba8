#pragma once
// The work one GPU does for one layer (of one LayerType) and one micro-batch, given how Megatron splits
// it: tensor parallel TP splits heads, FFN and Mamba widths, with sequence parallelism (norms and
// residuals sharded over TP, an all-gather before and a reduce-scatter after each TP-split block);
// context parallel CP splits the sequence (ring attention exchanges K/V chunks); MoE blocks fold expert
// parallelism into the TP x CP x DP ranks (EP x ETP x EDP = TP x CP x DP): each rank routes its own
// sequence-parallel tokens, the all-to-all carries them to the EP rank holding the expert, and the
// expert tensor-parallel group ETP splits each expert's width. Forward only; the step model applies the
// backward factors. Each piece of work and each saved activation names the Megatron recompute module
// that would recompute it (selective recompute), so memory and recompute time follow the same list.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "models/workload/compute_model.hpp"
#include "models/workload/model_spec.hpp"

namespace racksim {

struct ParallelShape {
  int tp = 1;
  int cp = 1;
  int ep = 1;
  int etp = 1;
};

// Megatron's activation recompute: none; selective modules (--recompute-modules); or full layers
// (--recompute-granularity full with --recompute-num-layers and --recompute-method uniform|block).
enum class Recompute { none, selective, full };
const char* to_string(Recompute r);
enum RecomputeModule : unsigned {
  kRecLayernorm = 1, kRecCoreAttn = 2, kRecMlaUpProj = 4, kRecMlp = 8, kRecMoeAct = 16, kRecMoe = 32, kRecSharedExperts = 64
};
struct RecomputePlan {
  Recompute granularity = Recompute::none;
  unsigned modules = 0;     // selective
  int full_layers = 0;      // full: layers per pipeline chunk (0 = all of them)
  bool block_method = false;  // full: recompute the first full_layers of each chunk (block), or all in groups (uniform)
  std::string text() const;   // "none", "selective(layernorm,moe_act)", "full", "full(block 4)", "full(uniform 2)"
  bool operator==(const RecomputePlan& o) const {
    return granularity == o.granularity && modules == o.modules && full_layers == o.full_layers && block_method == o.block_method;
  }
};
// "none", "selective" (layernorm + moe_act + mlp activations, the old default), "full",
// "selective:layernorm,mla_up_proj,...", "full:block:4", "full:uniform:1". InputError naming `where`.
RecomputePlan parse_recompute(const std::string& text, const std::string& where);
std::string recompute_module_names(unsigned modules);   // "layernorm,moe_act"
std::vector<std::string> recompute_module_list(unsigned modules);  // the same names, one each (Megatron's --recompute-modules)

struct GemmItem {
  const char* name = "";
  GemmShape shape;
  bool low_precision = true;  // runs at the recipe's GEMM type; false: bf16 (router, LM head)
  unsigned module = 0;        // recompute module that would recompute it (0: none)
};

// Bytes by recompute module (a module mask; 0: none), in a fixed table: a layer has a handful of
// distinct masks, and the search builds layer works millions of times (no allocation).
class ModuleBytes {
 public:
  void add(unsigned module, double bytes) {
    for (int i = 0; i < n_; ++i)
      if (mask_[static_cast<std::size_t>(i)] == module) {
        bytes_[static_cast<std::size_t>(i)] += bytes;
        return;
      }
    mask_[static_cast<std::size_t>(n_)] = module;
    bytes_[static_cast<std::size_t>(n_++)] = bytes;
  }
  template <class F>
  void each(F f) const {
    for (int i = 0; i < n_; ++i) f(mask_[static_cast<std::size_t>(i)], bytes_[static_cast<std::size_t>(i)]);
  }
  // The bytes of the modules not in `recomputed` (module 0 always stays).
  double kept(unsigned recomputed) const {
    double b = 0;
    each([&](unsigned module, double bytes) {
      if (module == 0 || !(module & recomputed)) b += bytes;
    });
    return b;
  }

 private:
  std::array<unsigned, 12> mask_{};
  std::array<double, 12> bytes_{};
  int n_ = 0;
};

// The GEMMs of one layer (at most a few dozen), without allocation.
class GemmList {
 public:
  void push_back(const GemmItem& g) { items_.at(static_cast<std::size_t>(n_++)) = g; }
  const GemmItem* begin() const { return items_.data(); }
  const GemmItem* end() const { return items_.data() + n_; }
  std::size_t size() const { return static_cast<std::size_t>(n_); }
  void all_in_bf16() {  // a layer the precision recipe keeps in BF16
    for (int i = 0; i < n_; ++i) items_[static_cast<std::size_t>(i)].low_precision = false;
  }

 private:
  std::array<GemmItem, 32> items_{};
  int n_ = 0;
};

struct LayerWork {
  LayerType type;
  double tokens = 0;                 // micro_batch x seq / CP: this GPU's token chunk, TP-gathered
  GemmList gemms;                    // forward
  double attention_flops = 0;        // forward attention core on this GPU (module core_attn), FLOPs x
                                     // attention_head_dim_weight (kernel speed at the head width)
  double ssm_flops = 0;              // forward Mamba-2 scan on this GPU
  ModuleBytes elementwise;           // forward HBM bytes of non-GEMM kernels, by recompute module
  double quantize_fwd = 0;           // GEMM-input elements quantised in the forward (inputs)
  double quantize_bwd = 0;           // and in the backward (gradient outputs)
  int blocks = 0, moe_blocks = 0;    // blocks (for per-block overheads); MoE blocks among them
  // Collectives of one forward (bytes follow CollectiveRequest's nccl-tests convention)
  double tp_bytes = 0;               // one sequence-parallel all-gather output: tokens x h x 2
  int tp_pairs = 0;                  // all-gather + reduce-scatter pairs over TP (forward)
  double etp_bytes = 0;              // expert-TP all-gather of the dispatched tokens
  int etp_pairs = 0;
  double ep_bytes = 0;               // one all-to-all send buffer per GPU (dispatch; combine the same)
  int ep_all_to_alls = 0;            // dispatch + combine (2 per MoE block if EP > 1)
  double cp_bytes = 0;               // K and V of the local chunk, exchanged once per ring step
  int cp_steps = 0;                  // CP - 1
  int moe_recompute_all_to_alls = 0; // all-to-alls repeated when module moe is recomputed
  // Activations kept for the backward pass, by the module that recomputes them (0: none)
  ModuleBytes saved;
  // The part of `saved` Megatron's fine-grained activation offload can move to host memory: the tensors of
  // the modules --offload-modules names (attn_norm, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act;
  // Megatron-LM docs, "Fine-grained Activation Offloading"), by the same recompute modules
  ModuleBytes offloadable;
  double input_bytes = 0;            // the layer's input (what full recompute keeps)
  double matmul_flops() const;
  double saved_bytes(unsigned recomputed_modules) const;  // selective: what stays
  double saved_all() const { return saved_bytes(0); }
};

struct LayerShape {
  ParallelShape par;
  int micro_batch = 1;
  int seq_len = 0;
  double imbalance = 1;        // tokens on the busiest EP rank / mean (1: force-balanced routing)
  double saved_input_bytes = 2;  // bytes per saved GEMM input (the precision recipe's)
};

LayerWork layer_work(const ModelSpec& model, const LayerType& type, const LayerShape& shape);
// The output head on the last pipeline stage: final norm, vocabulary-parallel LM head (bf16) and the
// fused cross-entropy over fp32 logits (kept for the loss backward).
LayerWork head_work(const ModelSpec& model, const LayerShape& shape);
// One multi-token-prediction module without its head: the two norms, the 2h -> h projection and its blocks.
LayerWork mtp_work(const ModelSpec& model, const LayerShape& shape);

}  // namespace racksim
