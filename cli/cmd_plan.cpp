// racksim plan: which TP x EP x CP x PP x DP layout trains a model fastest on N racks, whether it fits,
// why it wins, what a tray failure costs, and how other systems compare (models/planner).
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "models/planner/plan.hpp"
#include "models/planner/plan_report.hpp"
#include "sim/core/errors.hpp"

namespace racksim::cli {

namespace {

struct PlanOptions {
  PlanRequest request;
  std::string format = "table";
  std::optional<int> tp, ep, cp, pp, dp, tp_x_ep, micro_batch;
  std::string schedule = "auto", zero = "auto", recompute = "auto", grad_dtype = "fp32", compare = "gb200-nvl72,gb300-nvl72,hgx-b200";
  bool no_failures = false;
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

}  // namespace

static void add_plan_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand("plan", "rank TP x EP x CP x PP x DP layouts of a model's training step on a system");
  PlanRequest& r = o->request;
  cmd->add_option("--system", r.system, "system id (racksim systems) or topology JSON file")->capture_default_str();
  cmd->add_option("--racks", r.racks, "racks (default: the system's)");
  cmd->add_option("--model", r.model, "model preset (models/workload/presets) or model JSON file")->required();
  cmd->add_option("--global-batch", r.job.global_batch, "sequences per training step")->required();
  cmd->add_option("--seq-len", r.job.seq_len, "tokens per sequence")->required();
  cmd->add_option("--gpus", r.gpus, "GPUs to use (default: whole trays, from every GPU of each NVLink domain down to half)");
  add_format_option(*cmd, o->format, "table", {"table", "json"});
  cmd->add_option("--top", r.top, "layouts to report")->capture_default_str();
  cmd->add_option("--engine-top", r.engine_top, "of those, how many the discrete-event engine re-prices (0: none)")
      ->capture_default_str();
  cmd->add_option("--tp", o->tp, "fix tensor parallelism");
  cmd->add_option("--ep", o->ep, "fix expert parallelism");
  cmd->add_option("--cp", o->cp, "fix context parallelism");
  cmd->add_option("--pp", o->pp, "fix pipeline stages");
  cmd->add_option("--dp", o->dp, "fix data parallelism");
  cmd->add_option("--tp-x-ep", o->tp_x_ep, "fix the product TP x EP (e.g. 64: one rack's model-parallel group)");
  cmd->add_option("--micro-batch", o->micro_batch, "fix sequences per micro-batch");
  cmd->add_option("--schedule", o->schedule, "pipeline schedule: auto|1f1b|interleaved")
      ->check(CLI::IsMember({"auto", "1f1b", "interleaved"}));
  cmd->add_option("--zero", o->zero, "ZeRO stage: auto (1-3)|0|1|2|3")->check(CLI::IsMember({"auto", "0", "1", "2", "3"}));
  cmd->add_option("--recompute", o->recompute, "activation recompute: auto (the least that fits)|none|selective|full")
      ->check(CLI::IsMember({"auto", "none", "selective", "full"}));
  cmd->add_option("--offload", r.constraints.offload, "offload to host memory: none|optimizer|activations|both|auto")
      ->check(CLI::IsMember({"none", "optimizer", "activations", "both", "auto"}))
      ->capture_default_str();
  cmd->add_option("--dtype", r.job.dtype, "GEMM precision: bf16|fp8")->check(CLI::IsMember({"bf16", "fp8"}))->capture_default_str();
  cmd->add_option("--moe-imbalance", r.job.moe_imbalance, "tokens on the busiest expert-parallel rank / mean (assumption)")
      ->capture_default_str();
  cmd->add_option("--tp-overlap", r.job.tp_overlap, "fraction of TP communication hidden behind compute")->capture_default_str();
  cmd->add_option("--ep-overlap", r.job.ep_overlap, "fraction of EP all-to-all hidden behind compute")->capture_default_str();
  cmd->add_option("--grad-dtype", o->grad_dtype, "gradient accumulation and reduction: fp32|bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--memory-reserve", r.job.memory_reserve, "HBM fraction kept free (CUDA context, NCCL, fragmentation)")
      ->capture_default_str();
  cmd->add_option("--compare", o->compare, "systems to compare for the same GPU count, comma-separated, or none")
      ->capture_default_str();
  cmd->add_flag("--no-failures", o->no_failures, "skip the tray-failure analysis");
  cmd->add_option("--calibration", r.calibration, "collective calibration: none, default, or a file")->capture_default_str();
  cmd->callback([&global, o] {
    PlanRequest req = o->request;
    req.topology_dir = global.topology_dir;
    SearchConstraints& c = req.constraints;
    c.tp = o->tp, c.ep = o->ep, c.cp = o->cp, c.pp = o->pp, c.dp = o->dp, c.tp_times_ep = o->tp_x_ep;
    if (o->micro_batch) {
      if (*o->micro_batch < 1) throw InputError("--micro-batch", "", std::to_string(*o->micro_batch), "an integer >= 1");
      c.micro_batch = o->micro_batch;
      c.micro_batch_options = {*o->micro_batch};
    }
    if (o->schedule == "1f1b") c.schedule = PipelineSchedule::one_f_one_b;
    if (o->schedule == "interleaved") c.schedule = PipelineSchedule::interleaved;
    if (o->zero != "auto") c.zero_stage = std::stoi(o->zero);
    if (o->recompute == "none") c.recompute = Recompute::none;
    if (o->recompute == "selective") c.recompute = Recompute::selective;
    if (o->recompute == "full") c.recompute = Recompute::full;
    req.job.grad_bytes = o->grad_dtype == "bf16" ? 2 : 4;
    req.compare = split_list(o->compare);
    req.failures = !o->no_failures;
    const PlanResult plan = run_plan(req);
    std::cout << (o->format == "json" ? plan_to_json_text(plan) : plan_to_table_text(plan));
  });
}

RACKSIM_REGISTER_COMMAND("plan", add_plan_command);

}  // namespace racksim::cli
