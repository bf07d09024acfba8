#pragma once
// The discrete-event engine: runs Schedules on a SimGrid platform built from a TopologyGraph, with a
// calibration and a failure scenario. SimGrid stays inside sim/platform and sim/engine .cpp files.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/collectives/schedule.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/failure_scenario.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

class TopologyGraph;

// A transfer between two devices, named as `racksim route` takes them (gpuN, cpuN or a full name).
struct DeviceTransfer {
  std::string src, dst;
  std::uint64_t bytes = 0;
};

struct RunOptions {
  bool record_trace = false;
  // Charge the GPU-side reduction kernel as an execution on the receiving GPU after each reducing
  // transfer: 3 x bytes (read two operands, write one) at the GPU's HBM bandwidth. Off by default: NCCL
  // fuses the reduction into the receive, so at NVLink speeds it hides behind the transfer.
  bool gpu_reduce_kernel = false;
  // Simulate each class of symmetric copies once (sim/engine/aggregation.hpp): exact, and the full run is
  // taken automatically where symmetry is too weak. false: always the full run (the reference).
  bool aggregate = true;
};

class Simulation {
 public:
  // Throws InputError for failures that name nothing in the graph. `graph` must outlive the Simulation.
  Simulation(const TopologyGraph& graph, Calibration calibration, FailureScenario failures = {});
  ~Simulation();

  // One schedule alone on the platform. SimulationError if it needs a failed GPU (naming the tray).
  RunResult run(const Schedule& schedule, const RunOptions& options = {}) const;
  // Why this simulation cannot run a schedule listed by its symmetry (Schedule::symmetry) as its quotient: a
  // failure scenario, GPU reduction kernels or a trace asked for, or a platform that breaks the symmetry
  // (symmetric_run.hpp); empty when it can. The caller then builds the full schedule.
  std::string quotient_refused(const Schedule& schedule, const RunOptions& options) const;
  // Several schedules started together, sharing links (contention is simulated).
  std::vector<RunResult> run_concurrent(const std::vector<Schedule>& schedules, const RunOptions& options = {}) const;
  // The same without copying the schedules (they must outlive the call).
  std::vector<RunResult> run_concurrent(const std::vector<const Schedule*>& schedules, const RunOptions& options = {}) const;
  // Schedules with start dependencies, sharing links while they overlap: schedule i launches when every
  // schedule listed in after[i] (earlier ones only) has ended, at time 0 when the list is empty (a job's
  // collectives back to back: models/jobs). A result's time_s runs from its own launch.
  std::vector<RunResult> run_after(const std::vector<const Schedule*>& schedules,
                                   const std::vector<std::vector<int>>& after, const RunOptions& options = {}) const;
  // Each schedule alone on the platform (as run()), up to `jobs` engine processes at once, all started
  // from the calling thread (no threads); results in order. `progress(done)` as runs finish.
  std::vector<RunResult> run_each(const std::vector<const Schedule*>& schedules, int jobs, const RunOptions& options = {},
                                  const std::function<void(std::size_t)>& progress = {}) const;

  // Device-level transfers started together at time 0, sharing links (e.g. the two GPUs of a superchip
  // offloading to their Grace over the shared C2C). The result has op "transfers", algo "direct", one
  // phase "transfers", `gpus` = number of transfers and `bytes` = the largest transfer.
  RunResult run_transfers(const std::vector<DeviceTransfer>& transfers, const RunOptions& options = {}) const;

  // Each call runs in a fresh engine process (sim/engine/engine_process.hpp): results never depend on
  // what ran before, and a Simulation may be used any number of times, alongside other Simulations.
  // Called from a multi-threaded process, the run goes to an engine server (engine_server.hpp), which
  // forks instead: the results are the same, bit for bit.

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<RunResult> run_linked(const std::vector<const Schedule*>& schedules,
                                    const std::vector<std::vector<int>>* after, const RunOptions& options) const;
};

// Convenience used by the CLI and the bindings: build the schedule (resolving "auto") and run it.
// The held-out error (sim/calib/heldout_errors.hpp) of `request` run alone on `graph`'s healthy GPUs as
// `algorithm` (what ran: "auto" resolved) with `calibration`: the shipped table's class when the calibration
// is the shipped one, else nullopt. The engine's results and the analytic estimates quote it alike.
std::optional<HeldoutError> collective_heldout_error(const TopologyGraph& graph, const Calibration& calibration,
                                                     const CollectiveRequest& request, const std::string& algorithm);

RunResult simulate_collective(const TopologyGraph& graph, const CollectiveRequest& request,
                              const Calibration& calibration, const FailureScenario& failures = {},
                              const RunOptions& options = {});
// The schedule `simulation` runs for `request` with `options`: the algorithm's quotient under its symmetry
// (Schedule::symmetry; NCCL's rings across racks or inside one domain) where the run keeps that symmetry
// (Simulation::quotient_refused), else build_schedule's full schedule. simulate_collective, `racksim collective`
// and System.collective run this one.
Schedule schedule_for_engine(const Simulation& simulation, const TopologyGraph& graph, const CollectiveRequest& request,
                             const Calibration& calibration, const RunOptions& options);

// The closed form's estimate of `request` (models/analytic/analytic_model.hpp: alpha-beta on the same topology,
// NCCL terms and calibration, no contention) as a result of the engine's shape, so that JSON readers and tables
// see one format: no links, no trace, `engine.mode` "analytic" with `why` in its note (the engine did not run).
// `racksim collective|sweep --model analytic|auto` and System.collective(model=) give it.
RunResult analytic_run_result(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                              const std::string& why);
// The model choice of `racksim collective|sweep --model` and System.collective|sweep(model=): auto, engine or
// analytic, else InputError at `where`. `engine_only` names what the request asks that only the engine honours
// (failures, a trace, engine processes...): analytic is refused naming them; returns whether any was asked (then
// auto keeps an engine refusal instead of answering with the closed form).
bool check_model_choice(const std::string& where, const std::string& model, const std::vector<std::string>& engine_only);
// The note of a result the closed form gave because the engine refused the request over its budgets.
inline std::string engine_refusal_note(const std::exception& refusal) {
  return std::string("the closed form: the engine will not run this (") + refusal.what() + ")";
}

// Where the schedule's pipeline was lowered to fewer, larger pieces than NCCL's chunks (Schedule::nccl_chunks; its
// note says "lowered from"), the engine's fill is that coarse: if its time is more than kCoarsePipelineNote from the closed form's at
// NCCL's depth, a warning on `result` gives the closed form's time and busbw (docs/model.md section 2).
inline constexpr double kCoarsePipelineNote = 0.03;
void note_coarse_pipeline(RunResult& result, const Schedule& schedule, const TopologyGraph& graph,
                          const Calibration& calibration);

}  // namespace racksim
