// racksim collective: one collective on the SimGrid engine; JSON (the contract other tools read) or a
// table, and optionally a Chrome/Perfetto trace.
#include <iostream>
#include <optional>

#include "cli/collective_options.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"

namespace racksim::cli {

static void add_collective_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<CollectiveOptions>();
  auto* cmd = app.add_subcommand("collective", "simulate one collective (time, algbw, busbw, phases, link use)");
  add_collective_options(*cmd, *opts, true);
  add_format_option(*cmd, opts->format, "json", {"json", "table"});
  cmd->add_option("--trace", opts->trace, "write a Chrome/Perfetto trace (one track per GPU and per busy link)");
  cmd->add_option("--aggregation", opts->aggregation,
                  "auto (default): the engine simulates each class of symmetric copies once (exact; the full run "
                  "where symmetry is weak); off: every transfer, the reference")
      ->check(CLI::IsMember({"auto", "off"}));
  add_model_option(*cmd, opts->model);
  cmd->callback([&global, opts, cmd] {
    // The closed form has no failures, trace or engine options: refused with --model analytic, and with auto
    // they keep an engine refusal.
    const bool engine_only = cli::engine_only(*cmd, *opts, {"--trace", "--aggregation"});
    const auto setup = std::make_shared<const CollectiveSetup>(setup_collective(*opts, global));
    const auto print = [&](const RunResult& r) {
      std::cout << (opts->format == "json" ? run_result_to_json_text(r) : run_result_to_table(r));
    };
    if (opts->model == "analytic") {
      print(analytic_run_result(*setup->graph, setup->request, setup->calibration,
                                "the closed form (--model analytic): the engine did not run"));
      keep_until_exit(setup);
      return;
    }
    // Opened first (a bad path fails before the run), renamed into place only when the run succeeded.
    std::optional<AtomicFile> trace;
    if (!opts->trace.empty()) trace.emplace(opts->trace, "--trace");
    const auto simulation =  // checks --fail items
        std::make_shared<const Simulation>(*setup->graph, setup->calibration, setup->failures);
    RunOptions options;
    options.record_trace = !opts->trace.empty();
    options.aggregate = opts->aggregation == "auto";
    std::shared_ptr<const Schedule> schedule;
    RunResult result;
    try {
      schedule =  // auto picks with it; the quotient where the algorithm has one and the run keeps its symmetry
          std::make_shared<const Schedule>(schedule_for_engine(*simulation, *setup->graph, setup->request, setup->calibration, options));
      result = simulation->run(*schedule, options);
      note_coarse_pipeline(result, *schedule, *setup->graph, setup->calibration);
    } catch (const EngineLimitError& e) {
      if (opts->model != "auto" || engine_only) throw;
      print(analytic_run_result(*setup->graph, setup->request, setup->calibration, engine_refusal_note(e)));
      keep_until_exit(setup);
      return;
    }
    if (trace) {
      trace->write(run_result_to_trace_json(result));
      trace->commit();
    }
    print(result);
    // Freed by the process's exit: the 72-GPU ring's 10 224 tasks took ~0.5 ms to free one by one.
    keep_until_exit(schedule);
    keep_until_exit(simulation);
    keep_until_exit(setup);
  });
}

RACKSIM_REGISTER_COMMAND("collective", add_collective_command);

}  // namespace racksim::cli
