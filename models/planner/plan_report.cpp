#include "models/planner/plan_report.hpp"

#include "models/planner/megatron_args.hpp"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/statistics.hpp"
#include "sim/core/units.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/suggest.hpp"

namespace racksim {

namespace {

double r6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double magnitude = std::ceil(std::log10(std::fabs(v)));
  const double scale = std::pow(10.0, 6 - magnitude);
  return std::round(v * scale) / scale;
}

double gb(double bytes) { return r6(bytes / units::kGB); }

nlohmann::ordered_json layout_json(const ParallelLayout& l) {
  nlohmann::ordered_json j;
  j["gpus"] = l.gpus();
  j["tp"] = l.tp;
  j["cp"] = l.cp;
  j["pp"] = l.pp;
  j["dp"] = l.dp;
  j["ep"] = l.ep;
  j["etp"] = l.etp;
  j["edp"] = l.edp();
  j["vp"] = l.virtual_stages;
  j["micro_batch"] = l.micro_batch;
  j["micro_batches"] = l.micro_batches;
  j["schedule"] = to_string(l.schedule);
  j["virtual_stages"] = l.virtual_stages;
  j["zero_stage"] = l.zero_stage;
  j["fsdp"] = l.fsdp_text();
  j["shard_group"] = l.shard_group;
  j["recompute"] = l.recompute.text();
  j["offload_optimizer"] = l.offload_optimizer;
  j["offload_activations"] = l.offload_activations;
  nlohmann::ordered_json dims = nlohmann::ordered_json::array(), shape = nlohmann::ordered_json::array();
  for (MeshDim d : l.order)
    if (l.size(d) > 1) dims.push_back(to_string(d)), shape.push_back(l.size(d));
  j["device_mesh"] = {{"dims", dims}, {"shape", shape}, {"text", l.mesh()}};
  return j;
}

nlohmann::ordered_json estimate_json(const StepEstimate& e) {
  nlohmann::ordered_json j;
  j["step_time_s"] = r6(e.step_s);
  j["tokens_per_s"] = r6(e.tokens_per_s);
  j["tokens_per_s_per_gpu"] = r6(e.tokens_per_s_per_gpu);
  j["model_tflops_per_gpu"] = r6(e.model_tflops_per_gpu);
  j["mfu"] = r6(e.mfu);
  j["fits_in_memory"] = e.fits;
  j["pipeline_layout"] = e.pp_layout;                    // Megatron's --pipeline-model-parallel-layout ("" for PP = 1)
  j["stage_layers"] = e.stage_layers;
  j["breakdown_s"] = {{"compute", r6(e.compute_s - e.recompute_s - e.overhead_s)}, {"launch_overhead", r6(e.overhead_s)},
                      {"recompute", r6(e.recompute_s)},
                      {"pipeline_bubble", r6(e.bubble_s)},        {"communication_exposed", r6(e.comm_exposed_s)},
                      {"sm_contention", r6(e.contention_s)},
                      {"optimizer", r6(e.optimizer_s)},          {"offload", r6(e.offload_s)}};
  nlohmann::ordered_json comm = nlohmann::ordered_json::array();
  for (const auto& c : e.comm) {
    comm.push_back({{"kind", c.kind},
                    {"what", c.what},
                    {"total_s", r6(c.total_s)},
                    {"exposed_s", r6(c.exposed_s)},
                    {"hidden_s", r6(std::max(0.0, c.total_s - c.exposed_s))},
                    {"sm_contention_s", r6(c.contention_s)},
                    {"bytes", r6(c.bytes)},
                    {"group_gpus", c.group},
                    {"nvlink_domains", c.domains},
                    {"algorithm", c.algorithm}});
  }
  j["communication"] = comm;
  j["memory_GB"] = {{"weights", gb(e.memory.weights)},       {"gradients", gb(e.memory.grads)},
                    {"optimizer", gb(e.memory.optimizer)},   {"activations", gb(e.memory.activations)},
                    {"logits", gb(e.memory.logits)},         {"fsdp_gathered", gb(e.memory.gathered)},
                    {"total", gb(e.memory.total())},
                    {"usable", gb(e.memory_capacity)},       {"host_offloaded", gb(e.memory.host_offloaded)},
                    {"fullest_stage", e.memory_stage}};
  return j;
}

MegatronArgs megatron_args_of(const Candidate& c, const PlanResult& p) {
  return megatron_args(c.layout, p.job, c.estimate.pp_layout, p.model_moe, p.model_hybrid);
}

nlohmann::ordered_json candidate_json(const Candidate& c, const PlanResult& p) {
  nlohmann::ordered_json j = layout_json(c.layout);
  const nlohmann::ordered_json e = estimate_json(c.estimate);
  for (auto it = e.begin(); it != e.end(); ++it) j[it.key()] = it.value();
  j["equivalent_layouts"] = c.equivalents;
  const MegatronArgs m = megatron_args_of(c, p);
  j["megatron_args"] = {{"argv", m.argv}, {"command_line", m.command_line()}, {"notes", m.notes}};
  return j;
}

std::string range(int a, int b) { return a == b ? std::to_string(a) : fmt::format("{}-{}", a, b); }

std::string pct(double x) { return fmt::format("{:.1f}%", 100 * x); }



nlohmann::ordered_json heldout_class_json(const std::optional<TrainingHeldoutClass>& c) {
  if (!c) return nullptr;
  return {{"class", c->generation + " " + (c->kind == "moe" ? "MoE" : "dense") + " models, held out by " + c->held_out},
          {"rows", c->rows},
          {"models", c->models},
          {"systems", c->systems},
          {"median_abs_pct", percent_to_tenth(c->median_abs)},
          {"p90_abs_pct", percent_to_tenth(c->p90_abs)},
          {"worst_abs_pct", percent_to_tenth(c->worst_abs)},
          {"median_signed_pct", percent_to_tenth(c->median_signed)}};
}

// The step model's held-out error (training_heldout.hpp): a model the fit had not seen, and a system
// without published runs; null without the shipped fit and calibration.
nlohmann::ordered_json heldout_json(const std::optional<PlanHeldoutError>& h) {
  if (!h) return nullptr;
  return {{"new_model", heldout_class_json(h->new_model)}, {"new_system", heldout_class_json(h->new_system)}, {"basis", h->basis}};
}

}  // namespace

std::vector<std::string> rank_map_lines(const PlanResult& plan) {
  std::vector<std::string> lines;
  std::size_t i = 0;
  while (i < plan.best_map.size()) {
    const int rack = plan.best_map[i].rack;
    std::string line = fmt::format("rack {}:", rack);
    std::string parts;
    while (i < plan.best_map.size() && plan.best_map[i].rack == rack) {
      // a run of trays that are all spare, or whose ranks continue each other
      const TrayRanks& first = plan.best_map[i];
      std::size_t j = i + 1;
      if (first.ranks.empty()) {
        while (j < plan.best_map.size() && plan.best_map[j].rack == rack && plan.best_map[j].ranks.empty()) ++j;
        parts += fmt::format("{}trays {} spare", parts.empty() ? " " : "; ", range(first.tray_in_rack, plan.best_map[j - 1].tray_in_rack));
      } else {
        auto contiguous = [](const std::vector<int>& r) { return r.back() - r.front() + 1 == static_cast<int>(r.size()); };
        if (contiguous(first.ranks))
          while (j < plan.best_map.size() && plan.best_map[j].rack == rack && !plan.best_map[j].ranks.empty() &&
                 contiguous(plan.best_map[j].ranks) && plan.best_map[j].ranks.front() == plan.best_map[j - 1].ranks.back() + 1)
            ++j;
        if (j - i > 1 || contiguous(first.ranks)) {
          parts += fmt::format("{}trays {} -> ranks {}", parts.empty() ? " " : "; ",
                               range(first.tray_in_rack, plan.best_map[j - 1].tray_in_rack),
                               range(first.ranks.front(), plan.best_map[j - 1].ranks.back()));
        } else {
          std::string rs;
          for (int r : first.ranks) rs += (rs.empty() ? "" : ",") + std::to_string(r);
          parts += fmt::format("{}tray {} -> ranks {}", parts.empty() ? " " : "; ", first.tray_in_rack, rs);
        }
      }
      i = j;
    }
    lines.push_back(line + parts);
  }
  return lines;
}

std::string plan_to_json_text(const PlanResult& p) {
  nlohmann::ordered_json j;
  j["system"] = p.system;
  j["racks"] = p.racks;
  j["gpus_available"] = p.system_gpus;
  j["gpus_per_nvlink_domain"] = p.gpus_per_domain;
  j["gpus_per_tray"] = p.gpus_per_tray;
  j["model"] = {{"id", p.model_id}, {"name", p.model_name}, {"source", p.model_source},
                {"params", r6(p.model_params)}, {"active_params", r6(p.model_active_params)}};
  j["job"] = {{"global_batch", p.job.global_batch},
              {"seq_len", p.job.seq_len},
              {"tokens_per_step", static_cast<double>(p.job.global_batch) * p.job.seq_len},
              {"precision", p.job.precision.id},
              {"moe_imbalance", r6(p.job.moe_imbalance)},
              {"moe_dispatcher", to_string(p.job.dispatcher)},
              {"ep_overlap", p.job.ep_overlap},
              {"mtp", p.job.mtp},
              {"grad_bytes", r6(p.job.grad_bytes)},
              {"memory_reserve", r6(p.job.memory_reserve)}};
  j["compute"] = {{"generation", p.generation},
                  {"peak_dense_TFLOPs", r6(p.peak_TFLOPs)},
                  {"gemm_efficiency", r6(p.gemm_efficiency)},
                  {"fitted_parameters", p.params_origin},
                  {"source", p.compute_source}};
  j["heldout_error"] = heldout_json(p.heldout);
  j["collectives"] = {{"model", "analytic"},
                      {"engine_checked_layouts", p.engine_checks.size()},
                      {"calibration", p.calibration}};
  nlohmann::ordered_json counts = nlohmann::ordered_json::array();
  for (const auto& s : p.shapes) counts.push_back(s.gpus());
  nlohmann::ordered_json rejected = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : p.search.rejected) {
    nlohmann::ordered_json ex = nlohmann::ordered_json::array();
    for (const auto& e : p.search.examples)
      if (e.reason == reason) ex.push_back({{"layout", e.layout}, {"detail", e.detail}});
    rejected[reason] = {{"count", n}, {"why", rejection_text(reason)}, {"examples", ex}};
  }
  j["search"] = {{"gpu_counts", counts},
                 {"mesh_orders_considered", p.search.considered},
                 {"layouts_screened", p.search.screened},
                 {"layouts_priced", p.search.evaluated},
                 {"layouts_cut_by_collectives", p.search.cut_by_comm},
                 {"rejected", rejected}};
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < p.search.ranked.size(); ++i) {
    nlohmann::ordered_json l = candidate_json(p.search.ranked[i], p);
    l["rank"] = i + 1;
    if (i < p.engine_checks.size()) {
      const EngineCheck& ec = p.engine_checks[i];
      nlohmann::ordered_json items = nlohmann::ordered_json::array();
      for (const auto& it : ec.items)
        items.push_back({{"op", it.op}, {"algorithm", it.algorithm}, {"group_gpus", it.group_gpus}, {"groups_at_once", it.groups},
                         {"bytes", r6(it.bytes)}, {"analytic_s", r6(it.analytic_s)}, {"engine_s", r6(it.engine_s)}});
      l["engine_check"] = {{"analytic_step_time_s", r6(ec.analytic_step_s)}, {"engine_step_time_s", r6(ec.engine_step_s)},
                           {"cross_domain_collectives", items}};
    }
    if (i < p.failures.size()) {
      const FailureImpact& f = p.failures[i];
      l["tray_failure"] = {{"tray_gpus", f.tray_gpus},
                           {"job_gpus_stopped", f.job_gpus},
                           {"replica_gpus", f.replica_gpus},
                           {"replicas_hit", f.replicas_hit},
                           {"blast_radius_gpus", f.blast_radius_gpus},
                           {"spare_trays_per_domain", f.spare_trays_per_domain},
                           {"runs_on_spares", f.runs_on_spares}};
    }
    layouts.push_back(l);
  }
  j["layouts"] = layouts;
  nlohmann::ordered_json map = nlohmann::ordered_json::array();
  for (const auto& t : p.best_map) map.push_back({{"rack", t.rack}, {"tray", t.tray_in_rack}, {"ranks", t.ranks}});
  j["best"] = {{"explanation", p.explanation},
               {"runner_up_rank", p.runner_up >= 0 ? p.runner_up + 1 : 0},
               {"rank_map_text", rank_map_lines(p)},
               {"rank_map", map}};
  nlohmann::ordered_json degraded = nlohmann::ordered_json::array();
  for (const auto& d : p.degraded) {
    nlohmann::ordered_json x{{"scenario", d.name}, {"gpus_per_domain", d.gpus_per_domain}, {"best_still_fits", d.best_still_fits},
                             {"note", d.note}};
    if (d.best) {
      x["layout"] = candidate_json(*d.best, p);
      x["slowdown"] = r6(d.slowdown);
    }
    degraded.push_back(x);
  }
  j["degraded"] = degraded;
  nlohmann::ordered_json cmp = nlohmann::ordered_json::array();
  for (const auto& c : p.comparison) {
    nlohmann::ordered_json x{{"system", c.system}, {"racks", c.racks}, {"gpus", c.gpus}};
    if (c.best) x["layout"] = candidate_json(*c.best, p);
    else x["note"] = c.note;
    cmp.push_back(x);
  }
  j["comparison"] = cmp;
  return dump_json(j, 2) + "\n";
}

namespace {
std::string plan_heldout_text(const PlanResult& p) {
  if (!p.heldout) return "";
  auto line = [](const char* what, const TrainingHeldoutClass& c) {
    return fmt::format("held-out error, {}: {:.1f} % median, {:.1f} % 90th percentile, {:.1f} % worst (tokens/s/GPU {:+.1f} % "
                       "vs published, median) over {} published run(s) of {} {} models ({}) on {}\n",
                       what, percent_to_tenth(c.median_abs), percent_to_tenth(c.p90_abs), percent_to_tenth(c.worst_abs), percent_to_tenth(c.median_signed), c.rows, c.generation,
                       c.kind == "moe" ? "MoE" : "dense", comma_list(c.models), comma_list(c.systems));
  };
  std::string o;
  if (p.heldout->new_model) o += line("a model the fit had not seen", *p.heldout->new_model);
  if (p.heldout->new_system) o += line(("a system without published runs (as " + p.system + ")").c_str(), *p.heldout->new_system);
  return o;
}
}  // namespace

std::string plan_to_table_text(const PlanResult& p) {
  std::string o;
  o += fmt::format("racksim plan: {} ({:.1f} B parameters, {:.1f} B active) on {} x{} {}(s), {} GPUs\n", p.model_id,
                   p.model_params / 1e9, p.model_active_params / 1e9, p.system, p.racks, p.rack_unit, p.system_gpus);
  o += fmt::format("job: global batch {} x {} tokens = {:.2f} M tokens per step, {}; GPU: {:.0f} TFLOP/s dense x {:.3f} GEMM efficiency ({})\n",
                   p.job.global_batch, p.job.seq_len, p.job.global_batch * static_cast<double>(p.job.seq_len) / 1e6, p.job.precision.id,
                   p.peak_TFLOPs, p.gemm_efficiency,
                   p.params_origin == "fit" ? p.generation + " fit" : p.generation + ": the fit of " + p.params_origin);
  std::string counts;
  for (const auto& s : p.shapes) counts += (counts.empty() ? "" : ",") + std::to_string(s.gpus());
  o += fmt::format("searched GPU counts {}: {} layouts fit, {} priced in full ({} mesh orders), {} set aside by their collectives' least cost\n",
                   counts, p.search.screened, p.search.evaluated, p.search.considered, p.search.cut_by_comm);
  for (const auto& [reason, n] : p.search.rejected) o += fmt::format("  rejected {:>6}: {}\n", n, rejection_text(reason));
  o += plan_heldout_text(p);
  o += "\n";
  if (!p.engine_checks.empty())
    o += fmt::format("the first {} re-priced by the discrete-event engine (cross-domain collectives, all groups at once) and re-ranked (*)\n",
                     p.engine_checks.size());
  o += fmt::format("{:>3} {:>5} {:>3} {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>7} {:>8} {:>6} {:>9} {:>7} {:>9} {:>10} {:>6} {:>8} {:>8} {:>7} {:>4}\n",
                   "#", "GPUs", "TP", "CP", "PP", "DP", "EP", "ETP", "VP", "mb x m", "schedule", "ZeRO", "recompute", "offload",
                   "step s", "tok/s/GPU", "MFU", "comm s", "bubble s", "mem GB", "alt");
  for (std::size_t i = 0; i < p.search.ranked.size(); ++i) {
    const ParallelLayout& l = p.search.ranked[i].layout;
    const StepEstimate& e = p.search.ranked[i].estimate;
    const std::string sched = l.pp == 1 ? "-" : to_string(l.schedule);
    const std::size_t alt = p.search.ranked[i].equivalents.size();
    const std::string rc = l.recompute.granularity == Recompute::selective ? "selective" : l.recompute.text();
    o += fmt::format("{:>3} {:>5} {:>3} {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>7} {:>8} {:>6} {:>9} {:>7} {:>9.3f} {:>10.0f} {:>6} {:>8.3f} {:>8.3f} {:>7.1f} {:>4}\n",
                     fmt::format("{}{}", i + 1, i < p.engine_checks.size() ? "*" : ""), l.gpus(), l.tp, l.cp, l.pp, l.dp, l.ep, l.etp,
                     l.virtual_stages, fmt::format("{}x{}", l.micro_batch, l.micro_batches), sched, l.fsdp_text().substr(0, 6), rc,
                     l.offload_optimizer ? (l.offload_activations ? "opt+act" : "opt") : (l.offload_activations ? "act" : "-"),
                     e.step_s, e.tokens_per_s_per_gpu, pct(e.mfu), e.comm_exposed_s, e.bubble_s, e.memory.total() / units::kGB,
                     alt > 0 ? fmt::format("+{}", alt) : "");
  }
  o += "DeviceMesh of #1: " + p.search.ranked.front().layout.mesh() + "; recompute " + p.search.ranked.front().layout.recompute.text();
  if (!p.search.ranked.front().estimate.pp_layout.empty())
    o += "; --pipeline-model-parallel-layout " + p.search.ranked.front().estimate.pp_layout;
  o += "\n";
  {
    const MegatronArgs m = megatron_args_of(p.search.ranked.front(), p);
    o += "Megatron-LM arguments of #1: " + m.command_line() + "\n";
    for (const auto& n : m.notes) o += "  (" + n + ")\n";
  }
  if (!p.search.ranked.front().equivalents.empty()) {
    o += "alt: equal-time variants doing the same work per GPU, e.g. for #1: " + p.search.ranked.front().equivalents.front() + "\n";
  }
  const Candidate& best = p.search.ranked.front();
  o += "\nBest layout, rank -> tray -> rack:\n";
  for (const auto& line : rank_map_lines(p)) o += "  " + line + "\n";
  o += "\nWhy:\n  " + p.explanation + "\n";
  o += "\nCommunication of the best layout (per step):\n";
  for (const auto& c : best.estimate.comm)
    o += fmt::format("  {:<3} {:>9.3f} s total {:>9.3f} s exposed  group {:>4} GPUs in {} domain(s), {}: {}\n", c.kind, c.total_s,
                     c.exposed_s, c.group, c.domains, c.algorithm, c.what);
  const MemoryBreakdown& m = best.estimate.memory;
  o += fmt::format("Memory per GPU (stage {}): weights {:.1f} + gradients {:.1f} + optimizer {:.1f} + activations {:.1f} + logits {:.1f}{} = {:.1f} GB of {:.1f} usable{}\n",
                   best.estimate.memory_stage, m.weights / units::kGB, m.grads / units::kGB, m.optimizer / units::kGB,
                   m.activations / units::kGB, m.logits / units::kGB,
                   m.gathered > 0 ? fmt::format(" + FSDP units gathered {:.1f}", m.gathered / units::kGB) : "",
                   m.total() / units::kGB, best.estimate.memory_capacity / units::kGB,
                   m.host_offloaded > 0 ? fmt::format(" ({:.1f} GB offloaded to host)", m.host_offloaded / units::kGB) : "");
  if (!p.failures.empty()) {
    const FailureImpact& f = p.failures.front();
    o += fmt::format("\nTray failure: a tray takes {} GPUs; the synchronous job stops on all {}; with replica-level restart {} replica(s) of {} GPUs ({} GPUs) wait; {} spare tray(s) per NVLink domain{}.\n",
                     f.tray_gpus, f.job_gpus, f.replicas_hit, f.replica_gpus, f.blast_radius_gpus, f.spare_trays_per_domain,
                     f.runs_on_spares ? ": the layout restarts unchanged on a spare" : "");
    for (const auto& d : p.degraded) {
      if (d.best)
        o += fmt::format("  {}: {:.3f} s per step ({:+.1f}%), {} on {} GPUs: {}\n", d.name, d.best->estimate.step_s, 100 * d.slowdown,
                         d.best->layout.degrees(), d.best->layout.gpus(), d.note);
      else
        o += fmt::format("  {}: {}\n", d.name, d.note);
    }
  }
  if (!p.comparison.empty()) {
    o += fmt::format("\nSame model on {} GPUs:\n", best.layout.gpus());
    for (const auto& c : p.comparison) {
      if (c.best)
        o += fmt::format("  {:<14} x{:<3} {:>9.3f} s/step {:>8.0f} tok/s/GPU  MFU {:>6}  {} {} mb={} {}\n", c.system, c.racks,
                         c.best->estimate.step_s, c.best->estimate.tokens_per_s_per_gpu, pct(c.best->estimate.mfu),
                         c.best->layout.degrees(), c.best->layout.mesh(), c.best->layout.micro_batch,
                         c.best->layout.pp > 1 ? to_string(c.best->layout.schedule) : "");
      else
        o += fmt::format("  {:<14} {}\n", c.system, c.note);
    }
  }
  return o;
}

}  // namespace racksim
