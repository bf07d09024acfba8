#pragma once
// Achievable compute per GPU type (models/workload/gpu_compute.json). A GEMM takes
//   max(flops' / (peak x gemm_efficiency), bytes / (HBM bandwidth x hbm_efficiency)) + gemm_overhead
// where flops' counts m and n rounded up to whole gemm_tile tiles (tile quantisation)
// (a roofline plus a fixed time per launch; the local experts of a MoE layer are one grouped launch),
// fitted to the H200 probe's size sweep. The attention core runs at attention_efficiency x the bf16
// peak; memory-bound work (norms, activations, the optimizer) at hbm_efficiency x HBM bandwidth.
#include <map>
#include <string>
#include <vector>

#include "models/workload/layer_work.hpp"

namespace racksim {

struct DtypeThroughput {
  double peak_dense_TFLOPs = 0;
  double gemm_efficiency = 0;   // large-GEMM rate / peak, in (0, 1]
  std::string source;
};

struct GpuCompute {
  std::string system;           // "" = any system with this GPU type
  std::string gpu_type;         // topology gpu_types id ("b200", "h200", ...)
  std::string name;
  std::map<std::string, DtypeThroughput> dtypes;  // "bf16", "fp8"
  double gemm_overhead_s = 0;   // fixed time per GEMM launch (ramp-up, tail waves)
  double gemm_tile = 1;         // output tile edge: m and n are padded to multiples of it
  double attention_efficiency = 0;
  double hbm_efficiency = 0;
  std::string source;

  const DtypeThroughput& dtype(const std::string& name) const;  // InputError listing the known ones
  // Seconds for a GEMM (count included: one grouped launch) at this dtype; hbm_Bps: the GPU's HBM
  // bandwidth (topology file) for the memory-bound side of the roofline, 0 = compute side only.
  double gemm_time_s(const Gemm& gemm, const std::string& dtype, double hbm_Bps = 0) const;
  double attention_time_s(double flops) const;  // always at the bf16 peak
  double memory_time_s(double bytes, double hbm_Bps) const { return bytes / (hbm_Bps * hbm_efficiency); }
};

class ComputeTable {
 public:
  static ComputeTable shipped();                       // models/workload/gpu_compute.json
  static ComputeTable load(const std::string& path);
  static ComputeTable from_json_text(const std::string& text, const std::string& where);

  // Entry for this system's GPU type: the system-specific one if present, else the generic one.
  // InputError when neither exists, naming the file and the known GPU types.
  const GpuCompute& lookup(const std::string& system_id, const std::string& gpu_type) const;
  const std::vector<GpuCompute>& entries() const { return entries_; }
  const std::string& where() const { return where_; }

 private:
  std::vector<GpuCompute> entries_;
  std::string where_;
};

}  // namespace racksim
