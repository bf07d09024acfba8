#include "models/workload/compute_model.hpp"

#include <algorithm>
#include <cmath>

namespace racksim {

namespace {

// GEMM output tiles: 128 x 128 (assumption: cuBLAS/CUTLASS tile sizes on Hopper and Blackwell).
constexpr double kTile = 128;
// HBM efficiency of large fused streaming kernels (the optimizer step): the H200 probe read 4489 GB/s and
// wrote 4298 GB/s of 4814 (calibrate/data/h200-pcie-1gpu-2026-11-29/SUMMARY.md): 0.93 and 0.89, mean 0.91.
constexpr double kStreamingHbmEfficiency = 0.91;

double input_bytes(const std::string& dtype) { return dtype == "fp4" ? 0.5 : dtype == "fp8" ? 1 : 2; }

int gemm_feature(const std::string& dtype, bool grouped) {
  const int base = dtype == "fp4" ? 2 : dtype == "fp8" ? 1 : 0;
  return (grouped ? kGroupedBf16 : kGemmBf16) + base;
}

}  // namespace

const char* feature_name(int f) {
  static const char* names[kFeatureCount] = {"gemm_bf16_s", "gemm_fp8_s", "gemm_fp4_s", "grouped_bf16_s", "grouped_fp8_s",
                                             "grouped_fp4_s", "attention_s", "ssm_s", "hbm_s", "gemm_launches",
                                             "block_passes", "moe_passes", "pp_transfers", "tp_comm_s", "ep_overlap_comm_s",
                                             "fixed_s"};
  return f >= 0 && f < kFeatureCount ? names[f] : "?";
}

double attention_head_dim_weight(double head_dim) {
  // fwd+bwd speed at head_dim 64 relative to 128, mean of the four paired shapes of the H200 probe
  constexpr double kSpeedAt64 = 0.78;
  const double x = std::clamp(std::log2(std::max(head_dim, 1.0)) - 6, 0.0, 1.0);  // 0 at 64, 1 at 128
  return 1 / (kSpeedAt64 + x * (1 - kSpeedAt64));
}

Coefficients coefficients_of(const ComputeParams& p) {
  Coefficients c{};
  const double bf16 = p.gemm_efficiency.at("bf16");
  auto eff = [&](const char* d) {
    auto it = p.gemm_efficiency.find(d);
    return it != p.gemm_efficiency.end() ? it->second : bf16;
  };
  c[kGemmBf16] = 1 / bf16;
  c[kGemmFp8] = 1 / eff("fp8");
  c[kGemmFp4] = 1 / eff("fp4");
  c[kGroupedBf16] = c[kGemmBf16] / p.grouped_gemm_factor;
  c[kGroupedFp8] = c[kGemmFp8] / p.grouped_gemm_factor;
  c[kGroupedFp4] = c[kGemmFp4] / p.grouped_gemm_factor;
  c[kAttention] = 1 / p.attention_efficiency;
  c[kSsm] = 1 / p.ssm_efficiency;
  c[kHbm] = 1 / p.hbm_efficiency;
  c[kGemmLaunches] = p.gemm_overhead_s;
  c[kBlockPasses] = p.block_overhead_s;
  c[kMoePasses] = p.moe_block_overhead_s;
  c[kPpTransfers] = p.pp_transfer_overhead_s;
  c[kTpComm] = p.tp_exposed;
  c[kEpOverlapComm] = p.ep_exposed_overlapped;
  c[kFixed] = 1;
  return c;
}

ComputeModel::ComputeModel(const GpuCompute& gpu, const ComputeParams& params, double hbm_Bps, int sm_count)
    : gpu_(&gpu), params_(params), coeff_(coefficients_of(params)), hbm_Bps_(hbm_Bps), peak_bf16_(gpu.peak_Fps("bf16")),
      sm_count_(std::max(1, sm_count)) {}

double ComputeModel::time_s(const Work& w) const {
  double t = 0;
  for (int i = 0; i < kFeatureCount; ++i) t += coeff_[i] * w.x[i];
  return t;
}

double ComputeModel::streaming_s(double bytes) const { return bytes / (hbm_Bps_ * kStreamingHbmEfficiency); }

void ComputeModel::add_gemm(Work& w, const GemmShape& g, const std::string& dtype, double passes) const {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.count <= 0 || passes <= 0) return;
  const GemmTerms t = gemm_terms(g, dtype);
  if (coeff_[t.feature] * t.compute_x >= coeff_[kHbm] * t.memory_x) w.x[t.feature] += passes * t.compute_x;
  else w.x[kHbm] += passes * t.memory_x;
  w.x[kGemmLaunches] += passes;
}

ComputeModel::GemmTerms ComputeModel::gemm_terms(const GemmShape& g, const std::string& dtype) const {
  const double mt = std::ceil(g.m / kTile), nt = std::ceil(g.n / kTile);
  const double tiles = mt * nt * g.count;
  // The last partial wave of tiles idles SMs; with fewer tiles than SMs cuBLAS splits K (split-K /
  // stream-K) and fills the GPU, so no wave penalty is counted there.
  const double waves = std::ceil(tiles / sm_count_);
  const double wave_eff = tiles < sm_count_ ? 1.0 : tiles / (waves * sm_count_);
  const double padded = 2 * mt * kTile * nt * kTile * g.k * g.count / wave_eff;
  GemmTerms t;
  t.feature = gemm_feature(dtype, g.grouped);
  t.compute_x = padded / gpu_->peak_Fps(dtype);
  const double bytes = g.count * ((g.m * g.k + g.k * g.n) * input_bytes(dtype) + g.m * g.n * 2);
  t.memory_x = bytes / hbm_Bps_;
  return t;
}

}  // namespace racksim
