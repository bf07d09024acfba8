// racksim goodput: the fraction of wall-clock time a training job makes progress under failures, by a
// seeded Monte Carlo with the analytic expectation beside it; --compare puts GB200 NVL72 racks, NVL72
// partitions and HGX B200 nodes side by side for the same job.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/dask_units.hpp"
#include "models/failures/goodput_setup.hpp"
#include "models/work/work_units.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim::cli {

namespace {

struct GoodputOptions {
  GoodputCall call;
  std::string format = "table", checkpoint;
  std::optional<double> step_s;
  DaskOptions dask;
};

void add_goodput_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<GoodputOptions>();
  auto* cmd = app.add_subcommand("goodput", "expected training goodput under failures (Monte Carlo + analytic), "
                                            "spare trays, checkpoint interval, allocation unit");
  cmd->add_option("--system", o->call.setup.system, "system id (default gb200-nvl72)");
  cmd->add_option("--unit", o->call.setup.unit, "allocation unit: rack (whole NVLink domain), partition:T (T trays) or node");
  cmd->add_option("--gpus", o->call.setup.gpus, "GPUs the job trains on (rounded up to whole units)")->required();
  cmd->add_option("--spare-trays", o->call.setup.spare_trays, "trays per unit left free as in-domain spares (default 0)");
  cmd->add_option("--hot-spares", o->call.setup.hot_spares, "idle whole units that can replace a failed one (default 0)");
  cmd->add_option("--step-s", o->step_s, "seconds per training step (or --model for the planner's)");
  cmd->add_option("--checkpoint-bytes", o->checkpoint, "checkpoint size, e.g. 5700GB (or --model: params x 14 B)");
  CLI::Option* model = cmd->add_option("--model", o->call.setup.model, "planner model preset or file: step time and checkpoint from it");
  // needs: without --model nothing reads them (they were ignored without a word)
  cmd->add_option("--global-batch", o->call.setup.global_batch, "with --model: sequences per step")->needs(model);
  cmd->add_option("--seq-len", o->call.setup.seq_len, "with --model: tokens per sequence")->needs(model);
  cmd->add_option("--storage-GBps", o->call.setup.storage_GBps_per_gpu, "checkpoint write GB/s per GPU (default 1, assumption)");
  cmd->add_option("--interval-s", o->call.interval_s, "checkpoint interval (default: Daly's optimum)");
  cmd->add_option("--restart-s", o->call.restart_s, "seconds to relaunch from a checkpoint (default 600, assumption)");
  cmd->add_option("--repair-h", o->call.repair_h, "hours to repair a failed tray or node (default 24, assumption)");
  cmd->add_option("--switch-repair-h", o->call.switch_repair_h, "hours to replace an NVLink switch tray (default 4, assumption)");
  cmd->add_option("--partition-mode", o->call.partition_mode, "full-bandwidth (default) or adaptive-bandwidth");
  cmd->add_option("--adaptive-slowdown", o->call.adaptive_slowdown, "step-time loss with a switch tray down, adaptive mode (default 0.05, assumption)");
  cmd->add_option("--days", o->call.days, "days of useful training the run needs (default 30)");
  cmd->add_option("--trials", o->call.trials, "Monte Carlo runs (default 200)");
  cmd->add_option("--seed", o->call.seed, "random seed (default 1); the same seed gives byte-identical output");
  cmd->add_flag("--compare", o->call.compare, "GB200 NVL72 racks vs NVL72 partitions of 9 trays vs HGX B200 nodes");
  add_dask_options(*cmd, o->dask);
  add_format_option(*cmd, o->format, "table", {"table", "json"});
  cmd->callback([&global, o, cmd] {
    // The slowdown is what a switch tray down costs in adaptive-bandwidth mode; in full-bandwidth mode (the
    // default) the partition stops instead, and the figure was ignored without a word.
    if (cmd->count("--adaptive-slowdown") > 0 && o->call.partition_mode != "adaptive-bandwidth")
      throw InputError("--adaptive-slowdown", "", "with --partition-mode " + o->call.partition_mode,
                       "only with --partition-mode adaptive-bandwidth (in full-bandwidth mode a switch tray down stops the partition)");
    GoodputCall c = o->call;
    c.setup.topology_dir = global.topology_dir;
    c.setup.step_s = o->step_s;
    if (!o->checkpoint.empty()) {
      const std::uint64_t b = units::parse_bytes(o->checkpoint, "--checkpoint-bytes");
      if (b == 0) throw InputError("--checkpoint-bytes", "", "'" + o->checkpoint + "'", "a positive size such as 5700GB");
      c.setup.checkpoint_bytes = static_cast<double>(b);
    }
    std::vector<GoodputResult> results;
    if (o->dask.address.empty()) {
      results = run_goodput_call(c);
    } else {
      // The Monte Carlo's trials in ranges on the Dask cluster (docs/dask.md): each trial has its own seed,
      // so the output is the local one, byte for byte.
      const std::vector<GoodputRequest> requests = goodput_call_requests(c);
      results = goodput_unit_results(requests, run_units_on_dask(o->dask, goodput_units(requests), "goodput"));
    }
    std::cout << (o->format == "json" ? goodput_to_json_text(results) : goodput_to_table(results));
  });
}

}  // namespace

RACKSIM_REGISTER_COMMAND("goodput", add_goodput_command);

}  // namespace racksim::cli
