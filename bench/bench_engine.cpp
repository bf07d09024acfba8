// Whole simulations on the SimGrid engine, as a user runs them: build the schedule once, then time
// Simulation::run, which forks a fresh engine process, builds the platform the run needs, simulates and
// returns the result. Parts are timed separately: the engine process alone (fork + exit), schedule
// building, a 25-size sweep. Run: build/bench/racksim_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "models/collectives/rank_placement.hpp"
#include "models/collectives/registry.hpp"
#include "sim/engine/aggregation.hpp"
#include "sim/engine/compiled_run.hpp"
#include "sim/engine/engine_process.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/platform/platform_model.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

// CPU seconds of this process and of its finished children (the engine processes): on a shared machine
// the wall time includes waiting for a core; CPU time is what a run costs.
double cpu_s(int who) {
  rusage r{};
  getrusage(who, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

TopologyGraph graph(int racks) { return TopologyGraph(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), racks); }

CollectiveRequest request(const TopologyGraph& g, CollectiveOp op, const char* algo, int gpus, std::uint64_t bytes) {
  CollectiveRequest r;
  r.op = op;
  r.algorithm = algo;
  r.gpus = place_ranks(g, gpus);
  r.bytes = bytes;
  return r;
}

void run_collective(benchmark::State& state, int racks, CollectiveOp op, const char* algo, std::uint64_t bytes) {
  const TopologyGraph g = graph(racks);
  const Schedule s = build_schedule(request(g, op, algo, 72 * racks, bytes), g);
  const Simulation sim(g, Calibration::none());
  double simulated = 0;
  const double self0 = cpu_s(RUSAGE_SELF), child0 = cpu_s(RUSAGE_CHILDREN);
  for (auto _ : state) simulated = sim.run(s).time_s;
  const double n = static_cast<double>(state.iterations());
  state.counters["caller_cpu_ms"] = (cpu_s(RUSAGE_SELF) - self0) / n * 1e3;
  state.counters["engine_cpu_ms"] = (cpu_s(RUSAGE_CHILDREN) - child0) / n * 1e3;
  long transfers = 0;
  for (const auto& t : s.tasks) transfers += static_cast<long>(t.dsts.size());
  state.counters["tasks"] = static_cast<double>(s.tasks.size());
  state.counters["transfers"] = static_cast<double>(transfers);
  state.counters["simulated_us"] = simulated * 1e6;
  state.counters["transfers_per_s"] =
      benchmark::Counter(static_cast<double>(transfers), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Ring72_1GiB(benchmark::State& s) { run_collective(s, 1, CollectiveOp::all_reduce, "ring", 1ull << 30); }
void BM_Nvls72_1GiB(benchmark::State& s) { run_collective(s, 1, CollectiveOp::all_reduce, "nvls", 1ull << 30); }
void BM_AllToAll72_1GiB(benchmark::State& s) { run_collective(s, 1, CollectiveOp::all_to_all, "direct", 1ull << 30); }
void BM_Hierarchical_8Racks_1GiB(benchmark::State& s) {
  run_collective(s, 8, CollectiveOp::all_reduce, "hierarchical", 1ull << 30);
}
void BM_Hierarchical_64Racks_1GiB(benchmark::State& s) {
  run_collective(s, 64, CollectiveOp::all_reduce, "hierarchical", 1ull << 30);
}

// The fixed cost of one run: fork a child that does nothing, wait for it.
void BM_EngineProcessAlone(benchmark::State& state) {
  const double child0 = cpu_s(RUSAGE_CHILDREN);
  for (auto _ : state) benchmark::DoNotOptimize(run_in_child_process([] { return std::string(); }));
  state.counters["engine_cpu_ms"] = (cpu_s(RUSAGE_CHILDREN) - child0) / static_cast<double>(state.iterations()) * 1e3;
}

void BM_BuildSchedule_Hierarchical_8Racks(benchmark::State& state) {
  const TopologyGraph g = graph(8);
  const CollectiveRequest r = request(g, CollectiveOp::all_reduce, "hierarchical", 576, 1ull << 30);
  for (auto _ : state) benchmark::DoNotOptimize(build_schedule(r, g).tasks.size());
}

// What `racksim sweep` does for 25 sizes (8 B .. 128 MiB) of a 72-GPU ring all-reduce.
void BM_Sweep25_Ring72(benchmark::State& state) {
  const TopologyGraph g = graph(1);
  const Simulation sim(g, Calibration::none());
  const double self0 = cpu_s(RUSAGE_SELF), child0 = cpu_s(RUSAGE_CHILDREN);
  for (auto _ : state) {
    double total = 0;
    for (int i = 0; i < 25; ++i) total += sim.run(build_schedule(request(g, CollectiveOp::all_reduce, "ring", 72, 8ull << i), g)).time_s;
    benchmark::DoNotOptimize(total);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["caller_cpu_ms"] = (cpu_s(RUSAGE_SELF) - self0) / n * 1e3;
  state.counters["engine_cpu_ms"] = (cpu_s(RUSAGE_CHILDREN) - child0) / n * 1e3;
}

// What the engine process does before SimGrid for the 72-GPU ring's 10 224 tasks: compile the schedule
// and find its classes of copies (aggregation.hpp), in this process, no fork. Arg: log2 of the bytes.
void BM_CompileAggregate_Ring72(benchmark::State& state) {
  const TopologyGraph g = graph(1);
  const Calibration calibration = Calibration::none();
  const PlatformModel model(g, calibration, {});
  const Schedule s = build_schedule(request(g, CollectiveOp::all_reduce, "ring", 72, 1ull << state.range(0)), g);
  int simulated = 0;
  for (auto _ : state) simulated = engine_run(model, compile_run(model, calibration, {&s}), {}).tasks();
  state.counters["tasks"] = static_cast<double>(s.tasks.size());
  state.counters["simulated_tasks"] = simulated;
}

// The work happens in the forked engine process: wall-clock time is what counts (UseRealTime).
BENCHMARK(BM_EngineProcessAlone)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);
BENCHMARK(BM_Ring72_1GiB)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
BENCHMARK(BM_Nvls72_1GiB)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
BENCHMARK(BM_AllToAll72_1GiB)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_BuildSchedule_Hierarchical_8Racks)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Hierarchical_8Racks_1GiB)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Hierarchical_64Racks_1GiB)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_CompileAggregate_Ring72)->Arg(10)->Arg(20)->Arg(30)->Arg(34)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sweep25_Ring72)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace racksim
