#pragma once
// Achievable compute per GPU type (models/workload/gpu_compute.json): vendor dense peak per dtype times
// a large-GEMM efficiency, reduced for small GEMMs by d / (d + gemm_half_dim) with d = min(m, n, k);
// the attention core runs at attention_efficiency x the bf16 peak; memory-bound work (norms,
// activations, the optimizer) at hbm_efficiency x the HBM bandwidth of the topology file.
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
  double gemm_half_dim = 0;     // min(m, n, k) at which a GEMM reaches half its large-size rate
  double attention_efficiency = 0;
  double hbm_efficiency = 0;
  std::string source;

  const DtypeThroughput& dtype(const std::string& name) const;  // InputError listing the known ones
  // Seconds for a forward GEMM (count included) at this dtype.
  double gemm_time_s(const Gemm& gemm, const std::string& dtype) const;
  double gemm_efficiency_at(const Gemm& gemm, const std::string& dtype) const;
  double attention_time_s(double flops) const;  // always at the bf16 peak
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
