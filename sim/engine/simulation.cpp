#include "sim/engine/simulation.hpp"

#include <algorithm>
#include <set>

#include "models/collectives/exec_terms.hpp"
#include "sim/calib/heldout_errors.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/aggregation.hpp"
#include "sim/engine/engine_process.hpp"
#include "sim/engine/engine_server.hpp"
#include "sim/engine/local_engine.hpp"
#include "sim/engine/result_wire.hpp"
#include "sim/engine/symmetric_run.hpp"
#include "sim/platform/platform_model.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {
// A process without the SimGrid objects (the CLI) or with several threads (which must not fork) sends its
// runs to an engine server; the others fork their engine processes themselves (engine_process.hpp).
bool use_engine_server() { return local_engine() == nullptr || threads_in_this_process() > 1; }
}  // namespace

struct Simulation::Impl {
  Impl(const TopologyGraph& g, Calibration c, FailureScenario f)
      : graph(g), calibration(std::move(c)), failures(std::move(f)), model(graph, calibration, failures) {}
  const TopologyGraph& graph;
  Calibration calibration;
  FailureScenario failures;
  PlatformModel model;  // built here so that bad failure items are reported before any run

  // A request for the engine server carrying this simulation's inputs (engine_server.hpp).
  EngineRequest server_request(EngineRequest::Kind kind, const std::vector<const Schedule*>& schedules,
                               const RunOptions& options) const {
    EngineRequest r;
    r.kind = kind;
    r.topology_json = topology_json_text_of(graph.spec());  // the file as read, when unchanged
    r.racks = graph.racks();
    if (graph.partitioned()) r.partitions = graph.partitioning().spec;
    r.calibration_json = calibration_json_text_of(calibration);
    for (const auto& item : failures.items) r.failures.push_back(item.text);
    r.partition_mode = to_string(failures.mode);
    r.schedule_ptrs = schedules;  // encoded in binary by encode_engine_request (no copy here)
    r.options = options;
    return r;
  }
  // The validation's data are single collectives on systems without failures.
  std::optional<HeldoutError> heldout_error_of(const Schedule& s) const {
    if (!failures.items.empty()) return std::nullopt;
    return collective_heldout_error(graph, calibration, s.request, s.request.algorithm);
  }
  // The configuration echo every result carries. `alone`: each result is a collective run by itself (not one
  // of several run at once), which is what the held-out errors were measured on. A result from an engine
  // server already carries its held-out error (the server's own echo, from the same topology and calibration
  // text, with the shipped tables parsed once in the daemon): not looked up again here, which parsed
  // calibrate/heldout_errors.json in every CLI call (~1 ms of an 8-GPU collective's ~8).
  enum class Heldout { look_up, from_engine_server };
  void echo(std::vector<RunResult>& results, const std::vector<const Schedule*>& pointers, bool alone,
            Heldout heldout = Heldout::look_up) const {
    for (std::size_t i = 0; i < results.size() && i < pointers.size(); ++i) {  // what NCCL's choice was
      results[i].protocol = pointers[i]->request.protocol;
      results[i].channels = pointers[i]->request.channels;
      results[i].warnings = pointers[i]->warnings;
      if (heldout == Heldout::look_up) results[i].heldout_error = alone ? heldout_error_of(*pointers[i]) : std::nullopt;
    }
    for (auto& r : results) {
      r.system = graph.spec().id;
      r.racks = graph.racks();
      r.rack_unit = graph.spec().rack.unit;
      r.calibration = calibration.name;
      r.failures.clear();
      for (const auto& item : failures.items) r.failures.push_back(item.text);
    }
  }
  void check_gpus(const std::vector<const Schedule*>& pointers) const {
    // Checked here as well as in the engine process so that the message does not depend on the fork.
    for (const Schedule* s : pointers)
      for (int g : s->request.gpus)
        if (g >= 0 && g < graph.gpu_count() && !model.gpu_failure(g).empty())
          throw SimulationError(s->algorithm + " on GPU " + std::to_string(g) + " (" +
                                graph.vertices()[graph.gpu_vertex(g)].name + "): " + model.gpu_failure(g));
    for (const Schedule* s : pointers) {
      const std::string imex = model.imex_failure(s->request.gpus);
      if (!imex.empty()) throw SimulationError(s->algorithm + " on " + std::to_string(s->request.gpus.size()) + " GPUs: " + imex);
    }
  }
};

std::optional<HeldoutError> collective_heldout_error(const TopologyGraph& graph, const Calibration& calibration,
                                                     const CollectiveRequest& request, const std::string& algorithm) {
  // One rank runs no algorithm (a copy within the GPU, exec_terms.cpp): no collective class's error applies.
  if (request.gpus.size() <= 1) return std::nullopt;
  std::set<int> domains;
  for (int g : request.gpus) {
    if (g < 0 || g >= graph.gpu_count()) return std::nullopt;
    domains.insert(graph.vertices()[graph.gpu_vertex(g)].domain);
  }
  // On one NVLink domain a run is what prices its NVLink flows (racksim's hierarchical: NCCL's inner algorithm,
  // exec_terms.hpp), so that algorithm's held-out error; across domains its own (hierarchical: nothing measures it,
  // the pooled class says "(any algorithm)").
  std::string key = std::string(to_string(request.op)) + "/" + algorithm;
  if (domains.size() == 1) {
    CollectiveRequest resolved = request;
    resolved.algorithm = algorithm;
    key = nvlink_calibration_key(graph, resolved);
  }
  return heldout_error_for(calibration, request_architecture(graph, request),  // "" for no GPUs: none
                           key, domains.size() > 1, static_cast<double>(request.bytes));
}

Simulation::Simulation(const TopologyGraph& graph, Calibration calibration, FailureScenario failures)
    : impl_(std::make_unique<Impl>(graph, std::move(calibration), std::move(failures))) {}

Simulation::~Simulation() = default;

std::vector<RunResult> Simulation::run_concurrent(const std::vector<const Schedule*>& pointers,
                                                 const RunOptions& options) const {
  return run_linked(pointers, nullptr, options);
}

std::vector<RunResult> Simulation::run_after(const std::vector<const Schedule*>& schedules,
                                             const std::vector<std::vector<int>>& after, const RunOptions& options) const {
  return run_linked(schedules, &after, options);
}

std::vector<RunResult> Simulation::run_linked(const std::vector<const Schedule*>& pointers,
                                              const std::vector<std::vector<int>>* after, const RunOptions& options) const {
  if (pointers.empty()) return {};
  const Impl& impl = *impl_;
  const PlatformModel& model = impl.model;
  impl.check_gpus(pointers);
  if (use_engine_server()) {
    EngineRequest request = impl.server_request(after ? EngineRequest::Kind::after : EngineRequest::Kind::concurrent,
                                                pointers, options);
    if (after) request.after = *after;
    std::vector<RunResult> results = run_on_engine_server(request);
    // What the wire leaves out (NCCL's choice, warnings).
    impl.echo(results, pointers, pointers.size() == 1, Impl::Heldout::from_engine_server);
    return results;
  }
  // Compiled here, where the schedules are in cache; the engine process reads only the compact result.
  const CompiledRun run = engine_run(model, compile_run(model, impl.calibration, pointers, nullptr, after), options);
  const std::string bytes = run_in_child_process([&] { return encode_run_results(local_engine()(model, run, options)); });
  std::vector<RunResult> results = decode_run_results(bytes);
  impl.echo(results, pointers, pointers.size() == 1);
  return results;
}

std::vector<RunResult> Simulation::run_each(const std::vector<const Schedule*>& pointers, int jobs,
                                            const RunOptions& options,
                                            const std::function<void(std::size_t)>& progress) const {
  if (pointers.empty()) return {};
  const Impl& impl = *impl_;
  impl.check_gpus(pointers);
  if (use_engine_server()) {
    EngineRequest request = impl.server_request(EngineRequest::Kind::each, pointers, options);
    request.jobs = jobs;
    std::vector<RunResult> results = run_on_engine_server(request);
    impl.echo(results, pointers, true, Impl::Heldout::from_engine_server);
    return results;
  }
  // The runs compiled in batches before their engine processes are forked (engine_process.hpp).
  std::vector<CompiledRun> runs(pointers.size());
  const auto prepare = [&](std::size_t i) {
    runs[i] = engine_run(impl.model, compile_run(impl.model, impl.calibration, {pointers[i]}), options);
    return runs[i].memory_bytes();
  };
  const auto work = [&](std::size_t i) { return encode_run_results(local_engine()(impl.model, runs[i], options)); };
  std::vector<RunResult> results;
  for (const std::string& bytes : run_in_child_processes(pointers.size(), prepare, work, jobs, progress))
    results.push_back(decode_run_results(bytes).front());
  impl.echo(results, pointers, true);
  return results;
}

RunResult Simulation::run_transfers(const std::vector<DeviceTransfer>& transfers, const RunOptions& options) const {
  const Impl& impl = *impl_;
  if (transfers.empty()) throw InputError("transfers", "", "[]", "at least one transfer");
  Schedule s;
  s.algorithm = "transfers/direct";
  s.request.op = CollectiveOp::send_recv;
  s.phases = {"transfers"};
  std::vector<std::vector<int>> rank_hosts(1);
  auto host_of = [&](const std::string& name, const std::string& which) {
    const int v = impl.graph.find_vertex(name);
    const int h = v >= 0 ? impl.model.host_of_vertex(v) : -1;
    if (h < 0)
      throw InputError("transfers", "", which + " '" + name + "'", "a GPU or CPU: gpuN, cpuN or a name such as " +
                                                                        impl.graph.vertices()[impl.graph.gpu_vertex(0)].name);
    const auto& vx = impl.graph.vertices()[v];
    if (vx.kind == VertexKind::gpu && !impl.model.gpu_failure(vx.index).empty())
      throw SimulationError(vx.name + " cannot take part: " + impl.model.gpu_failure(vx.index));
    rank_hosts[0].push_back(h);
    return static_cast<int>(rank_hosts[0].size()) - 1;
  };
  for (const auto& t : transfers) {
    Task task;
    task.id = static_cast<int>(s.tasks.size());
    task.src = Endpoint::rank(host_of(t.src, "src"));
    task.dsts = {Endpoint::rank(host_of(t.dst, "dst"))};
    task.bytes = t.bytes;
    s.request.bytes = std::max(s.request.bytes, t.bytes);
    s.tasks.push_back(task);
  }
  if (use_engine_server()) {
    EngineRequest request = impl.server_request(EngineRequest::Kind::transfers, {}, options);
    request.transfers = transfers;
    return run_on_engine_server(request).front();
  }
  const CompiledRun run = engine_run(impl.model, compile_run(impl.model, impl.calibration, {&s}, &rank_hosts), options);
  const std::string bytes =
      run_in_child_process([&] { return encode_run_results(local_engine()(impl.model, run, options)); });
  RunResult r = decode_run_results(bytes).front();
  r.op = "transfers";
  r.gpus = static_cast<int>(transfers.size());
  r.system = impl.graph.spec().id;
  r.racks = impl.graph.racks();
  r.rack_unit = impl.graph.spec().rack.unit;
  r.calibration = impl.calibration.name;
  for (const auto& item : impl.failures.items) r.failures.push_back(item.text);
  return r;
}

std::string Simulation::quotient_refused(const Schedule& schedule, const RunOptions& options) const {
  if (!schedule.symmetry) return "no symmetry";
  if (!options.aggregate) return "aggregation turned off";
  if (options.record_trace) return "a trace names every task";
  if (options.gpu_reduce_kernel) return "GPU reduction kernels share their GPUs";
  if (!impl_->failures.items.empty()) return "a failure scenario";
  return symmetry_breaks(impl_->model, schedule);
}

RunResult Simulation::run(const Schedule& schedule, const RunOptions& options) const {
  return run_concurrent(std::vector<const Schedule*>{&schedule}, options).front();
}

std::vector<RunResult> Simulation::run_concurrent(const std::vector<Schedule>& schedules, const RunOptions& options) const {
  std::vector<const Schedule*> pointers;
  for (const auto& s : schedules) pointers.push_back(&s);
  return run_concurrent(pointers, options);
}

}  // namespace racksim
