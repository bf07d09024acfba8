// The layout planner, as `racksim plan` runs it: the search alone (pre-screen + analytic pricing) at 1, 4
// and 8 GB200 NVL72 racks, the whole plan (engine on the top 3, failures, 3-system comparison) at 8, and
// one step estimate. Issue 8's goal: a full 8-rack search in under 10 s on the 2-core build machine.
// Run: build/bench/racksim_bench --benchmark_filter=Plan
#include <benchmark/benchmark.h>

#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/plan.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/model_catalog.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

PlanRequest deepseek(int racks, bool whole) {
  PlanRequest q;
  q.system = "gb200-nvl72";
  q.racks = racks;
  q.model = "deepseek-v3";
  q.job.global_batch = 4096;
  q.job.seq_len = 4096;
  if (!whole) {
    q.engine_top = 0;
    q.compare.clear();
    q.failures = false;
  }
  return q;
}

void BM_PlanSearch(benchmark::State& state) {
  const PlanRequest q = deepseek(static_cast<int>(state.range(0)), false);
  long screened = 0, priced = 0, cut = 0;
  for (auto _ : state) {
    const PlanResult r = run_plan(q);
    screened = r.search.screened;
    priced = r.search.evaluated;
    cut = r.search.cut_by_comm;
  }
  state.counters["layouts_screened"] = static_cast<double>(screened);
  state.counters["layouts_priced"] = static_cast<double>(priced);
  state.counters["layouts_cut_by_collectives"] = static_cast<double>(cut);
}
BENCHMARK(BM_PlanSearch)->Arg(1)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);

void BM_PlanWhole(benchmark::State& state) {
  const PlanRequest q = deepseek(static_cast<int>(state.range(0)), true);
  for (auto _ : state) benchmark::DoNotOptimize(run_plan(q).search.ranked.size());
}
BENCHMARK(BM_PlanWhole)->Arg(8)->Unit(benchmark::kMillisecond);

void BM_PlanStepEstimate(benchmark::State& state) {
  const TopologyGraph graph(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), 4);
  const ComputeTable table = ComputeTable::shipped();
  const SystemContext sys = make_system_context(graph, table);
  const ModelSpec model = ModelCatalog::shipped().load("deepseek-v3");
  TrainingJob job;
  job.global_batch = 4096;
  job.seq_len = 4096;
  const RankPlacement p(graph, 4, 64);
  ParallelLayout l;
  l.cp = 2, l.pp = 4, l.dp = 32, l.ep = 16;  // EP folded into CP x DP = 64
  l.micro_batches = 128;
  l.schedule = PipelineSchedule::interleaved;
  l.virtual_stages = 4;
  l.zero_stage = 2;
  AnalyticCommCost comm(graph, load_calibration("default"));
  const MeshGroups groups = mesh_groups(p, l, comm);
  for (auto _ : state) benchmark::DoNotOptimize(estimate_step(model, job, sys, p, l, comm, &groups).step_s);
}
BENCHMARK(BM_PlanStepEstimate)->Unit(benchmark::kMicrosecond);

// A published layout pinned (NVIDIA's DeepSeek-V3 MXFP8 recipe on 256 B200, NeMo 26.04.01), as
// `racksim plan --tp 1 --cp 1 --pp 8 --dp 32 --ep 32 --etp 1 --vp 2 ...` runs it: issue 12 wants it well
// under a second.
void BM_PlanPinned(benchmark::State& state) {
  PlanRequest q;
  q.system = "hgx-b200";
  q.racks = 32;
  q.gpus = 256;
  q.model = "deepseek-v3";
  q.job.global_batch = 4096;
  q.job.seq_len = 4096;
  q.precision = "mxfp8";
  q.job.moe_imbalance = 1;
  q.job.dispatcher = MoeDispatcher::deepep;
  q.job.ep_overlap = true;
  SearchConstraints& c = q.constraints;
  c.tp = 1, c.cp = 1, c.pp = 8, c.dp = 32, c.ep = 32, c.etp = 1, c.vp = 2, c.micro_batch = 1, c.zero_stage = 1;
  c.micro_batch_options = {1};
  c.recompute = parse_recompute("selective:mla_up_proj,mlp", "bench");
  c.offload = "none";
  q.top = 1;
  q.engine_top = 0;
  q.compare.clear();
  q.failures = false;
  for (auto _ : state) benchmark::DoNotOptimize(run_plan(q).search.ranked.front().estimate.step_s);
}
BENCHMARK(BM_PlanPinned)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace racksim
