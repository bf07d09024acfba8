// racksim jobs: several jobs side by side on one system (a JSON job mix, docs/failures.md), each alone
// and all together sharing NICs, IB links and trunks; with --fail, which jobs die, which continue, how
// much slower, and when the dead ones run again.
#include <iostream>

#include "cli/commands.hpp"
#include "models/jobs/job_runner.hpp"
#include "sim/core/errors.hpp"

namespace racksim::cli {

namespace {

struct JobsOptions {
  std::string file, format = "table", partition_mode;
  std::vector<std::string> fail;
  std::optional<double> restart_s, tray_reboot_s;
};

void set_duration(Duration& d, const std::optional<double>& value, const std::string& option) {
  if (!value) return;
  if (!(*value >= 0 && *value <= 1e7)) throw InputError(option, "", number_text(*value), "seconds in [0, 1e7]");
  d = {*value, "given (" + option + ")"};
}

void add_jobs_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<JobsOptions>();
  auto* cmd = app.add_subcommand("jobs", "run several jobs side by side (a JSON job mix): slowdowns, shared links, "
                                         "and what failures do to each job");
  cmd->add_option("mix", opts->file, "a shipped scenario (operator-tray7, shared-fabric, planner-steps) or a job-mix "
                                     "JSON file (schema in docs/failures.md)")->required();
  cmd->add_option("--fail", opts->fail, "a failure during the run (repeatable; added to the file's \"failures\")");
  cmd->add_option("--partition-mode", opts->partition_mode, "override the file's partition_mode: full-bandwidth or adaptive-bandwidth");
  cmd->add_option("--restart-s", opts->restart_s, "seconds to relaunch a job from its checkpoint (default: 600, assumption)");
  cmd->add_option("--tray-reboot-s", opts->tray_reboot_s, "seconds for a compute tray to reboot (default: 900, assumption)");
  add_format_option(*cmd, opts->format, "table", {"table", "json"});
  cmd->callback([&global, opts] {
    JobMix mix = load_job_mix(opts->file);
    if (!opts->partition_mode.empty()) mix.mode = partition_mode_from_string(opts->partition_mode, "--partition-mode");
    for (const auto& item : opts->fail) parse_failure_item(item);
    RecoveryTimes rt;
    set_duration(rt.restart, opts->restart_s, "--restart-s");
    set_duration(rt.tray_reboot, opts->tray_reboot_s, "--tray-reboot-s");
    const MixResult result = run_job_mix(mix, opts->fail, global.topology_dir, rt);
    std::cout << (opts->format == "json" ? mix_result_to_json_text(result) : mix_result_to_table(result));
  });
}

}  // namespace

RACKSIM_REGISTER_COMMAND("jobs", add_jobs_command);

}  // namespace racksim::cli
