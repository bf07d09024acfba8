// The step model against published runs: leave-one-model-out or in-sample predictions, the planner's best
// layout for each published job, every record's layout pinned and priced; text and JSON (training_fit.hpp).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/planner/explain.hpp"
#include "models/planner/search.hpp"
#include "models/planner/training_fit.hpp"
#include "models/planner/training_fit_engine.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim {

using namespace fit_detail;

TrainingValidation validate_training(const std::string& rows_file, const TrainingFitOptions& o, bool lomo) {
  TrainingValidation v;
  v.rows_file = rows_file;
  v.leave_one_system_out = lomo && o.leave_one_system_out;
  v.leave_one_model_out = lomo && !v.leave_one_system_out;
  const std::vector<PublishedRun> runs = load_published_runs(rows_file);
  for (const auto& r : runs)
    if (!r.excluded.empty()) v.excluded.push_back({fmt::format("#{} {}", r.index, r.label), r.excluded});
  Engine eng(o, runs);
  for (const auto& [r, why] : eng.unpriceable) v.excluded.push_back({fmt::format("#{} {}", r->index, r->label), "cannot be priced: " + why});
  std::map<std::string, ComputeParams> shipped;
  {
    const ComputeTable t = o.compute_fit.empty() ? ComputeTable::shipped() : ComputeTable::load(ComputeTable::shipped_gpu_path(), o.compute_fit);
    for (const auto& g : kGenerations) shipped[g] = t.params(g);
  }
  if (!lomo) {
    for (const PublishedRun* r : eng.used) v.rows.push_back(eng.predict(*r, shipped.at(eng.pricer.fitted_generation(*r))));
  } else {
    // Start every left-out fit from the shipped parameters (a fit on every row).
    const Eigen::VectorXd start = phi_of(eng.ix, shipped);
    // What is held out together: a model's runs, or a system's.
    auto held = [&](const PublishedRun& r) { return v.leave_one_system_out ? r.system : r.model; };
    std::vector<std::string> models;
    for (const PublishedRun* r : eng.used)
      if (std::find(models.begin(), models.end(), held(*r)) == models.end()) models.push_back(held(*r));
    std::map<int, RowPrediction> by_index;
    for (const auto& m : models) {
      const Eigen::VectorXd phi = eng.fit([&](const PublishedRun& r) { return held(r) != m; }, start, 6);
      for (const PublishedRun* r : eng.used)
        if (held(*r) == m) by_index.emplace(r->index, eng.predict(*r, params_of(eng.ix, phi, eng.gen_index(*r))));
    }
    for (auto& [i, p] : by_index) v.rows.push_back(std::move(p));
  }
  v.groups = groups_of(v.rows, &v.overall);

  if (o.layouts) {
    // The planner's own best layout for each distinct job (its most recent record), against the published one.
    std::vector<std::string> seen;
    for (const PublishedRun* r : eng.used) {
      const std::string job = fmt::format("{} {} {} {} GPUs gbs {} x {}", r->system_label, r->model_label, r->precision, r->gpus,
                                          r->global_batch, r->seq_len);
      if (std::find(seen.begin(), seen.end(), job) != seen.end()) continue;
      seen.push_back(job);
      const ComputeParams& p = shipped.at(eng.pricer.fitted_generation(*r));
      Pricer::Env& e = eng.pricer.env(r->system, r->gpus);
      const ModelSpec& m = eng.pricer.model(*r);
      const TrainingJob tj = eng.pricer.job_of(*r);
      const SystemContext sys = eng.pricer.context(*r, p);
      SearchConstraints c;
      c.micro_batch_options = {1, 2, 4, 8};
      if (std::find(c.micro_batch_options.begin(), c.micro_batch_options.end(), r->layout.micro_batch) == c.micro_batch_options.end())
        c.micro_batch_options.push_back(r->layout.micro_batch);
      c.offload = "none";
      const SearchResult sr = search_layouts(m, tj, sys, {MeshShape{e.placement->domains_used(), e.placement->gpus_per_domain_used()}}, c,
                                             *e.comm, 1);
      LayoutCheck lc;
      lc.job = job;
      const Pricer::Priced pub = eng.pricer.price(*r, p);
      lc.published_layout = r->layout.degrees() + " mb=" + std::to_string(r->layout.micro_batch) + " " + pub.recompute;
      lc.published_tokens_per_s_per_gpu = pub.estimate.tokens_per_s_per_gpu;
      if (!sr.ranked.empty()) {
        const Candidate& best = sr.ranked.front();
        lc.best_layout = best.layout.degrees() + " mb=" + std::to_string(best.layout.micro_batch) + " " + best.layout.fsdp_text() +
                         " recompute " + best.layout.recompute.text();
        lc.best_tokens_per_s_per_gpu = best.estimate.tokens_per_s_per_gpu;
        lc.ratio = best.estimate.tokens_per_s_per_gpu / pub.estimate.tokens_per_s_per_gpu;
        Candidate published{r->layout, MeshShape{e.placement->domains_used(), e.placement->gpus_per_domain_used()}, pub.estimate, {}};
        lc.why = lc.ratio > 1 + 1e-3   ? explain_difference(best, published)
                 : lc.ratio > 1 - 1e-3 ? "the search's best is the published layout or prices the same"
                 : pub.estimate.fits   ? "the published layout is outside the search (its degrees or schedule are not searched)"
                                       : "the memory model says the published layout does not fit, so the search cannot pick it";
      } else {
        lc.why = "the search found no layout that fits";
      }
      v.layouts.push_back(lc);
    }
  }
  return v;
}

std::vector<LayoutPricing> price_every_layout(const std::string& rows_file, const TrainingFitOptions& o) {
  const std::vector<PublishedRun> runs = load_published_runs(rows_file);
  Pricer pricer(o);
  std::vector<LayoutPricing> out;
  for (PublishedRun r : runs) {
    LayoutPricing x;
    x.index = r.index;
    x.label = r.label;
    x.layout = r.layout.degrees() + " mb=" + std::to_string(r.layout.micro_batch);
    x.problem = r.layout_problem;
    if (x.problem.empty() && (r.model.empty() || r.system.empty())) x.problem = r.excluded;
    if (x.problem.empty()) {
      if (r.precision.empty()) r.precision = "bf16";
      x.precision = r.precision;
      const Pricer::Priced p = pricer.price(r, pricer.table().params(pricer.generation(r)));
      x.tokens_per_s_per_gpu = p.estimate.tokens_per_s_per_gpu;
      x.fits_in_memory = p.estimate.fits;
      x.memory = p.estimate.memory;
      x.memory_capacity = p.estimate.memory_capacity;
    }
    out.push_back(x);
  }
  return out;
}

std::string layout_pricing_text(const std::vector<LayoutPricing>& priced) {
  std::string o;
  int ok = 0, fit = 0;
  for (const auto& p : priced) {
    if (p.problem.empty()) {
      ++ok;
      fit += p.fits_in_memory ? 1 : 0;
      o += fmt::format("{:>4} {:<70} {:<42} {:<9} {:>9.0f} tok/s/GPU{}\n", p.index, p.label.substr(0, 70), p.layout.substr(0, 42), p.precision,
                       p.tokens_per_s_per_gpu,
                       p.fits_in_memory ? ""
                                        : fmt::format("  (memory model: does not fit, {:.1f} GB of {:.1f} usable)", p.memory.total() / 1e9,
                                                      p.memory_capacity / 1e9));
    } else {
      o += fmt::format("{:>4} {:<70} not pinnable: {}\n", p.index, p.label.substr(0, 70), p.problem);
    }
  }
  o += fmt::format("{} of {} records pinned and priced ({} fit in HBM by the memory model); {} cannot be pinned\n", ok, priced.size(),
                   fit, priced.size() - static_cast<std::size_t>(ok));
  return o;
}

std::string layout_pricing_to_json_text(const std::vector<LayoutPricing>& priced) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  int ok = 0, fit = 0;
  for (const auto& p : priced) {
    nlohmann::ordered_json r{{"index", p.index}, {"run", p.label}, {"layout", p.layout}};
    if (!p.problem.empty()) {
      r["not_pinnable"] = p.problem;
    } else {
      ++ok;
      fit += p.fits_in_memory ? 1 : 0;
      const MemoryBreakdown& m = p.memory;
      r["precision"] = p.precision;
      r["predicted_tokens_per_s_per_gpu"] = r6(p.tokens_per_s_per_gpu);
      r["fits_in_memory"] = p.fits_in_memory;
      r["memory_GB"] = {{"weights", r6(m.weights / 1e9)},         {"gradients", r6(m.grads / 1e9)},
                        {"optimizer", r6(m.optimizer / 1e9)},     {"activations", r6(m.activations / 1e9)},
                        {"logits", r6(m.logits / 1e9)},           {"gathered", r6(m.gathered / 1e9)},
                        {"total", r6(m.total() / 1e9)},           {"usable", r6(p.memory_capacity / 1e9)},
                        {"host_offloaded", r6(m.host_offloaded / 1e9)}};
    }
    rows.push_back(r);
  }
  nlohmann::ordered_json j;
  j["records"] = priced.size();
  j["pinned"] = ok;
  j["fit_in_memory"] = fit;
  j["rows"] = rows;
  return j.dump(2) + "\n";
}

std::string validation_to_text(const TrainingValidation& v) {
  std::string o = fmt::format("racksim plan --validate {}: {} published runs priced with their layouts pinned, {}\n", v.rows_file,
                              v.rows.size(), v.leave_one_model_out    ? "leave-one-model-out (each model predicted by a fit without it)"
                                             : v.leave_one_system_out ? "leave-one-system-out (each system predicted by a fit without it)"
                                                                      : "in-sample (the shipped fit)");
  o += fmt::format("{:>4} {:<62} {:<44} {:>9} {:>9} {:>8}\n", "#", "run", "layout", "published", "predicted", "error");
  for (const auto& r : v.rows)
    o += fmt::format("{:>4} {:<62} {:<44} {:>9.0f} {:>9.0f} {:>+7.1f}%{}\n", r.run.index, r.run.label.substr(0, 62),
                     (r.run.layout.degrees() + " mb=" + std::to_string(r.run.layout.micro_batch)).substr(0, 44),
                     r.run.tokens_per_s_per_gpu, r.predicted_tokens_per_s_per_gpu, 100 * r.error, r.fits_in_memory ? "" : "  (memory model: does not fit)");
  o += fmt::format("\n|error| of tokens/s/GPU{}:\n", v.leave_one_model_out    ? ", leave-one-model-out"
                                                    : v.leave_one_system_out ? ", leave-one-system-out"
                                                                             : "");
  o += fmt::format("  {:<58} {:>5} {:>9} {:>9} {:>9}\n", "", "runs", "median", "worst", "bias");
  auto line = [&](const GroupError& g) {
    o += fmt::format("  {:<58} {:>5} {:>8.1f}% {:>8.1f}% {:>+8.1f}%\n", g.name, g.rows, 100 * g.median_abs, 100 * g.worst_abs, 100 * g.mean_signed);
  };
  line(v.overall);
  for (const auto& g : v.groups) line(g);
  if (!v.layouts.empty()) {
    o += "\nPublished layout vs the planner's best for the same job (shipped fit):\n";
    for (const auto& l : v.layouts)
      o += fmt::format("  {}: published {} ({:.0f} tok/s/GPU predicted); planner's best {} ({:.0f}), {:+.1f}%. {}\n", l.job, l.published_layout,
                       l.published_tokens_per_s_per_gpu, l.best_layout, l.best_tokens_per_s_per_gpu, 100 * (l.ratio - 1), l.why);
  }
  o += fmt::format("\n{} records left out:\n", v.excluded.size());
  std::map<std::string, int> reasons;
  for (const auto& [label, why] : v.excluded) ++reasons[why];
  for (const auto& [why, n] : reasons) o += fmt::format("  {:>4} x {}\n", n, why);
  return o;
}

std::string validation_to_json_text(const TrainingValidation& v) {
  nlohmann::ordered_json j;
  j["rows_file"] = v.rows_file;
  j["leave_one_model_out"] = v.leave_one_model_out;
  j["leave_one_system_out"] = v.leave_one_system_out;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : v.rows)
    rows.push_back({{"index", r.run.index},
                    {"run", r.run.label},
                    {"model", r.run.model},
                    {"system", r.run.system},
                    {"precision", r.run.precision},
                    {"layout", r.run.layout.degrees()},
                    {"micro_batch", r.run.layout.micro_batch},
                    {"recompute", r.recompute},
                    {"published_tokens_per_s_per_gpu", r6(r.run.tokens_per_s_per_gpu)},
                    {"derivation", r.run.derivation},
                    {"assumptions", r.run.assumptions},
                    {"predicted_tokens_per_s_per_gpu", r6(r.predicted_tokens_per_s_per_gpu)},
                    {"error", r6(r.error)},
                    {"fits_in_memory", r.fits_in_memory},
                    {"breakdown", r.breakdown},
                    {"source", r.run.source}});
  j["rows"] = rows;
  auto g = [](const GroupError& x) {
    return nlohmann::ordered_json{{"name", x.name}, {"rows", x.rows}, {"median_abs_error", r6(x.median_abs)},
                                  {"worst_abs_error", r6(x.worst_abs)}, {"mean_error", r6(x.mean_signed)}};
  };
  j["overall"] = g(v.overall);
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& x : v.groups) groups.push_back(g(x));
  j["groups"] = groups;
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const auto& l : v.layouts)
    layouts.push_back({{"job", l.job},
                       {"published_layout", l.published_layout},
                       {"published_tokens_per_s_per_gpu", r6(l.published_tokens_per_s_per_gpu)},
                       {"best_layout", l.best_layout},
                       {"best_tokens_per_s_per_gpu", r6(l.best_tokens_per_s_per_gpu)},
                       {"best_over_published", r6(l.ratio)},
                       {"why", l.why}});
  j["layouts"] = layouts;
  nlohmann::ordered_json ex = nlohmann::ordered_json::array();
  for (const auto& [label, why] : v.excluded) ex.push_back({{"record", label}, {"why", why}});
  j["excluded"] = ex;
  return dump_json(j, 2) + "\n";
}

}  // namespace racksim
