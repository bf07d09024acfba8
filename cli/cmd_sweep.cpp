// racksim sweep: one collective over a range of sizes, printed in the layout of nccl-tests'
// all_reduce_perf (so a simulated sweep diffs against a real run), or as JSON / CSV.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/collective_options.hpp"
#include "cli/dask_units.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/sweep_sizes.hpp"
#include "models/work/work_units.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"

namespace racksim::cli {

namespace {

struct SweepOptions : CollectiveOptions {
  std::string min_bytes = "8", max_bytes = "16G";
  double step_factor = 2;
  int jobs = 1;
  DaskOptions dask;
};

std::vector<std::uint64_t> sweep_sizes(const SweepOptions& o) {
  return racksim::sweep_sizes(parse_size_option(o.min_bytes, "--min-bytes"), parse_size_option(o.max_bytes, "--max-bytes"),
                              o.step_factor);
}

// A progress bar on stderr once the sweep has run for a second (only on a terminal).
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  void update(std::size_t done) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1.0 || !isatty(STDERR_FILENO)) return;
    const int width = 30, filled = static_cast<int>(width * done / total_);
    std::fprintf(stderr, "\rsweep [%s%s] %zu/%zu sizes, %.1f s", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done, total_, elapsed);
    std::fflush(stderr);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\n");
  }

 private:
  std::size_t total_;
  std::chrono::steady_clock::time_point start_;
  bool shown_ = false;
};

}  // namespace

static void add_sweep_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "one collective over sizes, as nccl-tests' perf table (or JSON / CSV)");
  add_collective_options(*cmd, *opts, false);
  cmd->add_option("--min-bytes,-b", opts->min_bytes, "smallest size (default 8)");
  cmd->add_option("--max-bytes,-e", opts->max_bytes, "largest size (default 16G)");
  cmd->add_option("--step-factor,-f", opts->step_factor, "size multiplier between rows (default 2)");
  cmd->add_option("--jobs,-j", opts->jobs, "engine processes run at once (default 1)")->check(CLI::Range(1, 64));
  add_dask_options(*cmd, opts->dask);
  add_format_option(*cmd, opts->format, "table", {"table", "json", "csv"});
  cmd->callback([&global, opts] {
    const std::vector<std::uint64_t> sizes = sweep_sizes(*opts);
    CollectiveSetup setup = setup_collective(*opts, global);
    const Simulation simulation(*setup.graph, setup.calibration, setup.failures);
    const auto print = [&opts](const std::vector<RunResult>& results) {
      if (opts->format == "json") std::cout << run_results_to_json_text(results);
      else if (opts->format == "csv") std::cout << run_results_to_csv(results, opts->dtype);
      else std::cout << nccl_tests_table(results, opts->dtype);
    };
    if (!opts->dask.address.empty()) {
      // One work unit per size on the Dask cluster (docs/dask.md); the output is the local one, byte for byte.
      std::vector<CollectiveRequest> requests;
      for (std::uint64_t size : sizes) {
        requests.push_back(setup.request);
        requests.back().bytes = size;
      }
      build_schedule(requests.front(), *setup.graph, setup.calibration);  // bad input fails here, not on a worker
      print(collective_unit_results(run_units_on_dask(
          opts->dask, collective_units(*setup.graph, setup.calibration, setup.failures, requests), "sweep")));
      return;
    }
    // Freed by the process's exit, not one block at a time (~10-25 ms for the 25 sizes of a 72-GPU ring).
    const auto schedules = std::make_shared<std::vector<Schedule>>();
    keep_until_exit(schedules);
    for (std::uint64_t size : sizes) {
      CollectiveRequest r = setup.request;
      r.bytes = size;
      schedules->push_back(build_schedule(r, *setup.graph, setup.calibration));  // bad input fails before any run
    }
    // --jobs engine processes at once, all forked from this (only) thread: forking while other threads
    // run deadlocked under AddressSanitizer (engine_process.hpp).
    Progress progress(sizes.size());
    std::vector<const Schedule*> pointers;
    for (const auto& s : *schedules) pointers.push_back(&s);
    const std::vector<RunResult> results =
        simulation.run_each(pointers, opts->jobs, {}, [&progress](std::size_t done) { progress.update(done); });
    print(results);
  });
}

RACKSIM_REGISTER_COMMAND("sweep", add_sweep_command);

}  // namespace racksim::cli
