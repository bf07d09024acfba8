// The compute fit of the step model on published runs (fit_training) and the files it writes
// (compute-fit.json, fit-report.md); the machinery is in training_fit_engine.cpp.
#include "models/planner/training_fit.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/planner/training_fit_engine.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/statistics.hpp"

namespace racksim {

using namespace fit_detail;
namespace fs = std::filesystem;

TrainingFitResult fit_training(const std::string& rows_file, const TrainingFitOptions& o) {
  TrainingFitResult res;
  res.rows_file = rows_file;
  res.runs = load_published_runs(rows_file);
  Engine eng(o, res.runs);
  if (!eng.unpriceable.empty()) {  // a fit names the row it cannot use (racksim plan --validate lists them and goes on)
    const auto& [r, why] = eng.unpriceable.front();
    throw InputError(rows_file, "/" + std::to_string(r->index), r->label, "a run racksim can price (" + why + ")");
  }
  if (eng.used.empty()) throw InputError(rows_file, "", "no usable run", "published runs with a throughput racksim can price");
  const Eigen::VectorXd phi = eng.fit([](const PublishedRun&) { return true; }, start_vector(eng.ix), 12, &res.outer_iterations, &res.row_sigma, &res.jobs);
  for (int g = 0; g < 2; ++g) {
    ComputeParams p = params_of(eng.ix, phi, g);
    p.source = fmt::format("racksim plan --fit {} (models/planner/training_fit.cpp)", fs::path(rows_file).filename().string());
    res.params[kGenerations[static_cast<std::size_t>(g)]] = p;
  }
  for (const PublishedRun* r : eng.used) res.fitted.push_back(eng.predict(*r, res.params.at(eng.pricer.fitted_generation(*r))));
  {
    // The coefficients depend on the parameters alone (the GPU is in each point's features).
    for (std::size_t i = 0; i < eng.probes.size(); ++i) {
      const Coefficients c = coefficients_of(res.params.at(kGenerations[static_cast<std::size_t>(eng.probes[i].generation)]));
      res.probe_errors.push_back({eng.probes[i].label, probe_time_s(c, eng.probe_features[i]) / eng.probes[i].measured_s - 1});
    }
  }
  res.priors = prior_descriptions();
  std::vector<double> a;
  for (const auto& r : res.fitted) a.push_back(std::fabs(r.error)), res.worst_abs = std::max(res.worst_abs, std::fabs(r.error));
  res.median_abs = median(a);
  return res;
}

std::string fit_to_json_text(const TrainingFitResult& fit) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["description"] =
      "Compute parameters of the planner's step model per GPU generation, fitted on published training runs and the H200 GEMM "
      "probe (calibrate/training/README.md). Rebuild: calibrate/training/fit.sh. Do not edit by hand.";
  j["produced_by"] = "racksim plan --fit calibrate/training/published_training_throughput.json --fit-out calibrate/training/compute-fit.json";
  nlohmann::ordered_json gens;
  for (const auto& [g, p] : fit.params) {
    nlohmann::ordered_json e;
    nlohmann::ordered_json ge;
    for (const auto& [d, v] : p.gemm_efficiency) ge[d] = r6(v);
    e["gemm_efficiency"] = ge;
    e["grouped_gemm_factor"] = r6(p.grouped_gemm_factor);
    e["attention_efficiency"] = r6(p.attention_efficiency);
    e["ssm_efficiency"] = r6(p.ssm_efficiency);
    e["hbm_efficiency"] = r6(p.hbm_efficiency);
    e["gemm_overhead_us"] = r6(p.gemm_overhead_s * 1e6);
    e["block_overhead_us"] = r6(p.block_overhead_s * 1e6);
    e["moe_block_overhead_us"] = r6(p.moe_block_overhead_s * 1e6);
    e["pp_transfer_overhead_us"] = r6(p.pp_transfer_overhead_s * 1e6);
    e["tp_exposed"] = r6(p.tp_exposed);
    e["ep_exposed_overlapped"] = r6(p.ep_exposed_overlapped);
    e["source"] = p.source;
    int rows = 0;
    std::vector<double> a;
    double worst = 0;
    for (const auto& r : fit.fitted)
      if (r.generation == g) ++rows, a.push_back(std::fabs(r.error)), worst = std::max(worst, std::fabs(r.error));
    e["fit"] = {{"rows", rows}, {"median_abs_error", r6(median(a))}, {"worst_abs_error", r6(worst)}};
    gens[g] = e;
  }
  j["generations"] = gens;
  // Generations without published runs take another's fit: Blackwell Ultra Blackwell's, Ampere Hopper's
  // (models/workload/gpu_compute.json says why each is a fair stand-in).
  j["fallbacks"] = {{"ampere", "hopper"}, {"blackwell-ultra", "blackwell"}};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : fit.fitted) rows.push_back(fmt::format("#{} {}", r.run.index, r.run.label));
  j["rows"] = rows;
  return dump_json(j, 2) + "\n";
}

std::string fit_summary_text(const TrainingFitResult& fit) {
  std::string o = fmt::format("fit on {} published runs of {} jobs ({} records in {}), {} kernel probe points (GEMM, grouped GEMM, attention, elementwise), {} outer iterations\n",
                              fit.fitted.size(), fit.jobs, fit.runs.size(), fit.rows_file, fit.probe_errors.size(), fit.outer_iterations);
  o += fmt::format("the runs' scatter about the model (job-weighted RMS log error, the unit of their residuals): {:.3f}\n", fit.row_sigma);
  o += fmt::format("in-sample |error| of tokens/s/GPU: median {:.1f}%, worst {:.1f}%\n", 100 * fit.median_abs, 100 * fit.worst_abs);
  return o;
}

std::string fit_report_markdown(const TrainingFitResult& fit) {
  std::string o = "# Compute fit of the training step model\n\n";
  o += "Produced by `calibrate/training/fit.sh` (`racksim plan --fit " + fs::path(fit.rows_file).filename().string() +
       "`); do not edit by hand. Parameters: `compute-fit.json`; what they mean: docs/planner.md.\n\n";
  o += fit_summary_text(fit) + "\n";
  o += "## Parameters\n\n| parameter |";
  for (const auto& [g, p] : fit.params) o += " " + g + " |";
  o += "\n|---|";
  for (std::size_t i = 0; i < fit.params.size(); ++i) o += "---|";
  o += "\n";
  auto row = [&](const std::string& name, const std::function<std::string(const ComputeParams&)>& f) {
    o += "| " + name + " |";
    for (const auto& [g, p] : fit.params) o += " " + f(p) + " |";
    o += "\n";
  };
  for (const std::string d : {"bf16", "fp8", "fp4"})
    row("GEMM efficiency " + d, [&](const ComputeParams& p) { return p.gemm_efficiency.count(d) ? fmt::format("{:.3f}", p.gemm_efficiency.at(d)) : "-"; });
  row("grouped GEMM factor", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.grouped_gemm_factor); });
  row("attention efficiency", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.attention_efficiency); });
  row("SSD scan efficiency", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.ssm_efficiency); });
  row("HBM efficiency (elementwise)", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.hbm_efficiency); });
  row("per GEMM launch (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.gemm_overhead_s * 1e6); });
  row("per layer block and pass (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.block_overhead_s * 1e6); });
  row("per MoE block and pass (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.moe_block_overhead_s * 1e6); });
  row("per pipeline transfer (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.pp_transfer_overhead_s * 1e6); });
  row("TP traffic exposed", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.tp_exposed); });
  row("overlapped EP traffic exposed", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.ep_exposed_overlapped); });
  o += "\n## Priors\n\n";
  for (const auto& p : fit.priors) o += "* " + p + "\n";
  o += "\n## Kernel probe points (calibrate/data, or --fit-probes): GEMMs, grouped GEMMs, attention, elementwise\n\n| probe | predicted / measured - 1 |\n|---|---|\n";
  for (const auto& [label, e] : fit.probe_errors) o += fmt::format("| {} | {:+.1f}% |\n", label, 100 * e);
  o += "\n## Runs used (in-sample)\n\n| # | run | layout | recompute | published tok/s/GPU | fitted | error |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : fit.fitted)
    o += fmt::format("| {} | {} | {} mb={} | {} | {:.0f} | {:.0f} | {:+.1f}% |\n", r.run.index, r.run.label, r.run.layout.degrees(),
                     r.run.layout.micro_batch, r.recompute, r.run.tokens_per_s_per_gpu, r.predicted_tokens_per_s_per_gpu, 100 * r.error);
  o += "\n## Records left out\n\n| # | record | why |\n|---|---|---|\n";
  for (const auto& r : fit.runs)
    if (!r.excluded.empty()) o += fmt::format("| {} | {} | {} |\n", r.index, r.label, r.excluded);
  return o;
}

}  // namespace racksim
