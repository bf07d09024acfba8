// The step model's assembly checked in closed form with a fake collective model whose times are chosen
// by the test: pipeline bubble, send/recv per chunk boundary, TP/EP counts per layer, DP overlap, and
// the features the compute fit works on.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>
#include <stdexcept>

#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/plan.hpp"
#include "models/planner/step_model.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/model_catalog.hpp"
#include "models/workload/model_spec.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

// Every collective takes `fixed` seconds, whatever its size and group, on `channels` NCCL channels.
class FixedCost : public CommCost {
 public:
  explicit FixedCost(double fixed, int channels = 0) : fixed_(fixed), channels_(channels) {}
  std::string name() const override { return "fixed"; }

 protected:
  Answer evaluate(const CollectiveRequest&) override { return {fixed_, "fixed", channels_}; }

 private:
  double fixed_;
  int channels_;
};

const char* kDense = R"({"schema_version": 1, "id": "d4", "name": "d4", "source": "test",
  "layers": 4, "hidden_size": 1024, "intermediate_size": 4096, "vocab_size": 32000,
  "attention": {"kind": "gqa", "heads": 16, "kv_heads": 8, "head_dim": 64}})";
const char* kMoe = R"({"schema_version": 1, "id": "m4", "name": "m4", "source": "test",
  "layers": 4, "hidden_size": 1024, "vocab_size": 32000,
  "attention": {"kind": "gqa", "heads": 16, "kv_heads": 8, "head_dim": 64},
  "moe": {"experts": 8, "top_k": 2, "expert_intermediate_size": 1024}})";

// Parameters chosen by the test: collectives fully exposed, no pipeline overhead beyond the link.
ComputeParams test_params() {
  ComputeParams p = ComputeTable::shipped().params("blackwell");
  p.tp_exposed = 1;
  p.ep_exposed_overlapped = 0.25;
  p.pp_transfer_overhead_s = 0;
  return p;
}

struct StepFixture {
  TopologyGraph graph{SystemCatalog::shipped().load("gb200-nvl72"), 1};
  ComputeTable table = ComputeTable::shipped();
  SystemContext sys = make_system_context(graph, table.lookup("gb200-nvl72", "b200"), test_params());
  TrainingJob job;
  StepFixture() {
    job.global_batch = 64;
    job.seq_len = 1024;
  }
};

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(StepModel, PipelineBubbleAndSendRecv) {
  StepFixture f;
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
  // the balanced split never gives the last stage (it also holds the 32000-word LM head) more layers
  EXPECT_EQ(a.stage_layers[0] + a.stage_layers[1], 4);
  EXPECT_GE(a.stage_layers[0], a.stage_layers[1]);
  const double t_max = *std::max_element(a.stage_times.begin(), a.stage_times.end());
  // 1F1B: bubble = (p - 1) x mean stage time; send/recv on the critical path: every micro-batch's forward
  // and backward exchange plus fill and drain, 2 m + 2 (p - 1), 1 ms each
  EXPECT_NEAR(a.bubble_s, 1 * sum(a.stage_times) / 2, 1e-12);
  EXPECT_NEAR(a.comm_exposed("pp"), (2 * 32 + 2) * 1e-3, 1e-12);
  EXPECT_NEAR(a.step_s, 32 * t_max + a.bubble_s + a.comm_exposed("pp") + a.comm_exposed("dp") + a.optimizer_s + a.offload_s, 1e-9);
  // interleaved with VP = 2: four one-layer chunks, GPU 0 holding chunks 0 and 2; the bubble is
  // (p - 1) x mean / VP and every micro-batch crosses two chunk boundaries each way
  l.schedule = PipelineSchedule::interleaved;
  l.virtual_stages = 2;
  const StepEstimate b = estimate_step(m, f.job, f.sys, p, l, comm);
  EXPECT_NEAR(b.bubble_s, sum(b.stage_times) / 2 / 2, 1e-12);
  EXPECT_NEAR(b.comm_exposed("pp"), (2 * 32 * 2 + 2) * 1e-3, 1e-12);
  // the step is a Work whose time is the step
  EXPECT_NEAR(f.sys.compute->time_s(b.work), b.step_s, 1e-12);
}

TEST(StepModel, InterleavedChunksBalanceEachGpusSum) {
  // Llama 3 70B (80 equal layers, a 128k-word head) over TP 4 x PP 4 x VP 10: the step waits for the GPU whose
  // ten chunks sum to the most, so the split evens those sums (chunks balanced alone gave 22, 18, 24 and 16
  // layers a GPU), the head's GPU taking fewer layers, every chunk keeping one
  StepFixture f;
  const ModelSpec m = ModelCatalog::shipped().load("llama-3-70b");
  ASSERT_EQ(m.layers, 80);
  f.job.seq_len = 4096;
  f.job.precision = precision_for(f.table, "fp8-cs", f.table.lookup("gb200-nvl72", "b200"));  // the head stays bf16: heavier
  ParallelLayout l;
  l.tp = 4, l.pp = 4, l.dp = 1, l.virtual_stages = 10;
  l.micro_batch = 1, l.micro_batches = 64;
  l.schedule = PipelineSchedule::interleaved;
  const std::vector<StageSlice> chunks = pipeline_chunks(m, f.job, f.sys, l);
  ASSERT_EQ(chunks.size(), 40u);
  std::vector<int> per_gpu(4, 0);
  int total = 0;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    EXPECT_GE(chunks[c].layers, 1);
    per_gpu[c % 4] += chunks[c].layers;
    total += chunks[c].layers;
  }
  EXPECT_EQ(total, 80);
  EXPECT_LE(*std::max_element(per_gpu.begin(), per_gpu.end()) - *std::min_element(per_gpu.begin(), per_gpu.end()), 2);
  EXPECT_LE(per_gpu[3], per_gpu[0]);  // the head's GPU holds no more layers than the embedding's
}

TEST(StepModel, MegatronPipelineLayouts) {
  // Megatron's layout grammar: '|' between chunks, x*N and (...)*N repeats, commas cosmetic, empty chunks
  ModelSpec m = model_from_json_text(kDense, "d4");
  m.layers = 61;
  m.mtp_layers = 1;
  const std::vector<StageSlice> c = parse_pp_layout("Et*4|(t*4|)*14tmL", m, 16);
  ASSERT_EQ(c.size(), 16u);
  EXPECT_TRUE(c.front().has_embedding);
  EXPECT_EQ(c.front().layers, 4);
  EXPECT_EQ(c[14].first_layer, 56);
  EXPECT_EQ(c.back().layers, 1);
  EXPECT_TRUE(c.back().has_mtp && c.back().has_head);
  EXPECT_EQ(megatron_pp_layout(c, 1), "Et*4|(t*4|)*14tmL");
  const std::vector<StageSlice> e = parse_pp_layout("Et|(tt|)*30,m|L", m, 33);
  EXPECT_EQ(e[31].layers, 0);
  EXPECT_TRUE(e[31].has_mtp);
  EXPECT_EQ(e[32].layers, 0);
  EXPECT_TRUE(e[32].has_head);
  EXPECT_EQ(megatron_pp_layout(e, 1), "Et|(tt|)*30m|L");
  EXPECT_THROW(parse_pp_layout("Et*4|(t*4|)*14tmL", m, 8), std::invalid_argument);   // 16 chunks, PP x VP = 8
  EXPECT_THROW(parse_pp_layout("Et*4|(t*4|)*14ttmL", m, 16), std::invalid_argument);  // 62 decoder layers
  EXPECT_THROW(parse_pp_layout("t*4|E(t*4|)*14tmL", m, 16), std::invalid_argument);   // embedding not first
  EXPECT_THROW(parse_pp_layout("Et*4|(t*4|)*14tm", m, 16), std::invalid_argument);    // no loss
  // Megatron's uniform split: even; else the embedding and loss counted as layers; else none
  auto counts = [](const std::vector<StageSlice>& v) {
    std::vector<int> n;
    for (const auto& s : v) n.push_back(s.layers);
    return n;
  };
  EXPECT_EQ(counts(uniform_pp_chunks(36, 4)), (std::vector<int>{9, 9, 9, 9}));
  EXPECT_EQ(counts(uniform_pp_chunks(126, 64)).front(), 1);   // 128 / 64 = 2, less the embedding
  EXPECT_EQ(counts(uniform_pp_chunks(126, 64)).back(), 1);    // and the loss
  EXPECT_EQ(counts(uniform_pp_chunks(94, 8)), (std::vector<int>{11, 12, 12, 12, 12, 12, 12, 11}));
  EXPECT_TRUE(uniform_pp_chunks(61, 8).empty());
  EXPECT_EQ(counts(uniform_pp_chunks(126, 128)).size(), 128u);  // one layer a chunk, the embedding and the loss alone
  EXPECT_EQ(counts(uniform_pp_chunks(126, 128)).front(), 0);
  EXPECT_EQ(counts(uniform_pp_chunks(126, 128)).back(), 0);
  // a pinned layout string prices that split: the uniform 2 + 2 split of d4 puts the LM head on top of
  // two layers on the last stage, the balanced one never gives the last stage more layers than the first
  StepFixture f;
  const ModelSpec d = model_from_json_text(kDense, "d4");
  const RankPlacement p(f.graph, 1, 4);
  ParallelLayout l;
  l.pp = 2, l.dp = 2, l.micro_batches = 32;
  l.schedule = PipelineSchedule::one_f_one_b;
  FixedCost comm(1e-3);
  l.pp_layout = "Ett|ttL";
  const StepEstimate u = estimate_step(d, f.job, f.sys, p, l, comm);
  EXPECT_EQ(u.stage_layers, (std::vector<int>{2, 2}));
  EXPECT_EQ(u.pp_layout, "Ett|ttL");
  EXPECT_GT(u.stage_times[1], u.stage_times[0]);
  l.pp_layout = "";
  const StepEstimate b = estimate_step(d, f.job, f.sys, p, l, comm);
  EXPECT_LE(b.step_s, u.step_s + 1e-12);
}

// A stage's chunks walked in place are the chunks_of_stage copy, in order: GPU s holds chunks s, s + PP, ...
// (every stage of 1-5 stages over 0-11 chunks, and a stage past the last chunk, which holds none).
TEST(StepModel, StageChunksAreEveryPpthChunkFromTheStage) {
  for (int n = 0; n <= 11; ++n) {
    std::vector<StageSlice> chunks;
    for (int i = 0; i < n; ++i) chunks.push_back(StageSlice{i, i + 1, i == 0, i + 1 == n, i + 1 == n});
    for (int pp = 1; pp <= 5; ++pp)
      for (int stage = 0; stage <= pp; ++stage) {
        std::vector<int> walked, copied;
        for (const StageSlice& c : StageChunks(chunks, pp, stage)) walked.push_back(c.first_layer);
        for (const StageSlice& c : chunks_of_stage(chunks, pp, stage)) copied.push_back(c.first_layer);
        EXPECT_EQ(walked, copied) << n << " chunks, pp " << pp << ", stage " << stage;
        if (stage < n) {
          EXPECT_EQ(walked.front(), stage);
        }
        EXPECT_EQ(walked.size(), stage < n ? static_cast<std::size_t>((n - stage + pp - 1) / pp) : 0u);
      }
  }
}

TEST(StepModel, TensorAndFoldedExpertCollectivesPerLayer) {
  StepFixture f;
  const ModelSpec m = model_from_json_text(kMoe, "m4");
  const RankPlacement p(f.graph, 1, 8);
  ParallelLayout l;
  l.tp = 2, l.dp = 4, l.ep = 8, l.etp = 1;  // 8 GPUs: EP folds over TP x DP, EDP = 1
  l.micro_batch = 2;
  l.micro_batches = 8;  // 64 / (dp 4 x 2)
  FixedCost comm(1e-4);
  const StepEstimate e = estimate_step(m, f.job, f.sys, p, l, comm);
  // TP: one sequence-parallel pair per layer around attention (the experts run on ETP = 1, no pair) and
  // one before the LM head: forward all-gather + reduce-scatter, backward two all-gathers + a
  // reduce-scatter: 5 x 0.1 ms each, 8 micro-batches
  const double tp = 8 * (4 + 1) * 5 * 1e-4;
  // EP: dispatch + combine per MoE layer, forward and backward
  const double ep = 8 * 4 * 4 * 1e-4;
  double tp_total = 0, ep_total = 0;
  for (const auto& c : e.comm) {
    if (c.kind == "tp") tp_total = c.total_s;
    if (c.kind == "ep") ep_total = c.total_s;
  }
  EXPECT_NEAR(tp_total, tp, 1e-12);
  EXPECT_NEAR(ep_total, ep, 1e-12);
  EXPECT_NEAR(e.comm_exposed("tp"), tp, 1e-12);  // tp_exposed = 1
  EXPECT_NEAR(e.comm_exposed("ep"), ep, 1e-12);  // not overlapped by the recipe
  f.job.ep_overlap = true;
  const StepEstimate o = estimate_step(m, f.job, f.sys, p, l, comm);
  EXPECT_NEAR(o.comm_exposed("ep"), ep * 0.25, 1e-12);
  // full recompute repeats the layers' forward collectives (not the head's): TP 2 of 5 more, EP 2 of 4
  f.job.ep_overlap = false;
  l.recompute = parse_recompute("full", "test");
  const StepEstimate r = estimate_step(m, f.job, f.sys, p, l, comm);
  EXPECT_NEAR(r.comm_exposed("tp"), tp + 8 * 4 * 2 * 1e-4, 1e-12);
  EXPECT_NEAR(r.comm_exposed("ep"), ep * 6 / 4, 1e-12);
  // selective recompute of module moe repeats only the dispatch
  l.recompute = parse_recompute("selective:moe", "test");
  const StepEstimate s = estimate_step(m, f.job, f.sys, p, l, comm);
  EXPECT_NEAR(s.comm_exposed("ep"), ep * 5 / 4, 1e-12);
  EXPECT_GT(s.recompute_s, 0);
}

TEST(StepModel, DataParallelOverlapWindow) {
  StepFixture f;
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

TEST(StepModel, HiddenTrafficHoldsSmsTheComputationLacks) {
  StepFixture f;
  const double sms = 152;  // GB200's B200 (topologies/gb200-nvl72.json)
  // FSDP: the hidden part of the gathers and reduce-scatters runs on 32 of the SMs: the computation beside
  // it loses 32 / 152 of that time, which the step pays.
  const ModelSpec d = model_from_json_text(kDense, "d4");
  const RankPlacement p8(f.graph, 1, 8);
  ParallelLayout l;
  l.dp = 8, l.micro_batches = 8, l.zero_stage = 3;
  FixedCost no_sms(1e-4, 0), nccl(1e-4, 32);
  const StepEstimate free = estimate_step(d, f.job, f.sys, p8, l, no_sms);
  const StepEstimate held = estimate_step(d, f.job, f.sys, p8, l, nccl);
  double hidden = 0, contention = 0;
  for (const auto& c : held.comm)
    if (c.kind == "dp") hidden = c.total_s - c.exposed_s, contention = c.contention_s;
  EXPECT_GT(hidden, 0);
  EXPECT_NEAR(contention, hidden * 32 / sms, 1e-12);
  EXPECT_NEAR(held.step_s - free.step_s, contention, 1e-12);
  EXPECT_NEAR(held.contention_s, contention, 1e-12);
  // An overlapped all-to-all: the fitted fraction (0.25 here) stays exposed, the rest costs the share of
  // the SMs the dispatcher holds: NCCL's channels for alltoall, 20 for DeepEP (Megatron-Core's moe_deepep_num_sms),
  // 32 for HybridEP (what Megatron-Bridge's performance scripts set).
  const ModelSpec m = model_from_json_text(kMoe, "m4");
  ParallelLayout e;
  e.tp = 2, e.dp = 4, e.ep = 8, e.micro_batch = 2, e.micro_batches = 8;
  f.job.ep_overlap = true;
  FixedCost comm(1e-4, 32);
  const double ep = 8 * 4 * 4 * 1e-4;
  for (const auto& [d, held_sms] : std::vector<std::pair<MoeDispatcher, double>>{
           {MoeDispatcher::alltoall, 32}, {MoeDispatcher::deepep, 20}, {MoeDispatcher::hybridep, 32}}) {
    f.job.dispatcher = d;
    const StepEstimate o = estimate_step(m, f.job, f.sys, p8, e, comm);
    for (const auto& c : o.comm)
      if (c.kind == "ep") {
        EXPECT_NEAR(c.exposed_s, 0.25 * ep, 1e-12);
        EXPECT_NEAR(c.contention_s, 0.75 * ep * held_sms / sms, 1e-12) << to_string(d);
      }
  }
}

TEST(StepModel, PrecisionRecipesRunAtTheirTensorCoreRate) {
  StepFixture f;
  const ModelSpec m = model_from_json_text(kDense, "d4");
  const RankPlacement p(f.graph, 1, 1);
  ParallelLayout l;
  l.micro_batches = 64;
  FixedCost comm(0);
  const StepEstimate bf16 = estimate_step(m, f.job, f.sys, p, l, comm);
  f.job.precision = f.table.precision("mxfp8");
  const StepEstimate mx = estimate_step(m, f.job, f.sys, p, l, comm);
  // the layer GEMMs move to the fp8 feature (the LM head stays bf16); quantisation adds HBM traffic
  EXPECT_GT(bf16.work.x[kGemmBf16], 0);
  EXPECT_EQ(bf16.work.x[kGemmFp8], 0);
  EXPECT_GT(mx.work.x[kGemmFp8], 0);
  EXPECT_LT(mx.work.x[kGemmBf16], bf16.work.x[kGemmBf16]);
  EXPECT_GT(mx.work.x[kHbm], bf16.work.x[kHbm]);
  // and cost at most half (the fp8 peak is twice bf16's on B200; small ones turn memory-bound)
  EXPECT_LE(mx.work.x[kGemmFp8], (bf16.work.x[kGemmBf16] - mx.work.x[kGemmBf16]) / 2 * (1 + 1e-9));
  // weights keep their MXFP8 copies: 2.0625 B per parameter more
  EXPECT_NEAR(mx.memory.weights / bf16.memory.weights, (2 + 2.0625) / 2, 1e-9);
}

// A model's nvfp4_bf16_layers are the layers its NVFP4 recipe keeps in BF16 (Megatron's first_last_layers_bf16):
// under NVFP4 their GEMMs are BF16 work, unquantised; every layer so kept gives the BF16 recipe's GEMM work;
// other precisions ignore the field.
TEST(StepModel, Nvfp4LayersKeptInBf16RunAtTheBf16Rate) {
  StepFixture f;
  const RankPlacement p(f.graph, 1, 1);
  ParallelLayout l;
  l.micro_batches = 64;
  FixedCost comm(0);
  auto with_tail = [](int at_start, int at_end) {
    std::string text = kDense;
    text.insert(text.rfind('}'), ", \"nvfp4_bf16_layers\": {\"at_start\": " + std::to_string(at_start) +
                                      ", \"at_end\": " + std::to_string(at_end) + ", \"source\": \"test\"}");
    return model_from_json_text(text, "d4");
  };
  const ModelSpec plain = model_from_json_text(kDense, "d4"), tail = with_tail(0, 1), all = with_tail(1, 3);
  EXPECT_EQ(tail.nvfp4_bf16_at_end, 1);
  const StepEstimate bf16 = estimate_step(plain, f.job, f.sys, p, l, comm);
  f.job.precision = f.table.precision("nvfp4");
  const StepEstimate fp4 = estimate_step(plain, f.job, f.sys, p, l, comm);
  const StepEstimate one = estimate_step(tail, f.job, f.sys, p, l, comm);
  const StepEstimate every = estimate_step(all, f.job, f.sys, p, l, comm);
  EXPECT_GT(fp4.work.x[kGemmFp4], 0);
  // one of four layers back to BF16: a quarter of the layers' FP4 GEMM work leaves, a quarter of the BF16 recipe's arrives
  const double layers_bf16 = bf16.work.x[kGemmBf16] - fp4.work.x[kGemmBf16];  // the LM head is BF16 in both
  EXPECT_NEAR(one.work.x[kGemmFp4], 0.75 * fp4.work.x[kGemmFp4], 1e-9 * fp4.work.x[kGemmFp4]);
  EXPECT_NEAR(one.work.x[kGemmBf16], fp4.work.x[kGemmBf16] + 0.25 * layers_bf16, 1e-9 * bf16.work.x[kGemmBf16]);
  EXPECT_GT(one.step_s, fp4.step_s);
  // all four: the BF16 recipe's GEMMs and no quantisation traffic, but NVFP4's smaller saved inputs stay
  EXPECT_EQ(every.work.x[kGemmFp4], 0);
  EXPECT_NEAR(every.work.x[kGemmBf16], bf16.work.x[kGemmBf16], 1e-9 * bf16.work.x[kGemmBf16]);
  EXPECT_NEAR(every.work.x[kHbm], bf16.work.x[kHbm], 1e-9 * bf16.work.x[kHbm]);
  f.job.precision = f.table.precision("mxfp8");
  EXPECT_EQ(estimate_step(tail, f.job, f.sys, p, l, comm).step_s, estimate_step(plain, f.job, f.sys, p, l, comm).step_s);
  // more layers kept than the model has: refused naming the key
  EXPECT_THROW(with_tail(2, 3), InputError);
}

TEST(StepModel, LowerBoundNeverExceedsTheStep) {
  StepFixture f;
  const ModelSpec m = model_from_json_text(kMoe, "m4");
  const RankPlacement p(f.graph, 1, 8);
  FixedCost comm(1e-3);
  for (int pp : {1, 2}) {
    ParallelLayout l;
    l.pp = pp, l.dp = 8 / pp, l.ep = 8 / pp;
    l.micro_batches = 64 / l.dp;
    l.schedule = pp > 1 ? PipelineSchedule::one_f_one_b : PipelineSchedule::none;
    const double bound = step_lower_bound(m, f.job, f.sys, l);
    EXPECT_GT(bound, 0);
    EXPECT_LE(bound, estimate_step(m, f.job, f.sys, p, l, comm).step_s);
  }
}

}  // namespace
}  // namespace racksim
