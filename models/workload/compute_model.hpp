#pragma once
// The step model's compute, as a linear function of the fitted parameters. Work counts what a piece of a
// training step asks of the GPU in units whose coefficients the fit learns: seconds at the tensor-core
// peak per GEMM type (dense and grouped), attention and Mamba-scan seconds at the bf16 peak, seconds of
// HBM traffic at the vendor bandwidth, launch counts, the seconds the collective model gives for TP and
// overlapped EP traffic, and seconds that no parameter scales (everything else exposed). A time is the
// dot product with ComputeModel::coefficients (1 / efficiency, seconds per launch, exposed fraction).
// Sums and multiples of Work stay linear, so a whole step is one Work and the fit
// (models/planner/training_fit.hpp) can fit the parameters by least squares on published step times.
#include <array>
#include <string>

#include "models/workload/gpu_compute.hpp"

namespace racksim {

enum Feature : int {
  kGemmBf16, kGemmFp8, kGemmFp4,           // padded GEMM FLOPs / peak of that type (s)
  kGroupedBf16, kGroupedFp8, kGroupedFp4,  // grouped expert GEMMs, the same
  kAttention,                              // attention-core FLOPs / bf16 peak (s)
  kSsm,                                    // Mamba-2 SSD FLOPs / bf16 peak (s)
  kHbm,                                    // elementwise + quantisation + memory-bound GEMM bytes / HBM bandwidth (s)
  kGemmLaunches,                           // GEMM launches
  kBlockPasses,                            // layer blocks x passes (forward 1, backward 2)
  kMoePasses,                              // MoE blocks x passes
  kPpTransfers,                            // pipeline send/recv on the critical path
  kTpComm,                                 // TP collective seconds (collective model)
  kEpOverlapComm,                          // EP all-to-all seconds of recipes that overlap it
  kFixed,                                  // seconds no parameter scales
  kFeatureCount
};
const char* feature_name(int f);

struct Work {
  std::array<double, kFeatureCount> x{};
  Work& operator+=(const Work& o) {
    for (int i = 0; i < kFeatureCount; ++i) x[i] += o.x[i];
    return *this;
  }
  Work operator*(double k) const {
    Work w = *this;
    for (double& v : w.x) v *= k;
    return w;
  }
  Work operator+(const Work& o) const {
    Work w = *this;
    w += o;
    return w;
  }
  void add_fixed(double s) { x[kFixed] += s; }
};

using Coefficients = std::array<double, kFeatureCount>;

// How much longer attention kernels take per FLOP at this per-head width (query/key) than at 128, the
// width the fitted attention efficiency and the probe points stand for. Measured on the H200 (cuDNN fused
// attention, causal, bf16, forward + backward, the same FLOPs at head_dim 64 and 128, four shapes:
// 0.77-0.80 of the speed, calibrate/data/h200-sxm-1gpu-2026-12-02/SUMMARY.md): 1 / 0.78 at 64, log-linear
// between 64 and 128, held at the ends (no probe above 128 or below 64: assumption).
double attention_head_dim_weight(double head_dim);
Coefficients coefficients_of(const ComputeParams& p);

// A GEMM [m x k] x [k x n], `count` of them in one launch (grouped: one per local expert, m rows each).
struct GemmShape {
  double m = 0, n = 0, k = 0, count = 1;
  bool grouped = false;
  double flops() const { return 2 * m * n * k * count; }
};

// One GPU of one generation with fitted parameters: turns work into features and features into seconds.
class ComputeModel {
 public:
  ComputeModel(const GpuCompute& gpu, const ComputeParams& params, double hbm_Bps, int sm_count);
  const GpuCompute& gpu() const { return *gpu_; }
  const ComputeParams& params() const { return params_; }
  const Coefficients& coefficients() const { return coeff_; }
  double hbm_Bps() const { return hbm_Bps_; }
  int sm_count() const { return sm_count_; }
  double time_s(const Work& w) const;

  // A GEMM at `dtype` ("bf16", "fp8", "fp4"), `passes` times (backward = 2: dgrad and wgrad): the
  // compute side counts m and n padded to 128-wide tiles and the last partial wave of tiles over the
  // SMs (none when there are fewer tiles than SMs: split-K); the memory side reads both operands and writes the bf16 result; whichever is longer at the
  // current parameters is what the GEMM costs (a roofline), plus one launch per pass.
  void add_gemm(Work& w, const GemmShape& g, const std::string& dtype, double passes) const;
  // The two sides of that roofline for one pass, which do not depend on the parameters: `compute_x` of
  // feature `feature` (padded FLOPs at the peak) and `memory_x` of kHbm (bytes at the HBM bandwidth).
  struct GemmTerms {
    int feature = kGemmBf16;
    double compute_x = 0, memory_x = 0;
  };
  GemmTerms gemm_terms(const GemmShape& g, const std::string& dtype) const;
  // `flops`: attention-core FLOPs already weighted by the kernel's speed at their head dimension
  // (attention_head_dim_weight); the GPU's attention_speedup divides them.
  void add_attention(Work& w, double flops) const { w.x[kAttention] += flops / (peak_bf16_ * gpu_->attention_speedup); }
  void add_ssm(Work& w, double flops) const { w.x[kSsm] += flops / peak_bf16_; }
  void add_hbm(Work& w, double bytes) const { w.x[kHbm] += bytes / hbm_Bps_; }
  // Seconds of HBM-bound work at the probe-measured bandwidth fraction (the optimizer's fused kernels).
  double streaming_s(double bytes) const;

 private:
  const GpuCompute* gpu_;
  ComputeParams params_;
  Coefficients coeff_;
  double hbm_Bps_ = 0, peak_bf16_ = 0;
  int sm_count_ = 1;
};

}  // namespace racksim
