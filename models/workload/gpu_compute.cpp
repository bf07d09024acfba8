#include "models/workload/gpu_compute.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/core/json_reader.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim {

const DtypeThroughput& GpuCompute::dtype(const std::string& d) const {
  auto it = dtypes.find(d);
  if (it != dtypes.end()) return it->second;
  std::string known;
  for (const auto& [k, v] : dtypes) known += (known.empty() ? "" : ", ") + k;
  throw InputError("--dtype", "", "'" + d + "' (no figures for " + gpu_type + ")", "one of " + known);
}

double GpuCompute::gemm_time_s(const Gemm& g, const std::string& d, double hbm_Bps) const {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.count <= 0) return 0;
  const DtypeThroughput& th = dtype(d);
  const double tile = std::max(1.0, gemm_tile);
  const double padded = 2 * std::ceil(g.m / tile) * tile * std::ceil(g.n / tile) * tile * g.k * g.count;
  const double compute = padded / (th.peak_dense_TFLOPs * 1e12 * th.gemm_efficiency);
  // operands and result once through HBM (bf16 inputs for both dtypes is the conservative side)
  const double bytes = 2 * g.count * (g.m * g.k + g.k * g.n + g.m * g.n);
  const double memory = hbm_Bps > 0 ? memory_time_s(bytes, hbm_Bps) : 0;
  return std::max(compute, memory) + gemm_overhead_s;
}

double GpuCompute::attention_time_s(double flops) const {
  return flops / (dtype("bf16").peak_dense_TFLOPs * 1e12 * attention_efficiency);
}

ComputeTable ComputeTable::shipped() {
  return load((std::filesystem::path(RACKSIM_TOPOLOGY_DIR).parent_path() / "models" / "workload" / "gpu_compute.json").string());
}

ComputeTable ComputeTable::load(const std::string& path) { return from_json_text(parse_json_file(path).dump(), path); }

ComputeTable ComputeTable::from_json_text(const std::string& text, const std::string& where) {
  const nlohmann::json doc = parse_json_text(text, where);
  JsonObjectReader r(doc, where);
  r.integer_in("schema_version", 1, 1);
  r.string("description");
  if (r.has("references")) r.raw("references");
  ComputeTable t;
  t.where_ = where;
  const auto& gpus = r.array("gpus");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    JsonObjectReader g = array_element(gpus, i, where, "/gpus");
    GpuCompute c;
    c.system = g.string_or("system", "");
    c.gpu_type = g.string("gpu_type");
    c.name = g.string("name");
    for (const std::string d : {"bf16", "fp8"}) {
      if (!g.has(d)) continue;
      JsonObjectReader dr = g.object(d);
      DtypeThroughput th;
      th.peak_dense_TFLOPs = dr.positive("peak_dense_TFLOPs");
      th.gemm_efficiency = dr.number_in("gemm_efficiency", 0.01, 1.0);
      th.source = dr.string("source");
      dr.finish();
      c.dtypes[d] = th;
    }
    if (!c.dtypes.count("bf16")) g.fail("bf16", "(missing)", "bf16 figures (the attention core runs in bf16)");
    c.gemm_overhead_s = g.non_negative("gemm_overhead_us") * 1e-6;
    c.gemm_tile = g.number_in("gemm_tile", 1, 1024);
    c.attention_efficiency = g.number_in("attention_efficiency", 0.01, 1.0);
    c.hbm_efficiency = g.number_in("hbm_efficiency", 0.01, 1.0);
    c.source = g.string("source");
    g.finish();
    t.entries_.push_back(c);
  }
  r.finish();
  return t;
}

const GpuCompute& ComputeTable::lookup(const std::string& system_id, const std::string& gpu_type) const {
  for (const auto& e : entries_)
    if (e.system == system_id && e.gpu_type == gpu_type) return e;
  for (const auto& e : entries_)
    if (e.system.empty() && e.gpu_type == gpu_type) return e;
  std::string known;
  for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + (e.system.empty() ? "" : e.system + "/") + e.gpu_type;
  throw InputError(where_, "/gpus", "GPU type '" + gpu_type + "' of system '" + system_id + "' (no compute figures)",
                   "an entry for one of: " + known);
}

}  // namespace racksim
