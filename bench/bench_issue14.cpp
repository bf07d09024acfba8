// Issue 14's table, one benchmark per row, inside one process (bench/cli_timings.sh times the same rows as
// whole `racksim` calls). Each row is what the CLI runs with the shipped calibration: topology and schedule
// are built once outside the loop (their costs are BM_Issue14_Setup/...), then the Simulation runs, which
// forks a fresh engine process per run. Counters: the goal in ms, the engine's and the caller's CPU time.
//
//   build/bench/racksim_bench --benchmark_filter=Issue14               the rows that take seconds or less
//   RACKSIM_BENCH_SLOW=1 build/bench/racksim_bench --benchmark_filter=Issue14   also the slow rows (the
//                        DeepSeek-V3 plan: about a second; 100 008 GPUs hierarchical with a tree across 1 389
//                        racks: its schedule takes ~10 s to build outside the loop, the row times its run, ~20 s)
// The flat 576-GPU ring runs as its quotient (165 600 of its 10.6 M transfers, counters `listed_transfers` and
// `transfers`), as the CLI runs it.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <string>

#include "models/collectives/rank_placement.hpp"
#include "models/collectives/registry.hpp"
#include "models/planner/plan.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

double cpu_s(int who) {
  rusage r{};
  getrusage(who, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

struct Row {
  const char* system;
  int racks;
  int gpus;
  const char* algo;
  const char* outer = "ring";  // hierarchical: the algorithm across racks (--outer)
};

struct Prepared {
  TopologyGraph graph;
  Calibration calibration;
  CollectiveRequest request;
  explicit Prepared(const Row& row)
      : graph(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(row.system), row.racks), calibration(load_calibration("default")) {
    request.op = CollectiveOp::all_reduce;
    request.algorithm = row.algo;
    request.outer_algorithm = row.outer;
    request.gpus = place_ranks(graph, row.gpus);
    request.bytes = kGiB;
  }
};

void counters(benchmark::State& state, double goal_ms, double self0, double child0) {
  const double n = static_cast<double>(state.iterations());
  state.counters["goal_ms"] = goal_ms;
  state.counters["caller_cpu_ms"] = (cpu_s(RUSAGE_SELF) - self0) / n * 1e3;
  state.counters["engine_cpu_ms"] = (cpu_s(RUSAGE_CHILDREN) - child0) / n * 1e3;
}

// One 1 GiB all-reduce of `row`, as `racksim collective` runs it.
void collective_row(benchmark::State& state, Row row, double goal_ms) {
  const Prepared p(row);
  const Simulation sim(p.graph, p.calibration);
  Schedule schedule;
  try {
    schedule = schedule_for_engine(sim, p.graph, p.request, p.calibration, RunOptions{});  // the quotient where there is one
  } catch (const InputError& e) {  // over a limit: a row that says so
    state.SkipWithError(e.what());
    for (auto _ : state) {
    }
    return;
  }
  long transfers = 0;  // listed (one per orbit in a quotient); the full schedule's are `full_transfers`
  for (const auto& t : schedule.tasks) transfers += static_cast<long>(t.dsts.size());
  const long full_transfers = schedule.symmetry ? transfers * static_cast<long>(schedule.symmetry->rank_maps.size()) : transfers;
  double simulated = 0;
  const double self0 = cpu_s(RUSAGE_SELF), child0 = cpu_s(RUSAGE_CHILDREN);
  for (auto _ : state) simulated = sim.run(schedule).time_s;
  counters(state, goal_ms, self0, child0);
  state.counters["transfers"] = static_cast<double>(full_transfers);
  state.counters["listed_transfers"] = static_cast<double>(transfers);
  state.counters["simulated_us"] = simulated * 1e6;
}

// `racksim sweep --system gb200-nvl72 --op all_reduce --gpus 72 --algo ring -b 1K -e 16G`: 25 sizes,
// schedules built inside the loop as the CLI builds them (schedule_for_engine: the quotient where the
// algorithm lists one; until session 56 this row built the full schedules, which the CLI stopped doing in
// session 53, and measured 341 ms where the CLI took 53). The CLI also overlaps the building with the runs on
// a second thread (cmd_sweep.cpp); here they follow one another.
void sweep_row(benchmark::State& state) {
  const Prepared p(Row{"gb200-nvl72", 1, 72, "ring"});
  const Simulation sim(p.graph, p.calibration);
  const double self0 = cpu_s(RUSAGE_SELF), child0 = cpu_s(RUSAGE_CHILDREN);
  for (auto _ : state) {
    std::vector<Schedule> schedules;
    for (int i = 0; i < 25; ++i) {
      CollectiveRequest r = p.request;
      r.bytes = 1024ull << i;  // 1 KiB .. 16 GiB
      schedules.push_back(schedule_for_engine(sim, p.graph, r, p.calibration, RunOptions{}));
    }
    std::vector<const Schedule*> pointers;
    for (const auto& s : schedules) pointers.push_back(&s);
    benchmark::DoNotOptimize(sim.run_each(pointers, 1).size());
  }
  counters(state, 220, self0, child0);
}

// `racksim plan --system gb200-nvl72 --racks 8 --model deepseek-v3 --global-batch 4096 --seq-len 4096`.
void plan_row(benchmark::State& state) {
  PlanRequest q;
  q.system = "gb200-nvl72";
  q.racks = 8;
  q.model = "deepseek-v3";
  q.job.global_batch = 4096;
  q.job.seq_len = 4096;
  const double self0 = cpu_s(RUSAGE_SELF), child0 = cpu_s(RUSAGE_CHILDREN);
  for (auto _ : state) benchmark::DoNotOptimize(run_plan(q).search.ranked.size());
  counters(state, 1000, self0, child0);
}

// What a row costs before any simulation: the topology, the graph, the calibration, the schedule.
void setup_row(benchmark::State& state, Row row) {
  for (auto _ : state) {
    const Prepared p(row);
    benchmark::DoNotOptimize(build_schedule(p.request, p.graph, p.calibration).tasks.size());
  }
}

bool slow_rows_wanted() {
  const char* v = std::getenv("RACKSIM_BENCH_SLOW");  // a benchmark program's own switch, not the library's
  return v && *v && std::string(v) != "0";
}

// The work happens in forked engine processes: wall-clock time is what counts.
void tune(benchmark::internal::Benchmark* b, int iterations) {
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(iterations);
}

// Registered at start-up; the slow rows only with RACKSIM_BENCH_SLOW=1 (they take seconds to set up).
[[maybe_unused]] const bool registered = [] {
  const bool slow = slow_rows_wanted();
  auto row = [](const char* name, Row r, double goal_ms, int iterations) {
    tune(benchmark::RegisterBenchmark(name, [=](benchmark::State& s) { collective_row(s, r, goal_ms); }), iterations);
  };
  row("BM_Issue14/hgx-h100_8gpu_ring", Row{"hgx-h100", 1, 8, "ring"}, 5, 10);
  row("BM_Issue14/gb200_72gpu_ring", Row{"gb200-nvl72", 1, 72, "ring"}, 14, 5);
  tune(benchmark::RegisterBenchmark("BM_Issue14/gb200_72gpu_ring_sweep25_1K-16G", sweep_row), 1);
  row("BM_Issue14/gb200_576gpu_flat_ring_8racks", Row{"gb200-nvl72", 8, 576, "ring"}, 700, 1);
  row("BM_Issue14/gb200_576gpu_hierarchical_8racks", Row{"gb200-nvl72", 8, 576, "hierarchical"}, 500, 1);
  row("BM_Issue14/gb200_1440gpu_hierarchical_20racks", Row{"gb200-nvl72", 20, 1440, "hierarchical"}, 500, 1);
  row("BM_Issue14/gb200_4608gpu_hierarchical_64racks", Row{"gb200-nvl72", 64, 4608, "hierarchical"}, 2000, 1);
  // Issue 14's "100 000 GPUs in a minute" (the whole CLI call: bench/cli_timings.sh --slow).
  if (slow)
    row("BM_Issue14/gb200_100008gpu_hierarchical_tree_1389racks", Row{"gb200-nvl72", 1389, 100008, "hierarchical", "tree"},
        60000, 1);
  if (slow) tune(benchmark::RegisterBenchmark("BM_Issue14/plan_deepseek-v3_8racks", plan_row), 1);
  for (const auto& [name, r] : {std::pair{"BM_Issue14_Setup/gb200_72gpu_ring", Row{"gb200-nvl72", 1, 72, "ring"}},
                                std::pair{"BM_Issue14_Setup/gb200_1440gpu_hierarchical_20racks",
                                          Row{"gb200-nvl72", 20, 1440, "hierarchical"}}})
    tune(benchmark::RegisterBenchmark(name, [r = r](benchmark::State& s) { setup_row(s, r); }), 3);
  return true;
}();

}  // namespace
}  // namespace racksim
