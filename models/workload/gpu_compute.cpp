#include "models/workload/gpu_compute.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/core/json_reader.hpp"
#include "sim/core/suggest.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim {

namespace {

const std::vector<std::string> kGemmDtypes{"bf16", "fp8", "fp4"};
const std::vector<std::string> kGenerations{"ampere", "hopper", "blackwell", "blackwell-ultra"};

// A generation's `fit` record as training_fit.cpp writes it (its rows and their in-sample errors): strict, so that
// a typo in a hand-edited file is named rather than skipped.
void read_fit_summary(JsonObjectReader r) {
  r.integer_in("rows", 0, 100000000);
  r.non_negative("median_abs_error");
  r.non_negative("worst_abs_error");
  r.finish();
}

ComputeParams read_params(JsonObjectReader r) {
  ComputeParams p;
  JsonObjectReader g = r.object("gemm_efficiency");
  for (const auto& d : kGemmDtypes)
    if (g.has(d)) p.gemm_efficiency[d] = g.number_in(d, 0.01, 1.0);
  g.finish();
  if (!p.gemm_efficiency.count("bf16")) r.fail("gemm_efficiency", "(no bf16)", "a bf16 efficiency (attention and the LM head run in bf16)");
  p.grouped_gemm_factor = r.number_in("grouped_gemm_factor", 0.05, 2.0);
  p.attention_efficiency = r.number_in("attention_efficiency", 0.01, 1.0);
  p.ssm_efficiency = r.number_in("ssm_efficiency", 0.001, 1.0);
  p.hbm_efficiency = r.number_in("hbm_efficiency", 0.01, 1.0);
  p.gemm_overhead_s = r.number_in("gemm_overhead_us", 0, 1e5) * 1e-6;
  p.block_overhead_s = r.number_in("block_overhead_us", 0, 1e6) * 1e-6;
  p.moe_block_overhead_s = r.number_in("moe_block_overhead_us", 0, 1e6) * 1e-6;
  p.pp_transfer_overhead_s = r.number_in("pp_transfer_overhead_us", 0, 1e6) * 1e-6;
  p.tp_exposed = r.number_in("tp_exposed", 0, 1);
  p.ep_exposed_overlapped = r.number_in("ep_exposed_overlapped", 0, 1);
  p.source = r.string("source");
  if (r.has("fit")) read_fit_summary(r.object("fit"));  // read by people, not the model: checked, not kept
  r.finish();
  return p;
}

}  // namespace

double GpuCompute::peak_Fps(const std::string& d) const {
  auto it = peak_dense_TFLOPs.find(d);
  if (it == peak_dense_TFLOPs.end()) {
    std::vector<std::string> known;
    for (const auto& [k, v] : peak_dense_TFLOPs) known.push_back(k);
    throw InputError("--precision", "", "a recipe with " + d + " GEMMs on " + name,
                     "a recipe whose GEMMs this GPU runs (" + comma_list(known) + ")");
  }
  return it->second * 1e12;
}

std::string ComputeTable::shipped_gpu_path() {
  return (std::filesystem::path(RACKSIM_TOPOLOGY_DIR).parent_path() / "models" / "workload" / "gpu_compute.json").string();
}

std::string ComputeTable::shipped_fit_path() {
  return (std::filesystem::path(RACKSIM_TOPOLOGY_DIR).parent_path() / "calibrate" / "training" / "compute-fit.json").string();
}

ComputeTable ComputeTable::shipped() { return load(shipped_gpu_path(), shipped_fit_path()); }

std::map<std::string, ComputeParams> ComputeTable::read_fit(const std::string& path, std::map<std::string, std::string>* fallbacks) {
  const nlohmann::json doc = parse_json_file(path);
  JsonObjectReader r(doc, path);
  r.integer_in("schema_version", 1, 1);
  r.string("description");
  r.string("produced_by");
  std::map<std::string, ComputeParams> out;
  JsonObjectReader gens = r.object("generations");
  for (const auto& g : kGenerations)
    if (gens.has(g)) out[g] = read_params(gens.object(g));
  gens.finish();
  if (r.has("fallbacks")) {
    JsonObjectReader f = r.object("fallbacks");
    for (const auto& g : kGenerations) {
      if (!f.has(g)) continue;
      const std::string to = f.one_of(g, kGenerations);
      if (!out.count(to)) f.fail(g, to, "a generation fitted in this file");
      if (fallbacks) (*fallbacks)[g] = to;
    }
    f.finish();
  }
  if (r.has("rows")) r.strings("rows");  // the runs the fit used, as "#index label": read by people, not the model
  r.finish();
  return out;
}

ComputeTable ComputeTable::load(const std::string& gpu_path, const std::string& fit_path) {
  const nlohmann::json doc = parse_json_file(gpu_path);
  JsonObjectReader r(doc, gpu_path);
  r.integer_in("schema_version", 2, 2);
  r.string("description");
  if (r.has("references")) r.raw("references");
  ComputeTable t;
  t.where_ = gpu_path;
  t.fit_where_ = fit_path;
  const auto& precisions = r.array("precisions");
  for (std::size_t i = 0; i < precisions.size(); ++i) {
    JsonObjectReader p = array_element(precisions, i, gpu_path, "/precisions");
    PrecisionRecipe x;
    x.id = p.string("id");
    x.name = p.string("name");
    x.gemm_dtype = p.one_of("gemm_dtype", kGemmDtypes);
    x.quantize_bytes = p.number_in("quantize_bytes_per_element", 0, 64);
    x.saved_input_bytes = p.number_in("saved_input_bytes_per_element", 0.25, 4);
    x.weight_copy_bytes = p.number_in("weight_copy_bytes_per_param", 0, 16);
    if (p.has("param_bytes_per_param")) x.param_bytes = p.number_in("param_bytes_per_param", 0.5, 4);
    const auto& gens = p.array("generations");
    for (const auto& g : gens) {
      const std::string s = g.is_string() ? g.get<std::string>() : "";
      if (std::find(kGenerations.begin(), kGenerations.end(), s) == kGenerations.end())
        p.fail("generations", json_excerpt(g), "generations among " + comma_list(kGenerations));
      x.generations.push_back(s);
    }
    x.source = p.string("source");
    p.finish();
    t.precisions_.push_back(x);
  }
  const auto& gpus = r.array("gpus");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    JsonObjectReader g = array_element(gpus, i, gpu_path, "/gpus");
    GpuCompute c;
    c.system = g.string_or("system", "");
    c.gpu_type = g.string("gpu_type");
    c.name = g.string("name");
    c.generation = g.one_of("generation", kGenerations);
    JsonObjectReader peaks = g.object("peak_dense_TFLOPs");
    for (const auto& d : kGemmDtypes)
      if (peaks.has(d)) c.peak_dense_TFLOPs[d] = peaks.positive(d);
    peaks.finish();
    if (!c.peak_dense_TFLOPs.count("bf16")) g.fail("peak_dense_TFLOPs", "(no bf16)", "a bf16 peak (attention runs in bf16)");
    c.attention_speedup = g.number_in_or("attention_speedup", 1, 4, 1);
    c.source = g.string("source");
    g.finish();
    t.entries_.push_back(c);
  }
  r.finish();
  t.params_ = read_fit(fit_path, &t.fallback_);
  return t;
}

const GpuCompute* ComputeTable::find(const std::string& system_id, const std::string& gpu_type) const {
  for (const auto& e : entries_)
    if (e.system == system_id && e.gpu_type == gpu_type) return &e;
  for (const auto& e : entries_)
    if (e.system.empty() && e.gpu_type == gpu_type) return &e;
  return nullptr;
}

const GpuCompute& ComputeTable::lookup(const std::string& system_id, const std::string& gpu_type) const {
  if (const GpuCompute* e = find(system_id, gpu_type)) return *e;
  std::string known;
  for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + (e.system.empty() ? "" : e.system + "/") + e.gpu_type;
  throw InputError(where_, "/gpus", "GPU type '" + gpu_type + "' of system '" + system_id + "' (no compute figures)",
                   "an entry for one of: " + known);
}

const PrecisionRecipe& ComputeTable::precision(const std::string& id) const {
  for (const auto& p : precisions_)
    if (p.id == id) return p;
  throw InputError("--precision", "", "'" + id + "'", "one of " + comma_list(precision_ids()));
}

std::vector<std::string> ComputeTable::precision_ids() const {
  std::vector<std::string> out;
  for (const auto& p : precisions_) out.push_back(p.id);
  return out;
}

const ComputeParams& ComputeTable::params(const std::string& generation) const {
  auto it = params_.find(generation);
  if (it != params_.end()) return it->second;
  auto f = fallback_.find(generation);
  if (f != fallback_.end()) return params_.at(f->second);
  std::vector<std::string> known;
  for (const auto& [g, p] : params_) known.push_back(g);
  throw InputError(fit_where_, "/generations", "generation '" + generation + "' (not fitted)", "one of " + comma_list(known));
}

std::string ComputeTable::fitted_generation(const std::string& generation) const {
  if (params_.count(generation)) return generation;
  auto f = fallback_.find(generation);
  if (f != fallback_.end() && params_.count(f->second)) return f->second;
  params(generation);  // throws, naming the fitted generations
  return generation;
}

std::string ComputeTable::params_origin(const std::string& generation) const {
  if (params_.count(generation)) return "fit";
  auto f = fallback_.find(generation);
  return f != fallback_.end() ? f->second + " (no rows of its own)" : "none";
}

}  // namespace racksim
