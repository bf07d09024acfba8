#pragma once
// What a GPU can compute, in two parts:
//  * models/workload/gpu_compute.json (vendor data, each number cited): per GPU type its generation
//    (ampere, hopper, blackwell, blackwell-ultra) and dense tensor-core peaks per GEMM input type (bf16, fp8,
//    fp4), and the precision recipes (BF16, FP8 delayed / current scaling / blockwise, MXFP8, NVFP4):
//    which GEMM type each runs at, what quantising costs, what it keeps in memory;
//  * calibrate/training/compute-fit.json (fitted by `racksim plan --fit` on published training runs and
//    the H200 GEMM probe; calibrate/training/README.md): per generation the fraction of those peaks that
//    GEMMs, grouped expert GEMMs, attention and the Mamba scan reach, the HBM efficiency of elementwise
//    work, fixed costs per GEMM launch, per layer block and per pipeline transfer, and how much of the TP
//    and EP communication stays exposed. A generation with no fit of its own takes another's
//    (blackwell-ultra: blackwell's; ampere: hopper's), which the file says.
#include <map>
#include <string>
#include <vector>

namespace racksim {

// A precision recipe as Megatron / Transformer Engine run it.
struct PrecisionRecipe {
  std::string id;                  // "bf16", "fp8-ds", "fp8-cs", "fp8-block", "mxfp8", "nvfp4"
  std::string name;
  std::string gemm_dtype;          // which peak its GEMMs run at: "bf16", "fp8", "fp4"
  double quantize_bytes = 0;       // HBM bytes moved per GEMM-input element to quantise it (read bf16, write
                                   // the low-precision copies, amax or scale passes)
  double saved_input_bytes = 2;    // bytes per element of a GEMM input kept for the backward pass
  double weight_copy_bytes = 0;    // bytes per parameter of low-precision weight copies kept during a step
  double param_bytes = 2;          // bytes per parameter of the model's own weights (1: FP8 primary weights,
                                   // Megatron's fp8_param_gather; their DP all-gather moves these bytes)
  std::vector<std::string> generations;  // where it runs ("ampere", "hopper", "blackwell", "blackwell-ultra")
  std::string source;
};

struct GpuCompute {
  std::string system;              // "" = any system with this GPU type
  std::string gpu_type;            // topology gpu_types id ("b200", "h100-sxm", ...)
  std::string name;
  std::string generation;          // "ampere", "hopper", "blackwell", "blackwell-ultra"
  std::map<std::string, double> peak_dense_TFLOPs;  // by GEMM input type: "bf16", "fp8", "fp4"
  // Attention kernels (forward + backward) run this many times faster than the fitted attention efficiency
  // of the generation whose parameters this GPU uses (1 = as fitted). Blackwell Ultra: doubled SFU
  // exponential throughput over Blackwell, whose fit it borrows (gpu_compute.json gives the derivation).
  double attention_speedup = 1;
  std::string source;
  double peak_Fps(const std::string& gemm_dtype) const;  // FLOP/s; InputError if the GPU has no such units
};

// Fitted per generation (calibrate/training/compute-fit.json).
struct ComputeParams {
  std::map<std::string, double> gemm_efficiency;  // dense GEMM rate / peak, by GEMM input type
  double grouped_gemm_factor = 1;   // grouped expert GEMMs reach this x the dense efficiency
  double attention_efficiency = 0;  // attention core (flash attention), of the bf16 peak
  double ssm_efficiency = 0;        // Mamba-2 SSD scan, of the bf16 peak
  double hbm_efficiency = 0;        // elementwise and quantisation kernels, of the HBM bandwidth
  double gemm_overhead_s = 0;       // per GEMM launch (ramp-up, tail)
  double block_overhead_s = 0;      // per layer block and forward pass (launches, host work); backward x2
  double moe_block_overhead_s = 0;  // more per MoE block (routing, permutation, the host sync of dropless MoE)
  double pp_transfer_overhead_s = 0;  // per pipeline send/recv on the critical path, beyond the link time
  double tp_exposed = 1;            // fraction of the TP (sequence-parallel) collectives not hidden
  double ep_exposed_overlapped = 1; // fraction of the EP all-to-all not hidden when the recipe overlaps it
  std::string source;
};

class ComputeTable {
 public:
  // models/workload/gpu_compute.json and calibrate/training/compute-fit.json of this source tree.
  static ComputeTable shipped();
  static ComputeTable load(const std::string& gpu_path, const std::string& fit_path);
  static std::string shipped_gpu_path();
  static std::string shipped_fit_path();

  // Entry for this system's GPU type: the system-specific one if present, else the generic one.
  // InputError when neither exists, naming the file and the known GPU types.
  const GpuCompute& lookup(const std::string& system_id, const std::string& gpu_type) const;
  // The same entry, or nullptr where there is none.
  const GpuCompute* find(const std::string& system_id, const std::string& gpu_type) const;
  const PrecisionRecipe& precision(const std::string& id) const;  // InputError listing the recipes
  std::vector<std::string> precision_ids() const;
  // Fitted parameters of a generation (InputError if neither it nor a fallback is in the fit file).
  const ComputeParams& params(const std::string& generation) const;
  std::string params_origin(const std::string& generation) const;  // "fit" or "blackwell (fallback)"
  // The generation whose fitted parameters `generation` uses: itself, or its fallback (InputError as params).
  std::string fitted_generation(const std::string& generation) const;
  void set_params(const std::string& generation, const ComputeParams& p) { params_[generation] = p; }
  const std::map<std::string, ComputeParams>& all_params() const { return params_; }
  const std::vector<GpuCompute>& entries() const { return entries_; }
  const std::string& where() const { return where_; }
  const std::string& fit_where() const { return fit_where_; }

  // Reads a compute-fit file (also what `racksim plan --fit` writes).
  static std::map<std::string, ComputeParams> read_fit(const std::string& path, std::map<std::string, std::string>* fallbacks);

 private:
  std::vector<GpuCompute> entries_;
  std::vector<PrecisionRecipe> precisions_;
  std::map<std::string, ComputeParams> params_;
  std::map<std::string, std::string> fallback_;  // generation -> generation whose fit it uses
  std::string where_, fit_where_;
};

}  // namespace racksim
