// racksim plan: which TP x CP x PP x DP layout (with MoE layers' EP x ETP folded in) trains a model
// fastest on N racks, whether it fits, why it wins, what a tray failure costs, and how other systems
// compare (models/planner). --validate FILE prices every published run of a file like
// calibrate/training/published_training_throughput.json and reports predicted vs published;
// --fit FILE refits the compute parameters on it (calibrate/training/README.md).
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "models/planner/plan.hpp"
#include "models/planner/plan_report.hpp"
#include "models/planner/training_fit.hpp"
#include "models/planner/training_heldout.hpp"
#include "sim/core/errors.hpp"

namespace racksim::cli {

namespace {

struct PlanOptions {
  PlanRequest request;
  std::string format = "table";
  std::optional<int> tp, cp, pp, dp, ep, etp, vp, edp, tp_x_ep, micro_batch, fsdp;
  std::string schedule = "auto", zero = "auto", recompute = "auto", grad_dtype = "fp32", dispatcher = "alltoall",
              mesh_order = "auto", pp_layout = "balanced", compare = "gb200-nvl72,gb300-nvl72,hgx-b200";
  bool no_failures = false, force_balanced = false, ep_overlap = false, no_mtp = false;
  std::string validate, fit, fit_out, fit_report, heldout_table;
  std::vector<std::string> fit_probes;
  bool in_sample = false, layouts = false, every_layout = false, leave_one_system_out = false;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  if (text == "none" || text.empty()) return out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) throw InputError("--fit-out", "", "'" + path + "' (cannot be written)", "a writable file path");
  f << text;
}

// An option of one mode given in another would be silently ignored: a job's options (--system, --tp, ...)
// with --validate or --fit, which price the file's own runs, and the validation's or the fit's options
// without them. Refused naming the option and the mode.
void refuse_options_of_another_mode(const CLI::App& cmd, const PlanOptions& o) {
  static const char* const job_options[] = {
      "--system", "--racks", "--model", "--global-batch", "--seq-len", "--gpus", "--top", "--engine-top", "--tp", "--cp",
      "--pp", "--dp", "--ep", "--etp", "--edp", "--vp", "--pp-layout", "--tp-x-ep", "--micro-batch", "--mesh-order",
      "--schedule", "--zero", "--fsdp", "--recompute", "--offload", "--precision", "--moe-imbalance", "--force-balanced",
      "--moe-dispatcher", "--ep-overlap", "--no-mtp", "--grad-dtype", "--memory-reserve", "--compare", "--no-failures"};
  const bool file_mode = !o.validate.empty() || !o.fit.empty();
  const std::string mode = !o.fit.empty() ? "--fit" : "--validate";
  if (!o.validate.empty() && !o.fit.empty())
    throw InputError("--fit", "", "'" + o.fit + "' with --validate", "one of --fit FILE (refit) and --validate FILE (price the runs)");
  if (file_mode) {
    for (const char* name : job_options)
      if (cmd.count(name) > 0)
        throw InputError(name, "", "with " + mode,
                         "no job options with " + mode + ": it prices each published run with the layout, batch, precision and "
                         "system the file gives (leave " + std::string(name) + " out, or drop " + mode + " to plan one job)");
    if (!o.fit.empty())
      for (const char* name : {"--in-sample", "--leave-one-system-out", "--every-layout", "--layouts", "--heldout-table", "--format"})
        if (cmd.count(name) > 0)
          throw InputError(name, "", "with --fit",
                           std::string(name) == "--format" ? "none: --fit writes its parameters as JSON (to --fit-out, or printed)"
                                                           : "with --validate FILE (--fit refits and reports in sample)");
  } else {
    for (const char* name : {"--in-sample", "--leave-one-system-out", "--every-layout", "--layouts", "--fit-out", "--fit-report"})
      if (cmd.count(name) > 0)
        throw InputError(name, "", "without --validate or --fit",
                         std::string(name) == "--fit-out" || std::string(name) == "--fit-report" ? "with --fit FILE" : "with --validate FILE");
  }
  if (!o.validate.empty())
    for (const char* name : {"--fit-out", "--fit-report"})
      if (cmd.count(name) > 0) throw InputError(name, "", "with --validate", "with --fit FILE");
}

}  // namespace

static void add_plan_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand("plan", "rank Megatron layouts (TP x CP x PP x DP, EP x ETP folded in, VP) of a model's training step on a system");
  PlanRequest& r = o->request;
  cmd->add_option("--system", r.system, "system id (racksim systems) or topology JSON file")->capture_default_str();
  cmd->add_option("--racks", r.racks, "racks (default: the system's)");
  cmd->add_option("--model", r.model, "model preset (models/workload/presets) or model JSON file");
  cmd->add_option("--global-batch", r.job.global_batch, "sequences per training step");
  cmd->add_option("--seq-len", r.job.seq_len, "tokens per sequence");
  cmd->add_option("--gpus", r.gpus, "GPUs to use (default: whole trays, from every GPU of each NVLink domain down to half)");
  add_format_option(*cmd, o->format, "table", {"table", "json"});
  cmd->add_option("--top", r.top, "layouts to report")->capture_default_str();
  cmd->add_option("--engine-top", r.engine_top, "of those, how many the discrete-event engine re-prices (0: none)")
      ->capture_default_str();
  cmd->add_option("--tp", o->tp, "fix tensor parallelism");
  cmd->add_option("--cp", o->cp, "fix context parallelism");
  cmd->add_option("--pp", o->pp, "fix pipeline stages");
  cmd->add_option("--dp", o->dp, "fix data parallelism (attention layers; GPUs = TP x CP x PP x DP)");
  cmd->add_option("--ep", o->ep, "fix expert parallelism (folded into TP x CP x DP)");
  cmd->add_option("--etp", o->etp, "fix expert tensor parallelism");
  cmd->add_option("--edp", o->edp, "fix expert data parallelism (TP x CP x DP / (EP x ETP))");
  cmd->add_option("--vp", o->vp, "fix the virtual-pipeline degree (1: 1F1B; > 1: interleaved)");
  cmd->add_option("--pp-layout", o->pp_layout,
                  "how layers split into the PP x VP chunks: balanced (by time; the report prints it as Megatron's "
                  "--pipeline-model-parallel-layout)|uniform (Megatron's default)|a Megatron layout string such as Et*4|(t*4|)*14tmL")
      ->capture_default_str();
  cmd->add_option("--tp-x-ep", o->tp_x_ep, "fix the product TP x EP (e.g. 64: one rack's model-parallel group)");
  cmd->add_option("--micro-batch", o->micro_batch, "fix sequences per micro-batch");
  cmd->add_option("--mesh-order", o->mesh_order, "Megatron rank order: auto|pp-outer (tp-cp-dp-pp)|dp-outer (tp-cp-pp-dp)")
      ->check(CLI::IsMember({"auto", "pp-outer", "dp-outer"}));
  cmd->add_option("--schedule", o->schedule, "pipeline schedule: auto|1f1b|interleaved")
      ->check(CLI::IsMember({"auto", "1f1b", "interleaved"}));
  cmd->add_option("--zero", o->zero, "ZeRO stage: auto (1-3)|0|1 (distributed optimizer)|2|3 (FSDP)")
      ->check(CLI::IsMember({"auto", "0", "1", "2", "3"}));
  cmd->add_option("--fsdp", o->fsdp, "FSDP (ZeRO-3) shard group: 0 = all DP x CP ranks, N = HSDP with N-rank shard groups");
  cmd->add_option("--recompute", o->recompute,
                  "activation recompute: auto (the least that fits)|none|selective|full|selective:<modules>|full:block:<n>|full:uniform:<n>");
  cmd->add_option("--offload", r.constraints.offload, "offload to host memory: none|optimizer|activations|both|auto")
      ->check(CLI::IsMember({"none", "optimizer", "activations", "both", "auto"}))
      ->capture_default_str();
  cmd->add_option("--precision", r.precision, "precision recipe: bf16|fp8-ds|fp8-cs|fp8-block|mxfp8|nvfp4")->capture_default_str();
  cmd->add_option("--moe-imbalance", r.job.moe_imbalance, "tokens on the busiest expert-parallel rank / mean (assumption)")
      ->capture_default_str();
  cmd->add_flag("--force-balanced", o->force_balanced, "force-balanced MoE routing (imbalance 1)");
  cmd->add_option("--moe-dispatcher", o->dispatcher, "MoE token dispatcher: alltoall|deepep|hybridep")
      ->check(CLI::IsMember({"alltoall", "deepep", "hybridep"}))
      ->capture_default_str();
  cmd->add_flag("--ep-overlap", o->ep_overlap, "the recipe overlaps the EP all-to-all with computation (Megatron then needs EP > 1, no full recompute and, with PP > 1, a virtual pipeline: the search keeps to that)");
  cmd->add_flag("--no-mtp", o->no_mtp, "do not train the model's multi-token-prediction modules");
  cmd->add_option("--grad-dtype", o->grad_dtype, "gradient accumulation and reduction: fp32|bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--memory-reserve", r.job.memory_reserve, "HBM fraction kept free (CUDA context, NCCL, fragmentation)")
      ->capture_default_str();
  cmd->add_option("--compare", o->compare, "systems to compare for the same GPU count, comma-separated, or none")
      ->capture_default_str();
  cmd->add_flag("--no-failures", o->no_failures, "skip the tray-failure analysis");
  cmd->add_option("--calibration", r.calibration, "collective calibration: none, default, or a file")->capture_default_str();
  cmd->add_option("--compute-fit", r.compute_fit, "fitted compute parameters (default calibrate/training/compute-fit.json)");
  cmd->add_option("--validate", o->validate,
                  "price every published run of this file (as calibrate/training/published_training_throughput.json) and "
                  "report predicted vs published, leave-one-model-out");
  cmd->add_flag("--in-sample", o->in_sample, "with --validate: use the shipped fit for every row instead of leaving its model out");
  cmd->add_flag("--leave-one-system-out", o->leave_one_system_out,
                "with --validate: hold out each system instead of each model (Blackwell predicted from a fit on Hopper's runs)");
  cmd->add_flag("--every-layout", o->every_layout,
                "with --validate: pin and price every record's layout (recipes without a measurement too) with the shipped fit");
  cmd->add_flag("--layouts", o->layouts, "with --validate: also search each job's best layout and compare the published one with it");
  cmd->add_option("--heldout-table", o->heldout_table,
                  "with --validate: also write the held-out error table (leave one model out and one system out, per GPU "
                  "generation and dense or MoE) that plans quote, to this file (calibrate/training/heldout_errors.json)");
  cmd->add_option("--fit", o->fit, "fit the compute parameters on this file's published runs (and the kernel probes in calibrate/data: H200s and an H100; or --fit-probes)");
  cmd->add_option("--fit-out", o->fit_out, "with --fit: write the parameters here (default: print them)");
  cmd->add_option("--fit-report", o->fit_report, "with --fit: write the Markdown report (rows used and left out, errors) here");
  cmd->add_option("--fit-probes", o->fit_probes,
                  "with --fit or --validate (held out): a probe directory (DIR or DIR=SYSTEM) of a Hopper or Blackwell GPU (calibrate/run_probes.sh's "
                  "output, gemm_bf16.jsonl and/or compute_torch.jsonl) the fit reads instead of the shipped ones; each point "
                  "fits its GPU's generation (repeatable)");
  cmd->callback([&global, o, cmd] {
    PlanRequest req = o->request;
    req.topology_dir = global.topology_dir;
    refuse_options_of_another_mode(*cmd, *o);
    if (!o->heldout_table.empty() && (o->validate.empty() || o->every_layout))
      throw InputError("--heldout-table", "", "'" + o->heldout_table + "'" + (o->every_layout ? " with --every-layout" : " without --validate"),
                       "with --validate FILE (and without --every-layout)");
    if (!o->fit_probes.empty() && ((o->validate.empty() && o->fit.empty()) || o->in_sample || o->every_layout))
      throw InputError("--fit-probes", "", "'" + o->fit_probes.front() + "'" +
                           (o->in_sample ? " with --in-sample" : o->every_layout ? " with --every-layout" : " without --fit or --validate"),
                       "with --fit FILE or --validate FILE (a fit it runs: not --in-sample or --every-layout, which use the shipped one)");
    if (!o->validate.empty() || !o->fit.empty()) {
      TrainingFitOptions f;
      f.probe_dirs = o->fit_probes;
      f.topology_dir = global.topology_dir;
      f.calibration = req.calibration;
      f.compute_fit = req.compute_fit;
      f.layouts = o->layouts;
      f.leave_one_system_out = o->leave_one_system_out;
      if (o->leave_one_system_out && o->in_sample)
        throw InputError("--leave-one-system-out", "", "with --in-sample", "one of them (in-sample uses the shipped fit for every row)");
      if (!o->fit.empty()) {
        const TrainingFitResult fit = fit_training(o->fit, f);
        if (o->fit_out.empty()) std::cout << fit_to_json_text(fit);
        else write_file(o->fit_out, fit_to_json_text(fit));
        if (!o->fit_report.empty()) write_file(o->fit_report, fit_report_markdown(fit));
        if (!o->fit_out.empty()) std::cout << fit_summary_text(fit);
        return;
      }
      if (o->every_layout) {
        const std::vector<LayoutPricing> priced = price_every_layout(o->validate, f);
        std::cout << (o->format == "json" ? layout_pricing_to_json_text(priced) : layout_pricing_text(priced));
        return;
      }
      if (!o->heldout_table.empty() && o->in_sample)
        throw InputError("--heldout-table", "", "with --in-sample", "held-out predictions (leave out --in-sample)");
      const TrainingValidation v = validate_training(o->validate, f, !o->in_sample);
      if (!o->heldout_table.empty()) {
        TrainingFitOptions by_model = f, by_system = f;
        by_model.leave_one_system_out = false;
        by_system.leave_one_system_out = true;
        const TrainingValidation m = o->leave_one_system_out ? validate_training(o->validate, by_model, true) : v;
        const TrainingValidation s = o->leave_one_system_out ? v : validate_training(o->validate, by_system, true);
        write_file(o->heldout_table, training_heldout_to_json_text(training_heldout_table(m, s)));
      }
      std::cout << (o->format == "json" ? validation_to_json_text(v) : validation_to_text(v));
      return;
    }
    if (req.model.empty()) throw InputError("--model", "", "(missing)", "a model preset or file (or --validate / --fit FILE)");
    if (req.job.global_batch == 0 && req.job.seq_len == 0)
      throw InputError("--global-batch", "", "(missing)", "sequences per step (and --seq-len, tokens per sequence)");
    SearchConstraints& c = req.constraints;
    c.tp = o->tp, c.cp = o->cp, c.pp = o->pp, c.dp = o->dp, c.ep = o->ep, c.etp = o->etp, c.vp = o->vp, c.edp = o->edp;
    c.tp_times_ep = o->tp_x_ep;
    c.pp_layout = o->pp_layout == "balanced" ? "" : o->pp_layout;
    if (o->micro_batch) {
      if (*o->micro_batch < 1) throw InputError("--micro-batch", "", std::to_string(*o->micro_batch), "an integer >= 1");
      c.micro_batch = o->micro_batch;
      c.micro_batch_options = {*o->micro_batch};
    }
    if (o->vp && *o->vp > 1) c.schedule = PipelineSchedule::interleaved;
    if (o->schedule == "1f1b") c.schedule = PipelineSchedule::one_f_one_b;
    if (o->schedule == "interleaved") c.schedule = PipelineSchedule::interleaved;
    if (o->mesh_order != "auto") c.pp_outermost = o->mesh_order == "pp-outer";
    if (o->zero != "auto") c.zero_stage = std::stoi(o->zero);
    if (o->fsdp) {
      c.zero_stage = 3;
      c.shard_group = *o->fsdp;
    }
    if (o->recompute != "auto") c.recompute = parse_recompute(o->recompute, "--recompute");
    req.job.grad_bytes = o->grad_dtype == "bf16" ? 2 : 4;
    if (o->force_balanced) req.job.moe_imbalance = 1;
    req.job.dispatcher = o->dispatcher == "deepep" ? MoeDispatcher::deepep : o->dispatcher == "hybridep" ? MoeDispatcher::hybridep
                                                                                                          : MoeDispatcher::alltoall;
    req.job.ep_overlap = o->ep_overlap;
    req.job.mtp = !o->no_mtp;
    for (const char* name : {"--moe-imbalance", "--force-balanced", "--moe-dispatcher", "--ep-overlap"})
      if (cmd->count(name) > 0) req.moe_options_given.emplace_back(name);
    req.compare = split_list(o->compare);
    req.failures = !o->no_failures;
    const PlanResult plan = run_plan(req);
    std::cout << (o->format == "json" ? plan_to_json_text(plan) : plan_to_table_text(plan));
  });
}

RACKSIM_REGISTER_COMMAND("plan", add_plan_command);

}  // namespace racksim::cli
