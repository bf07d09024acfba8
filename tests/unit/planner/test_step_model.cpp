// The step model's assembly checked in closed form with a fake collective model whose times are chosen
// by the test: pipeline bubble, send/recv on fill and drain, TP/EP counts per layer, DP overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/step_model.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/model_spec.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

// Every collective takes `fixed` seconds, whatever its size and group.
class FixedCost : public CommCost {
 public:
  explicit FixedCost(double fixed) : fixed_(fixed) {}
  std::string name() const override { return "fixed"; }

 protected:
  Answer evaluate(const CollectiveRequest&) override { return {fixed_, "fixed"}; }

 private:
  double fixed_;
};

const char* kDense = R"({"schema_version": 1, "id": "d4", "name": "d4", "source": "test",
  "layers": 4, "hidden_size": 1024, "intermediate_size": 4096, "vocab_size": 32000,
  "attention": {"kind": "gqa", "heads": 16, "kv_heads": 8, "head_dim": 64}})";
const char* kMoe = R"({"schema_version": 1, "id": "m4", "name": "m4", "source": "test",
  "layers": 4, "hidden_size": 1024, "vocab_size": 32000,
  "attention": {"kind": "gqa", "heads": 16, "kv_heads": 8, "head_dim": 64},
  "moe": {"experts": 8, "top_k": 2, "expert_intermediate_size": 1024}})";

struct Fixture {
  TopologyGraph graph{SystemCatalog::shipped().load("gb200-nvl72"), 1};
  ComputeTable table = ComputeTable::shipped();
  SystemContext sys = make_system_context(graph, table.lookup("gb200-nvl72", "b200"));
  TrainingJob job;
  Fixture() {
    job.global_batch = 64;
    job.seq_len = 1024;
  }
};

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(StepModel, PipelineBubbleAndSendRecv) {
  Fixture f;
  const ModelSpec m = model_from_json_text(kDense, "d4");
  const RankPlacement p(f.graph, 1, 4);
  ParallelLayout l;
  l.pp = 2, l.dp = 2;
  l.micro_batch = 1;
  l.micro_batches = 32;  // 64 sequences / (dp 2 x micro-batch 1)
  l.schedule = PipelineSchedule::one_f_one_b;
  FixedCost comm(1e-3);
  const StepEstimate a = estimate_step(m, f.job, f.sys, p, l, comm);
  ASSERT_EQ(a.stage_times.size(), 2u);
  const double t_max = *std::max_element(a.stage_times.begin(), a.stage_times.end());
  // 1F1B: bubble = (p - 1) x mean stage time; send/recv exposed on fill and drain: 2 (p - 1) x 1 ms
  EXPECT_DOUBLE_EQ(a.bubble_s, 1 * sum(a.stage_times) / 2);
  EXPECT_DOUBLE_EQ(a.comm_exposed("pp"), 2 * 1 * 1e-3);
  EXPECT_NEAR(a.step_s, 32 * t_max + a.bubble_s + a.comm_exposed("pp") + a.comm_exposed("dp") + a.optimizer_s + a.offload_s,
              1e-12);
  // interleaved with 2 chunks per GPU halves the bubble, same stage times
  l.schedule = PipelineSchedule::interleaved;
  l.virtual_stages = 2;
  const StepEstimate b = estimate_step(m, f.job, f.sys, p, l, comm);
  EXPECT_DOUBLE_EQ(b.bubble_s, a.bubble_s / 2);
  EXPECT_DOUBLE_EQ(b.stage_times[0], a.stage_times[0]);
}

TEST(StepModel, TensorAndExpertCollectivesPerLayer) {
  Fixture f;
  f.job.moe_imbalance = 1.5;
  const ModelSpec m = model_from_json_text(kMoe, "m4");
  const RankPlacement p(f.graph, 1, 8);
  ParallelLayout l;
  l.tp = 2, l.ep = 4;
  l.micro_batch = 2;
  l.micro_batches = 8;  // 64 / (dp 1 x ep 4 x 2)
  FixedCost comm(1e-4);
  const StepEstimate e = estimate_step(m, f.job, f.sys, p, l, comm);
  // TP: 2 (all-gather + reduce-scatter) pairs per layer in forward and again in backward, 4 layers, 8 micro-batches
  const double tp = 8 * 4 * 2 * 2 * (2 * 1e-4);
  // EP: dispatch + combine per MoE layer, forward and backward, times the imbalance
  const double ep = 8 * 4 * 4 * 1.5 * 1e-4;
  double tp_total = 0, ep_total = 0;
  for (const auto& c : e.comm) {
    if (c.kind == "tp") tp_total = c.total_s;
    if (c.kind == "ep") ep_total = c.total_s;
  }
  EXPECT_NEAR(tp_total, tp, 1e-12);
  EXPECT_NEAR(ep_total, ep, 1e-12);
  // no overlap asked: all of it is exposed
  EXPECT_NEAR(e.comm_exposed("tp"), tp, 1e-12);
  f.job.tp_overlap = 0.75;
  f.job.ep_overlap = 1.0;
  const StepEstimate o = estimate_step(m, f.job, f.sys, p, l, comm);
  EXPECT_NEAR(o.comm_exposed("tp"), tp / 4, 1e-12);
  EXPECT_NEAR(o.comm_exposed("ep"), 0, 1e-12);
  // full recompute repeats the forward's collectives
  l.recompute = Recompute::full;
  f.job.tp_overlap = 0;
  const StepEstimate r = estimate_step(m, f.job, f.sys, p, l, comm);
  EXPECT_NEAR(r.comm_exposed("tp"), tp * 1.5, 1e-12);
}

TEST(StepModel, DataParallelOverlapWindow) {
  Fixture f;
  const ModelSpec m = model_from_json_text(kDense, "d4");
  const RankPlacement p(f.graph, 1, 8);
  ParallelLayout l;
  l.dp = 8;
  l.micro_batches = 8;
  l.zero_stage = 1;
  // Cheap collectives hide entirely behind the last backward and the first forward.
  FixedCost cheap(1e-9);
  EXPECT_EQ(estimate_step(m, f.job, f.sys, p, l, cheap).comm_exposed("dp"), 0);
  // Slow ones: reduce-scatter (100 s) minus the backward window plus all-gather (100 s) minus the
  // forward window; forward + backward = the stage time of one micro-batch.
  FixedCost slow(100);
  const StepEstimate e = estimate_step(m, f.job, f.sys, p, l, slow);
  EXPECT_NEAR(e.comm_exposed("dp"), 200 - e.stage_times[0], 1e-9);
  // ZeRO-3 pays all-gather, all-gather + reduce-scatter per micro-batch, each beyond its window
  l.zero_stage = 3;
  const StepEstimate z = estimate_step(m, f.job, f.sys, p, l, slow);
  EXPECT_NEAR(z.comm_exposed("dp"), 8 * (300 - z.stage_times[0]), 1e-6);
}

TEST(StepModel, LowerBoundNeverExceedsTheStep) {
  Fixture f;
  const ModelSpec m = model_from_json_text(kMoe, "m4");
  const RankPlacement p(f.graph, 1, 8);
  FixedCost comm(1e-3);
  for (int pp : {1, 2}) {
    ParallelLayout l;
    l.pp = pp, l.ep = 8 / pp;
    l.micro_batches = 64 / l.ep;
    l.schedule = pp > 1 ? PipelineSchedule::one_f_one_b : PipelineSchedule::none;
    const double bound = step_lower_bound(m, f.job, f.sys, l);
    EXPECT_GT(bound, 0);
    EXPECT_LE(bound, estimate_step(m, f.job, f.sys, p, l, comm).step_s);
  }
}

}  // namespace
}  // namespace racksim
