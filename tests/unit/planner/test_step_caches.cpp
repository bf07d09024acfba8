// The planner search's caches give the same results to the bit as computing everything afresh: the layer
// costs shared by a search (LayerCostCache), the memory fitter's per-stage parts, and the flow cache's
// classes of identical flows. A wrong key would silently change a plan; these compare cached and
// uncached answers over layouts that differ in one input at a time.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../collectives/collective_test_support.hpp"
#include "models/analytic/analytic_model.hpp"
#include "models/analytic/flow_cost.hpp"
#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/step_costs.hpp"
#include "models/planner/step_model.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/memory_fit.hpp"
#include "models/workload/model_spec.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

// Every collective takes a time that grows with its bytes and group, so that layouts differ in it.
class GrowingCost : public CommCost {
 public:
  std::string name() const override { return "growing"; }

 protected:
  Answer evaluate(const CollectiveRequest& r) override {
    return {1e-6 * static_cast<double>(r.gpus.size()) + static_cast<double>(r.bytes) * 1e-11, "growing", 4};
  }
};

const char* kMoeMtp = R"({"schema_version": 1, "id": "m6", "name": "m6", "source": "test",
  "layers": 6, "hidden_size": 1024, "intermediate_size": 4096, "vocab_size": 32000, "mtp_layers": 1,
  "attention": {"kind": "gqa", "heads": 16, "kv_heads": 8, "head_dim": 64},
  "moe": {"experts": 8, "top_k": 2, "expert_intermediate_size": 1024, "shared_experts": 1, "first_dense_layers": 1}})";

struct CachesFixture {
  TopologyGraph graph{SystemCatalog::shipped().load("gb200-nvl72"), 1};
  ComputeTable table = ComputeTable::shipped();
  SystemContext sys = make_system_context(graph, table);
  TrainingJob job;
  ModelSpec model = model_from_json_text(kMoeMtp, "m6");
  CachesFixture() {
    job.global_batch = 64;
    job.seq_len = 1024;
  }
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const StepEstimate& a, const StepEstimate& b) {
  EXPECT_TRUE(same_bits(a.step_s, b.step_s));
  for (int f = 0; f < kFeatureCount; ++f) EXPECT_TRUE(same_bits(a.work.x[f], b.work.x[f])) << feature_name(f);
  ASSERT_EQ(a.stage_times.size(), b.stage_times.size());
  for (std::size_t s = 0; s < a.stage_times.size(); ++s) EXPECT_TRUE(same_bits(a.stage_times[s], b.stage_times[s]));
  EXPECT_TRUE(same_bits(a.memory.total(), b.memory.total()));
  EXPECT_EQ(a.pp_layout, b.pp_layout);
}

// Layouts of 8 GPUs that differ in one input each from the first.
std::vector<ParallelLayout> layouts() {
  std::vector<ParallelLayout> out;
  ParallelLayout base;
  base.tp = 2, base.pp = 2, base.dp = 2, base.ep = 2;
  base.micro_batch = 1, base.micro_batches = 32;
  base.schedule = PipelineSchedule::one_f_one_b;
  out.push_back(base);
  ParallelLayout l = base;
  l.micro_batch = 2, l.micro_batches = 16;
  out.push_back(l);
  l = base;
  l.ep = 4;
  out.push_back(l);
  l = base;
  l.etp = 2;
  out.push_back(l);
  l = base;
  l.recompute.granularity = Recompute::selective, l.recompute.modules = kRecLayernorm | kRecMoeAct;
  out.push_back(l);
  l.recompute.modules |= kRecMoe;
  out.push_back(l);
  l = base;
  l.recompute.granularity = Recompute::full;
  out.push_back(l);
  l = base;
  l.schedule = PipelineSchedule::interleaved, l.virtual_stages = 2;
  out.push_back(l);
  l = base;
  l.tp = 1, l.dp = 4;
  out.push_back(l);
  l = base;
  l.zero_stage = 3, l.offload_activations = true;
  out.push_back(l);
  return out;
}

TEST(StepCaches, LayerCostCacheGivesTheUncachedEstimates) {
  CachesFixture f;
  const RankPlacement p(f.graph, 1, 8);
  std::vector<StepEstimate> fresh;
  std::vector<double> bounds;
  for (const ParallelLayout& l : layouts()) {
    GrowingCost comm;
    fresh.push_back(estimate_step(f.model, f.job, f.sys, p, l, comm));
    bounds.push_back(step_lower_bound(f.model, f.job, f.sys, l));
  }
  step_detail::LayerCostCache cache(f.model, f.job, *f.sys.compute);
  const step_detail::LayerCostCache::Scope scope(cache);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass takes everything from the cache
    const std::vector<ParallelLayout> ls = layouts();
    for (std::size_t i = 0; i < ls.size(); ++i) {
      GrowingCost comm;
      expect_same(estimate_step(f.model, f.job, f.sys, p, ls[i], comm), fresh[i]);
      EXPECT_TRUE(same_bits(step_lower_bound(f.model, f.job, f.sys, ls[i]), bounds[i]));
    }
  }
  EXPECT_GT(cache.works(), 0u);
  EXPECT_GT(cache.computes(), 0u);
}

TEST(StepCaches, LayerCostCacheKeysEveryShapeField) {
  CachesFixture f;
  step_detail::LayerCostCache cache(f.model, f.job, *f.sys.compute);
  const LayerType moe = f.model.layer_type(f.model.layers - 1);
  LayerShape s;
  s.par = ParallelShape{2, 1, 2, 1};
  s.seq_len = 1024;
  cache.work(step_detail::WorkKind::layer, moe, s);
  cache.work(step_detail::WorkKind::layer, moe, s);
  EXPECT_EQ(cache.works(), 1u);
  std::size_t n = 1;
  auto expect_new = [&](const LayerShape& changed, step_detail::WorkKind kind, const LayerType& t) {
    const LayerWork& w = cache.work(kind, t, changed);
    EXPECT_EQ(cache.works(), ++n);
    const LayerWork fresh = kind == step_detail::WorkKind::head  ? head_work(f.model, changed)
                            : kind == step_detail::WorkKind::mtp ? mtp_work(f.model, changed)
                                                                 : layer_work(f.model, t, changed);
    EXPECT_TRUE(same_bits(w.matmul_flops(), fresh.matmul_flops()));
    EXPECT_TRUE(same_bits(w.saved_all(), fresh.saved_all()));
  };
  for (int field = 0; field < 8; ++field) {
    LayerShape c = s;
    if (field == 0) c.par.tp = 4;
    if (field == 1) c.par.cp = 2;
    if (field == 2) c.par.ep = 4;
    if (field == 3) c.par.etp = 2;
    if (field == 4) c.micro_batch = 2;
    if (field == 5) c.seq_len = 2048;
    if (field == 6) c.imbalance = 1.5;
    if (field == 7) c.saved_input_bytes = 1;
    expect_new(c, step_detail::WorkKind::layer, moe);
  }
  expect_new(s, step_detail::WorkKind::layer, f.model.layer_type(0));  // the dense layer
  expect_new(s, step_detail::WorkKind::head, moe);
  expect_new(s, step_detail::WorkKind::mtp, moe);
}

TEST(StepCaches, MemoryFitterAgreesWithTheMemoryModelPerChoice) {
  CachesFixture f;
  for (const ParallelLayout& base : layouts()) {
    const std::vector<StageSlice> chunks = pipeline_chunks(f.model, f.job, f.sys, base);
    MemoryFitter fitter(f.model, f.job, base, chunks);
    // every choice twice, in an order that interleaves the fitter's keys; each against a fresh fitter
    for (int pass = 0; pass < 2; ++pass)
      for (int z : {0, 1, 3})
        for (bool oo : {false, true})
          for (int rc = 0; rc < 3; ++rc) {
            ParallelLayout l = base;
            l.zero_stage = z, l.shard_group = z == 3 ? 2 : 0, l.offload_optimizer = oo, l.offload_activations = !oo;
            l.recompute.granularity = rc == 0 ? Recompute::none : rc == 1 ? Recompute::selective : Recompute::full;
            l.recompute.modules = rc == 1 ? kRecLayernorm | kRecMlp : 0;
            int stage = -1, fresh_stage = -2;
            const MemoryBreakdown a = fitter.worst(l.zero_stage, l.shard_group, l.recompute, oo, !oo, &stage);
            const MemoryBreakdown b = layout_memory(f.model, f.job, f.sys, l, &fresh_stage, &chunks);
            EXPECT_TRUE(same_bits(a.total(), b.total()));
            EXPECT_TRUE(same_bits(a.host_offloaded, b.host_offloaded));
            EXPECT_TRUE(same_bits(a.activations, b.activations));
            EXPECT_EQ(stage, fresh_stage);
          }
  }
}

TEST(StepCaches, TrainingMemoryIsItsParameterAndActivationParts) {
  CachesFixture f;
  const std::vector<StageSlice> chunks{StageSlice{0, 3, true, false, false}, StageSlice{3, 3, false, true, true}};
  TrainingMemoryConfig c;
  c.shape = ParallelShape{2, 1, 2, 1};
  c.dp = 4, c.seq_len = 1024, c.zero_stage = 3, c.shard_group = 2;
  c.recompute.granularity = Recompute::selective, c.recompute.modules = kRecMoeAct;
  c.micro_batches_in_flight = 3, c.offload_optimizer = true, c.offload_activations = true;
  const MemoryBreakdown whole = training_memory_per_gpu(f.model, chunks, c);
  StageParams params(f.model, chunks, c.shape, c.mtp);
  SavedActivations saved(f.model, activation_shape(c));
  const MemoryBreakdown p = parameter_memory(params, c), a = activation_memory(f.model, chunks, c, saved);
  EXPECT_TRUE(same_bits(whole.weights, p.weights));
  EXPECT_TRUE(same_bits(whole.gathered, p.gathered));
  EXPECT_TRUE(same_bits(whole.activations, a.activations));
  EXPECT_TRUE(same_bits(whole.logits, a.logits));
  EXPECT_TRUE(same_bits(whole.host_offloaded, p.host_offloaded + a.host_offloaded));
  EXPECT_GT(a.activations, 0);
  EXPECT_GT(p.gathered, 0);
}

TEST(StepCaches, FlowClassesGiveTheUncachedAllToAll) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const Calibration cal = load_calibration("default");
  for (int n : {8, 72, 144}) {
    for (std::uint64_t bytes : {std::uint64_t{1} << 16, std::uint64_t{1} << 26}) {
      CollectiveRequest r;
      r.op = CollectiveOp::all_to_all;
      r.algorithm = "auto";
      r.gpus = test::first_gpus(n);
      r.bytes = bytes;
      const double fresh = analytic_collective(g, r, cal).time_s;
      FlowCache cache(g);
      const FlowCache::Scope scope(cache);
      for (int pass = 0; pass < 2; ++pass)  // the second from the cached flow set and its classes
        EXPECT_TRUE(same_bits(analytic_collective(g, r, cal).time_s, fresh)) << n << " GPUs, " << bytes << " B";
    }
  }
}

// The stage itself, line by line: an all-to-all priced from its classes (cached, from the flows' routes
// alone) has exactly the lines of every flow priced on its own without a cache, on a set whose flows
// load their links unevenly (1 GPU of a tray, 2 of the next, then 3, then 4, ...: C2C and NIC links
// shared by different numbers of flows).
TEST(StepCaches, AllToAllClassesHaveEveryFlowsLine) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const Calibration cal = load_calibration("default");
  std::vector<int> vertices;
  for (int gpu = 0; gpu < 144; ++gpu)
    if (gpu % 4 < 1 + (gpu / 4) % 4) vertices.push_back(g.gpu_vertex(gpu));  // 1, 2, 3, 4 GPUs of successive trays
  FlowTerms terms;
  terms.arch = "blackwell";
  terms.efficiency = 0.9;
  terms.kappa = 0.95;
  FlowCoster plain(g, cal, terms);
  std::vector<const FlowCoster::Path*> flows;
  for (int s : vertices)
    for (int d : vertices)
      if (s != d) flows.push_back(&plain.gpu_to_gpu(s, d));
  const StageCost every = plain.stage(flows);
  ASSERT_GT(every.lines.size(), 2u);  // uneven: several distinct lines
  FlowCache cache(g);
  const FlowCache::Scope scope(cache);
  for (int pass = 0; pass < 2; ++pass) {  // the second from the cached classes
    FlowCoster cached(g, cal, terms);
    const StageCost c = cached.all_to_all_stage(vertices);
    ASSERT_EQ(c.lines.size(), every.lines.size());
    for (std::size_t i = 0; i < c.lines.size(); ++i) {
      EXPECT_TRUE(same_bits(c.lines[i].first, every.lines[i].first)) << i;
      EXPECT_TRUE(same_bits(c.lines[i].second, every.lines[i].second)) << i;
    }
  }
}

}  // namespace
}  // namespace racksim
