// racksim sweep: one collective over a range of sizes, printed in the layout of nccl-tests'
// all_reduce_perf (so a simulated sweep diffs against a real run), or as JSON / CSV.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/collective_options.hpp"
#include "cli/dask_units.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/sweep_sizes.hpp"
#include "models/work/work_units.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/engine_process.hpp"
#include "sim/engine/local_engine.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"

namespace racksim::cli {

namespace {

struct SweepOptions : CollectiveOptions {
  std::string min_bytes = "8", max_bytes = "16G";
  double step_factor = 2;
  int jobs = default_engine_jobs();  // a 25-size 72-GPU sweep on 2 cores: 0.51-0.54 s with one, 0.39-0.49 s with two
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

// Runs a sweep's schedules as they are built: add() queues one, a worker thread sends what is queued to
// Simulation::run_each whenever it is free, results() waits and returns them in order. Only where the runs
// go to the engine daemon (the CLI holds no SimGrid): a process with the local engine forks its engine
// processes itself and must stay single-threaded (engine_process.hpp); there everything runs in results().
class SweepRuns {
 public:
  SweepRuns(const Simulation& simulation, int jobs, std::function<void(std::size_t)> progress)
      : simulation_(simulation), jobs_(jobs), progress_(std::move(progress)) {
    if (local_engine() == nullptr) worker_ = std::thread([this] { work(); });
  }
  SweepRuns(const SweepRuns&) = delete;
  SweepRuns& operator=(const SweepRuns&) = delete;
  ~SweepRuns() {  // an error while building: the batch in flight is waited for, its result dropped
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queued_.clear();
    }
    stop();
  }

  void add(const Schedule* schedule) {
    std::lock_guard<std::mutex> lock(mutex_);
    queued_.push_back(schedule);
    wake_.notify_one();
  }
  std::vector<RunResult> results() {
    stop();
    if (error_) std::rethrow_exception(error_);
    if (!queued_.empty()) run(std::move(queued_));  // no worker: all of them here
    return std::move(results_);
  }

 private:
  void run(std::vector<const Schedule*> batch) {
    const std::size_t before = results_.size();
    for (RunResult& r : simulation_.run_each(batch, jobs_, {}, [&](std::size_t done) { progress_(before + done); }))
      results_.push_back(std::move(r));
  }
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return !queued_.empty() || closed_; });
      if (queued_.empty() || error_) return;  // closed, nothing left (or a run failed: the first error is the answer)
      std::vector<const Schedule*> batch = std::move(queued_);
      queued_.clear();
      lock.unlock();
      try {
        run(std::move(batch));
      } catch (...) {
        lock.lock();
        error_ = std::current_exception();
        return;
      }
      lock.lock();
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
      wake_.notify_one();
    }
    if (worker_.joinable()) worker_.join();
  }

  const Simulation& simulation_;
  const int jobs_;
  const std::function<void(std::size_t)> progress_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<const Schedule*> queued_;  // built, not yet sent
  bool closed_ = false;
  std::exception_ptr error_;
  std::vector<RunResult> results_;  // in the order of the schedules (batches run one after another)
  std::thread worker_;
};

}  // namespace

static void add_sweep_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "one collective over sizes, as nccl-tests' perf table (or JSON / CSV)");
  add_collective_options(*cmd, *opts, false);
  cmd->add_option("--min-bytes,-b", opts->min_bytes, "smallest size (default 8)");
  cmd->add_option("--max-bytes,-e", opts->max_bytes, "largest size (default 16G)");
  cmd->add_option("--step-factor,-f", opts->step_factor, "size multiplier between rows (default 2)");
  cmd->add_option("--jobs,-j", opts->jobs, "engine processes run at once (default: this machine's cores, at most 4)")->check(CLI::Range(1, 64));
  add_dask_options(*cmd, opts->dask);
  add_format_option(*cmd, opts->format, "table", {"table", "json", "csv"});
  add_model_option(*cmd, opts->model);
  cmd->callback([&global, opts, cmd] {
    // The closed form has no failures and runs no engine processes: refused with --model analytic; with auto
    // they keep an engine refusal.
    const bool engine_only = cli::engine_only(*cmd, *opts, {"--jobs", "--dask", "--dask-timeout"});
    CollectiveSetup setup = setup_collective(*opts, global);
    // The sizes nccl-tests runs: whole elements (per rank for all_gather, reduce_scatter, alltoall); those below one
    // element per rank are left out (nccl-tests prints them as 0-byte rows), repeats once.
    std::vector<std::uint64_t> left_out;
    const std::vector<std::uint64_t> sizes =
        nccl_tests_sizes(sweep_sizes(*opts), setup.request.op, dtype_size_bytes(setup.request.dtype), static_cast<int>(setup.request.gpus.size()),
                         "--min-bytes", &left_out);
    const auto print = [&opts, &left_out](const std::vector<RunResult>& results) {
      if (opts->format == "json") std::cout << run_results_to_json_text(results);
      else if (opts->format == "csv") std::cout << run_results_to_csv(results, opts->dtype);
      else std::cout << nccl_tests_table(results, opts->dtype);
      // Rows the engine did not run, named under the table (JSON and CSV carry engine.mode per row).
      if (opts->format != "table") return;
      std::string closed;
      for (const auto& r : results)
        if (r.engine.mode == "analytic") closed += " " + std::to_string(r.bytes);
      if (!closed.empty()) std::cout << "# Priced by the closed form (the engine did not run them):" << closed << "\n";
      if (!left_out.empty()) {
        std::string sizes_text;
        for (std::uint64_t s : left_out) sizes_text += " " + std::to_string(s);
        std::cout << "# Not run (no element per rank; nccl-tests prints them as 0-byte rows):" << sizes_text << "\n";
      }
    };
    const auto request_of = [&setup](std::uint64_t size) {
      CollectiveRequest r = setup.request;
      r.bytes = size;
      return r;
    };
    if (opts->model == "analytic") {
      std::vector<RunResult> results;
      for (std::uint64_t size : sizes)
        results.push_back(analytic_run_result(*setup.graph, request_of(size), setup.calibration,
                                              "the closed form (--model analytic): the engine did not run"));
      print(results);
      return;
    }
    const Simulation simulation(*setup.graph, setup.calibration, setup.failures);
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
    // Reserved: the runs read the schedules built so far while the next are added.
    const auto schedules = std::make_shared<std::vector<Schedule>>();
    keep_until_exit(schedules);
    schedules->reserve(sizes.size());
    Progress progress(sizes.size());
    // The runs go to the engine daemon batch by batch on a second thread while this one builds the
    // next schedules: the daemon's work (compile, aggregate, one engine process per size) overlaps the
    // building on the other core instead of waiting for all of it (docs/performance.md). Each run is its
    // own engine process either way: the results are the same bytes.
    std::atomic<std::size_t> closed_rows{0};  // priced by the closed form: done as soon as built
    SweepRuns runs(simulation, opts->jobs,
                   [&progress, &closed_rows](std::size_t done) { progress.update(done + closed_rows.load()); });
    // --model auto: a size whose schedule is over the memory budget is priced by the closed form (in its place
    // in the output); the engine runs the others.
    std::vector<std::optional<RunResult>> closed_form(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const CollectiveRequest r = request_of(sizes[i]);
      try {
        // Bad input fails before any result; the quotient where the algorithm has one (as `racksim collective`).
        schedules->push_back(schedule_for_engine(simulation, *setup.graph, r, setup.calibration, RunOptions{}));
      } catch (const EngineLimitError& e) {
        if (opts->model != "auto" || engine_only) throw;
        closed_form[i] = analytic_run_result(*setup.graph, r, setup.calibration, engine_refusal_note(e));
        ++closed_rows;
        continue;
      }
      runs.add(&schedules->back());
    }
    std::vector<RunResult> engine = runs.results(), results;
    for (std::size_t i = 0, next = 0; i < sizes.size(); ++i) {
      if (closed_form[i]) {
        results.push_back(std::move(*closed_form[i]));
        continue;
      }
      note_coarse_pipeline(engine[next], (*schedules)[next], *setup.graph, setup.calibration);
      results.push_back(std::move(engine[next++]));
    }
    print(results);
  });
}

RACKSIM_REGISTER_COMMAND("sweep", add_sweep_command);

}  // namespace racksim::cli
