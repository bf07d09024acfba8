// racksim schedule: the Schedule stage on its own, so a user can inspect and replay it (DESIGN rule 2).
//   racksim schedule dump  <collective options> [--out FILE]   build the schedule and write its JSON
//   racksim schedule check FILE                                 symbolic correctness of a schedule file
//   racksim schedule run   FILE --system S [--racks R] [--calibration C] [--fail ...] [--partitions P]
//                          [--partition-mode M] [--format json|table]
//                                                               replay a (possibly edited) schedule on the engine
#include <iostream>
#include <optional>

#include "cli/collective_options.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/schedule_check.hpp"
#include "models/collectives/schedule_io.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::cli {

namespace {

constexpr std::size_t kViolationsNamed = 3;  // in `schedule run`'s one-line refusal

struct ReplayOptions {
  std::string file, system, calibration = "default", format = "json";
  std::optional<int> racks;
  std::vector<std::string> fail;
  std::string partitions, partition_mode = "full-bandwidth";
};

void add_dump(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<CollectiveOptions>();
  auto out = std::make_shared<std::string>();
  auto* cmd = parent.add_subcommand("dump", "build a collective's schedule and write it as JSON");
  add_collective_options(*cmd, *opts, true);
  cmd->add_option("--out", *out, "file to write (default: standard output)");
  cmd->callback([&global, opts, out] {
    std::optional<AtomicFile> file;  // opened before the work, committed after it
    if (!out->empty()) file.emplace(*out, "--out");
    const CollectiveSetup setup = setup_collective(*opts, global);
    const std::string text = schedule_to_json_text(build_schedule(setup.request, *setup.graph, setup.calibration));
    if (!file) {
      std::cout << text;
      return;
    }
    file->write(text);
    file->commit();
  });
}

void add_check(CLI::App& parent) {
  auto file = std::make_shared<std::string>();
  auto* cmd = parent.add_subcommand("check", "check a schedule file: every rank ends with what the op promises, "
                                             "every byte sent is received once, dependencies point backwards");
  cmd->add_option("file", *file, "schedule JSON (racksim schedule dump)")->required();
  cmd->callback([file] {
    const Schedule schedule = load_schedule_file(*file);
    const ScheduleCheck check = check_schedule_counted(schedule);
    if (check.total == 0) {
      std::cout << *file << ": " << schedule.algorithm << ", " << schedule.request.gpus.size() << " ranks, "
                << schedule.tasks.size() << " tasks: correct\n";
      return;
    }
    for (const auto& v : check.listed) std::cout << *file << ": " << v << "\n";
    const std::size_t more = check.total - check.listed.size();
    if (more > 0) std::cout << *file << ": ... and " << more << " more violation(s)\n";
    throw NegativeVerdict(*file + ": " + std::to_string(check.total) + " violation(s) (" +
                          (more > 0 ? "the first " + std::to_string(check.listed.size()) + " listed above)"
                                    : "listed above)"));
  });
}

void add_run(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<ReplayOptions>();
  auto* cmd = parent.add_subcommand("run", "replay a schedule file on the discrete-event engine");
  cmd->add_option("file", opts->file, "schedule JSON (racksim schedule dump)")->required();
  cmd->add_option("--system", opts->system, "system id or topology JSON file the schedule's GPUs belong to")->required();
  cmd->add_option("--racks", opts->racks, "number of racks (default: the system's)");
  cmd->add_option("--calibration", opts->calibration, "calibration file, 'default' or 'none'");
  cmd->add_option("--fail", opts->fail, "failure item (tray:T, switch-tray:S, link:NAME[@F], ...)");
  cmd->add_option("--partitions", opts->partitions, "NVLink partitions (as for racksim collective)");
  cmd->add_option("--partition-mode", opts->partition_mode, "full-bandwidth (default) or adaptive-bandwidth");
  add_format_option(*cmd, opts->format, "json", {"json", "table"});
  cmd->callback([&global, opts] {
    const Schedule schedule = load_schedule_file(opts->file);
    // An edited schedule is proved correct before it is timed: a cut task list would otherwise "run" and
    // report a bandwidth no hardware has.
    const ScheduleCheck check = check_schedule_counted(schedule, kViolationsNamed);
    if (check.total > 0) {
      std::string first;
      for (const auto& v : check.listed) first += (first.empty() ? "" : "; ") + v;
      throw InputError(opts->file + ": not a correct " + schedule.algorithm + " schedule (" +
                       std::to_string(check.total) + " violation(s); `racksim schedule check` lists them), first: " + first);
    }
    const TopologySpec spec = SystemCatalog(global.topology_dir).load(opts->system);
    TopologyGraph graph(spec, racks_or_default(opts->racks, spec));
    if (!opts->partitions.empty()) graph.apply_partitions(parse_partitions(opts->partitions, graph, "--partitions"));
    for (int gpu : schedule.request.gpus)
      if (gpu < 0 || gpu >= graph.gpu_count())
        throw InputError(opts->file, "/request/gpus", std::to_string(gpu),
                         "GPU indices below " + std::to_string(graph.gpu_count()) + " for " + spec.id);
    FailureScenario failures;
    for (const auto& item : opts->fail) failures.items.push_back(parse_failure_item(item));
    failures.mode = partition_mode_from_string(opts->partition_mode, "--partition-mode");
    const Simulation simulation(graph, load_calibration(opts->calibration), failures);
    const RunResult result = simulation.run(schedule);
    std::cout << (opts->format == "json" ? run_result_to_json_text(result) : run_result_to_table(result));
  });
}

void add_schedule_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("schedule", "dump, check or replay the plain-data schedule of a collective");
  cmd->require_subcommand(1);
  add_dump(*cmd, global);
  add_check(*cmd);
  add_run(*cmd, global);
}

}  // namespace

RACKSIM_REGISTER_COMMAND("schedule", add_schedule_command);

}  // namespace racksim::cli
