#include "models/planner/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "models/planner/comm_cost.hpp"
#include "models/memory/offload.hpp"
#include "models/planner/placement.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/model_costs.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

SystemContext make_system_context(const TopologyGraph& graph, const GpuCompute& compute) {
  const TopologySpec& spec = graph.spec();
  SystemContext s;
  s.system_id = spec.id;
  s.graph = &graph;
  s.compute = &compute;
  const GpuType& gpu = spec.gpu_type(spec.tray.gpus.at(0).type);
  s.hbm_bytes = gpu.hbm_capacity_GB * units::kGB;
  s.hbm_Bps = units::GBps_to_Bps(gpu.hbm_bandwidth_GBps);
  // Host memory free for pinned offload buffers, as the memory model counts it (the tray's CPU memory
  // less what the OS and the kernel's watermarks hold), shared by the tray's GPUs.
  double host = 0;
  for (const auto& c : spec.tray.cpus) host += spec.cpu_type(c.type).memory_capacity_GB * units::kGB;
  try {
    memory::OffloadRequest probe;
    probe.params = 1;
    probe.offload_optimizer = true;
    for (const auto& g : spec.tray.gpus) probe.gpus.push_back(g.id);
    host = memory::offload_step(spec, probe).host_free_bytes;
  } catch (const InputError&) {
    // no host link the memory model knows: keep the raw capacity
  }
  s.host_bytes_per_gpu = host / static_cast<double>(spec.tray.gpus.size());
  // The GPU's link to its host CPU; edges of one share group split one capacity.
  const int gv = graph.gpu_vertex(0);
  const int cv = graph.cpu_of_gpu(gv);
  for (int e : graph.incident_edges(gv)) {
    if (graph.other_end(e, gv) != cv) continue;
    const Edge& edge = graph.edges()[e];
    int sharing = 1;
    if (edge.share_group >= 0) {
      sharing = 0;
      for (const Edge& other : graph.edges()) sharing += other.share_group == edge.share_group ? 1 : 0;
    }
    s.c2c_Bps_per_gpu = edge.bandwidth_Bps / std::max(1, sharing);
    s.host_link = to_string(edge.kind);
  }
  return s;
}

double StepEstimate::comm_exposed(const std::string& kind) const {
  double t = 0;
  for (const auto& c : comm) t += c.kind == kind ? c.exposed_s : 0;
  return t;
}

std::vector<StageSlice> stage_slices(const ModelSpec& model, int pp) {
  std::vector<StageSlice> out;
  int first = 0;
  for (int s = 0; s < pp; ++s) {
    const int n = model.layers / pp + (s < model.layers % pp ? 1 : 0);
    out.push_back(StageSlice{first, n, s == 0, s == pp - 1});
    first += n;
  }
  return out;
}

namespace {

// For each stage: is it the first with its make-up (dense layers, MoE layers, embedding, head)?
std::vector<bool> first_stage_of_each_kind(const ModelSpec& model, const std::vector<StageSlice>& slices) {
  std::vector<std::tuple<int, int, bool, bool>> seen;
  std::vector<bool> out;
  for (const StageSlice& sl : slices) {
    int moe = 0;
    for (int x = sl.first_layer; x < sl.first_layer + sl.layers; ++x) moe += model.is_moe_layer(x) ? 1 : 0;
    const auto kind = std::make_tuple(sl.layers - moe, moe, sl.has_embedding, sl.has_head);
    const bool first = std::find(seen.begin(), seen.end(), kind) == seen.end();
    if (first) seen.push_back(kind);
    out.push_back(first);
  }
  return out;
}

// Exposed seconds per step of streaming this GPU's optimizer shard (params) and/or activation bytes
// to and from host memory, by the memory model (models/memory/offload.hpp) for a whole tray doing the
// same, with `compute_s` of compute to hide behind.
double offload_time(const SystemContext& sys, double optimizer_params, double activation_bytes, double compute_s) {
  // The streaming time depends only on the bytes: remember it per system (searches ask often).
  auto& streaming = *sys.offload_streaming;
  const auto key = std::make_pair(optimizer_params, activation_bytes);
  auto it = streaming.find(key);
  if (it == streaming.end()) {
    const TopologySpec& spec = sys.graph->spec();
    memory::OffloadRequest q;
    const double gpt = static_cast<double>(spec.tray.gpus.size());
    q.params = optimizer_params * gpt;
    q.offload_optimizer = optimizer_params > 0;
    q.activation_bytes = activation_bytes * gpt;
    q.offload_activations = activation_bytes > 0;
    for (const auto& g : spec.tray.gpus) q.gpus.push_back(g.id);
    it = streaming.emplace(key, memory::offload_step(spec, q).step_s).first;
  }
  return std::max(0.0, it->second - compute_s);
}

double in_flight(const ParallelLayout& l, int stage) {
  if (l.pp == 1) return 1;
  return std::min<double>(l.micro_batches, l.pp - stage);
}

double interleave_factor(const ParallelLayout& l) {
  if (l.schedule != PipelineSchedule::interleaved) return 1;
  return 1 + static_cast<double>(l.pp - 1) / (static_cast<double>(l.pp) * l.virtual_stages);
}

TrainingMemoryConfig memory_config(const TrainingJob& job, const ParallelLayout& l, int stage) {
  TrainingMemoryConfig c;
  c.shape = ParallelShape{l.tp, l.ep, l.cp};
  c.dp = l.dp;
  c.micro_batch = l.micro_batch;
  c.seq_len = job.seq_len;
  c.zero_stage = l.zero_stage;
  c.recompute = l.recompute;
  c.grad_bytes = job.grad_bytes;
  c.imbalance = job.moe_imbalance;
  c.micro_batches_in_flight = in_flight(l, stage);
  c.interleave_factor = interleave_factor(l);
  c.offload_optimizer = l.offload_optimizer;
  c.offload_activations = l.offload_activations;
  return c;
}

// A reduce-scatter or all-gather over a group that spans several fast domains with the same number of
// members in each: the better of the flat collective and the two-level one (inside each domain over
// NVLink, then across domains among the members at the same position, on 1/d of the data), which is
// what NCCL reaches with one ring per NIC rail.
struct GroupTime {
  double time_s = 0;
  std::string algorithm;
};
GroupTime group_collective(CollectiveOp op, const GroupSpan& g, double bytes, const std::string& dtype, CommCost& comm) {
  GroupTime flat{comm.time_s(op, g.id, bytes, dtype), ""};
  const bool two_level_ok = (op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) && g.inner >= 0;
  if (two_level_ok) {
    const double d = static_cast<double>(comm.gpus(g.inner).size());
    const double t = comm.time_s(op, g.inner, bytes, dtype) + comm.time_s(op, g.outer, bytes / d, dtype);
    if (t < flat.time_s)
      return GroupTime{t, "two-level (" + comm.algorithm(op, g.inner, bytes, dtype) + " in domain, " +
                              comm.algorithm(op, g.outer, bytes / d, dtype) + " across)"};
  }
  flat.algorithm = comm.algorithm(op, g.id, bytes, dtype);
  return flat;
}

GroupSpan span_of(const RankPlacement& p, const std::vector<int>& ranks, CommCost& comm) {
  GroupSpan g;
  g.id = comm.group(p.gpus_of(ranks));
  g.size = static_cast<int>(ranks.size());
  std::map<int, std::vector<int>> by_domain;
  for (int r : ranks) by_domain[p.locate(r).domain].push_back(r);
  g.domains = static_cast<int>(by_domain.size());
  if (by_domain.size() >= 2) {
    const std::size_t d = by_domain.begin()->second.size();
    bool equal = d >= 2;
    for (const auto& [dom, members] : by_domain) equal = equal && members.size() == d;
    if (equal) {
      std::vector<int> outer;
      for (const auto& [dom, members] : by_domain) outer.push_back(members.front());
      g.inner = comm.group(p.gpus_of(by_domain.begin()->second));
      g.outer = comm.group(p.gpus_of(outer));
    }
  }
  return g;
}

// Two neighbours of a group: the first pair that crosses a domain boundary, else the first two.
GroupSpan pair_of(const RankPlacement& p, const std::vector<int>& ranks, CommCost& comm) {
  if (ranks.size() < 2) return span_of(p, ranks, comm);
  std::vector<int> pair{ranks[0], ranks[1]};
  for (std::size_t i = 0; i + 1 < ranks.size(); ++i)
    if (p.locate(ranks[i]).domain != p.locate(ranks[i + 1]).domain) {
      pair = {ranks[i], ranks[i + 1]};
      break;
    }
  return span_of(p, pair, comm);
}

// Times of one layer for one micro-batch on one GPU.
struct LayerTimes {
  double fwd = 0, bwd = 0, recompute = 0;      // compute
  double tp_fwd = 0, ep_fwd = 0;               // one forward's collectives (backward: the same again)
  double cp_fwd_exposed = 0, cp_bwd_exposed = 0, cp_total = 0;
};

void layer_compute(const LayerWork& w, const TrainingJob& job, const SystemContext& sys, Recompute recompute, LayerTimes& t,
                   double* attention_s = nullptr) {
  const GpuCompute& gc = *sys.compute;
  double gemm = 0;
  for (const auto& x : w.gemms) gemm += gc.gemm_time_s(x, job.dtype, sys.hbm_Bps);
  const double attention = gc.attention_time_s(w.attention_flops);
  // Elementwise work: every kept activation written once and read once (assumption).
  const double elementwise = gc.memory_time_s(2 * w.activation_bytes_none, sys.hbm_Bps);
  t.fwd = gemm + attention + elementwise;
  t.bwd = 2 * gemm + 2.5 * attention + 2 * elementwise;
  t.recompute = 0;
  if (recompute == Recompute::full) t.recompute = t.fwd;
  if (recompute == Recompute::selective)
    t.recompute = gc.memory_time_s(2 * (w.activation_bytes_none - w.activation_bytes_selective), sys.hbm_Bps);
  if (attention_s) *attention_s = attention;
}

LayerTimes layer_times(const LayerWork& w, const TrainingJob& job, const SystemContext& sys, const MeshGroups& g,
                       CommCost& comm, Recompute recompute) {
  LayerTimes t;
  double attention = 0;
  layer_compute(w, job, sys, recompute, t, &attention);
  if (w.tp_pairs_forward > 0)
    t.tp_fwd = w.tp_pairs_forward * (comm.time_s(CollectiveOp::all_gather, g.tp.id, w.tp_bytes) +
                                     comm.time_s(CollectiveOp::reduce_scatter, g.tp.id, w.tp_bytes));
  if (w.ep_all_to_alls_forward > 0)
    t.ep_fwd = w.ep_all_to_alls_forward * job.moe_imbalance * comm.time_s(CollectiveOp::all_to_all, g.ep.id, w.ep_bytes);
  if (w.cp_steps_forward > 0) {
    const double f = w.cp_steps_forward * comm.time_s(CollectiveOp::send_recv, g.cp_pair.id, w.cp_bytes);
    const double b = w.cp_steps_forward * comm.time_s(CollectiveOp::send_recv, g.cp_pair.id, 2 * w.cp_bytes);
    t.cp_total = f + b;
    t.cp_fwd_exposed = std::max(0.0, f - attention);
    t.cp_bwd_exposed = std::max(0.0, b - 2.5 * attention);
  }
  return t;
}

}  // namespace

MemoryBreakdown layout_memory(const ModelSpec& model, const TrainingJob& job, const ParallelLayout& l, int* stage_out) {
  MemoryBreakdown worst;
  int worst_stage = 0;
  const auto slices = stage_slices(model, l.pp);
  const std::vector<bool> first_of_kind = first_stage_of_each_kind(model, slices);
  for (int s = 0; s < l.pp; ++s) {
    // Stages with the same make-up (dense and MoE layers, embedding, head) differ only in micro-batches
    // in flight, which fall with the stage index: the first of each make-up is the fullest.
    if (!first_of_kind[s]) continue;
    const MemoryBreakdown b = training_memory_per_gpu(model, slices[s], memory_config(job, l, s));
    if (s == 0 || b.total() > worst.total()) {
      worst = b;
      worst_stage = s;
    }
  }
  if (stage_out) *stage_out = worst_stage;
  return worst;
}

bool fits(const MemoryBreakdown& m, const TrainingJob& job, const SystemContext& sys) {
  // The reserve fraction applies to host memory too (data loading, the framework, page cache).
  return m.total() <= sys.hbm_bytes * (1 - job.memory_reserve) &&
         m.host_offloaded <= sys.host_bytes_per_gpu * (1 - job.memory_reserve);
}

double step_lower_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l) {
  const ParallelShape shape{l.tp, l.ep, l.cp};
  LayerTimes dense_t, moe_t;
  layer_compute(layer_work(model, false, l.micro_batch, job.seq_len, shape, job.moe_imbalance), job, sys, l.recompute, dense_t);
  if (model.is_moe())
    layer_compute(layer_work(model, true, l.micro_batch, job.seq_len, shape, job.moe_imbalance), job, sys, l.recompute, moe_t);
  const double head = sys.compute->gemm_time_s(head_work(model, l.micro_batch, job.seq_len, shape).gemm, job.dtype, sys.hbm_Bps);
  double t_max = 0, t_sum = 0;
  for (const StageSlice& sl : stage_slices(model, l.pp)) {
    int moe_layers = 0;
    for (int x = sl.first_layer; x < sl.first_layer + sl.layers; ++x) moe_layers += model.is_moe_layer(x) ? 1 : 0;
    const double t = (sl.layers - moe_layers) * (dense_t.fwd + dense_t.bwd + dense_t.recompute) +
                     moe_layers * (moe_t.fwd + moe_t.bwd + moe_t.recompute) + (sl.has_head ? 3 * head : 0);
    t_max = std::max(t_max, t);
    t_sum += t;
  }
  return l.micro_batches * t_max + (l.pp - 1) * (t_sum / l.pp) / l.virtual_stages;
}

MeshGroups mesh_groups(const RankPlacement& p, const ParallelLayout& l, CommCost& comm) {
  MeshGroups g;
  g.tp = span_of(p, p.worst_group_ranks(l, {MeshDim::tp}), comm);
  g.ep = span_of(p, p.worst_group_ranks(l, {MeshDim::ep}), comm);
  const std::vector<int> cp = p.worst_group_ranks(l, {MeshDim::cp});
  g.cp = span_of(p, cp, comm);
  g.cp_pair = pair_of(p, cp, comm);
  const std::vector<int> pp = p.worst_group_ranks(l, {MeshDim::pp});
  g.pp = span_of(p, pp, comm);
  g.pp_pair = pair_of(p, pp, comm);
  g.dense_dp = span_of(p, p.worst_group_ranks(l, {MeshDim::dp, MeshDim::ep, MeshDim::cp}), comm);
  g.expert_dp = span_of(p, p.worst_group_ranks(l, {MeshDim::dp, MeshDim::cp}), comm);
  return g;
}

StepEstimate estimate_step(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys,
                           const RankPlacement& placement, const ParallelLayout& l, CommCost& comm, const MeshGroups* groups) {
  StepEstimate est;
  const GpuCompute& gc = *sys.compute;
  const ParallelShape shape{l.tp, l.ep, l.cp};
  const MeshGroups g = groups ? *groups : mesh_groups(placement, l, comm);

  const LayerWork dense_w = layer_work(model, false, l.micro_batch, job.seq_len, shape, job.moe_imbalance);
  const LayerTimes dense_t = layer_times(dense_w, job, sys, g, comm, l.recompute);
  LayerWork moe_w;
  LayerTimes moe_t;
  if (model.is_moe()) {
    moe_w = layer_work(model, true, l.micro_batch, job.seq_len, shape, job.moe_imbalance);
    moe_t = layer_times(moe_w, job, sys, g, comm, l.recompute);
  }
  const HeadWork head = head_work(model, l.micro_batch, job.seq_len, shape);
  const double head_fwd = gc.gemm_time_s(head.gemm, job.dtype, sys.hbm_Bps);

  const double tp_keep = 1 - job.tp_overlap, ep_keep = 1 - job.ep_overlap;
  const double full = l.recompute == Recompute::full ? 1 : 0;
  const auto slices = stage_slices(model, l.pp);
  struct StageTimes {
    double fwd = 0, bwd = 0, compute = 0, recompute = 0, total = 0;  // fwd/bwd: windows incl. exposed comm
    double tp = 0, ep = 0, cp = 0, cp_exposed = 0;                   // per micro-batch, all passes
  };
  std::vector<StageTimes> st(l.pp);
  for (int s = 0; s < l.pp; ++s) {
    int moe_layers = 0;
    for (int x = slices[s].first_layer; x < slices[s].first_layer + slices[s].layers; ++x) moe_layers += model.is_moe_layer(x) ? 1 : 0;
    const int dense_layers = slices[s].layers - moe_layers;
    double fwd = 0, bwd = 0, rec = 0, tp_f = 0, ep_f = 0, cp = 0, cp_exp_f = 0, cp_exp_b = 0;
    for (const auto& [n, t] : {std::pair<int, const LayerTimes*>{dense_layers, &dense_t}, {moe_layers, &moe_t}}) {
      fwd += n * t->fwd;
      bwd += n * t->bwd;
      rec += n * t->recompute;
      tp_f += n * t->tp_fwd;
      ep_f += n * t->ep_fwd;
      cp += n * (t->cp_total + full * t->cp_total / 3);  // recompute repeats the forward third
      cp_exp_f += n * t->cp_fwd_exposed;
      cp_exp_b += n * (t->cp_bwd_exposed + full * t->cp_fwd_exposed);
    }
    if (slices[s].has_head) {
      fwd += head_fwd;
      bwd += 2 * head_fwd;
    }
    StageTimes& x = st[s];
    // Forward: one pass of TP/EP collectives; backward: one more, plus the recomputed forward's.
    x.fwd = fwd + tp_keep * tp_f + ep_keep * ep_f + cp_exp_f;
    x.bwd = bwd + rec + (1 + full) * (tp_keep * tp_f + ep_keep * ep_f) + cp_exp_b;
    x.compute = fwd + bwd + rec;
    x.recompute = rec;
    x.total = x.fwd + x.bwd;
    x.tp = (2 + full) * tp_f;
    x.ep = (2 + full) * ep_f;
    x.cp = cp;
    x.cp_exposed = cp_exp_f + cp_exp_b;
  }
  int bottleneck = 0;
  for (int s = 1; s < l.pp; ++s)
    if (st[s].total > st[bottleneck].total) bottleneck = s;
  std::vector<double> stage_fwd(l.pp), stage_bwd(l.pp);
  for (int s = 0; s < l.pp; ++s) {
    stage_fwd[s] = st[s].fwd;
    stage_bwd[s] = st[s].bwd;
  }
  const double tp_per_mb = st[bottleneck].tp, ep_per_mb = st[bottleneck].ep;
  const double cp_per_mb = st[bottleneck].cp, cp_exposed_per_mb = st[bottleneck].cp_exposed;
  est.bottleneck_stage = bottleneck;
  for (const auto& x : st) est.stage_times.push_back(x.total);
  const double m = l.micro_batches, v = l.virtual_stages;
  const double t_max = st[bottleneck].total;
  double t_mean = 0;
  for (const auto& x : st) t_mean += x.total / l.pp;
  est.bubble_s = (l.pp - 1) * t_mean / v;
  est.compute_s = m * st[bottleneck].compute;
  est.recompute_s = m * st[bottleneck].recompute;
  double step = m * t_max + est.bubble_s;

  auto add = [&](CommTime c) {
    est.comm_total_s += c.total_s;
    est.comm_exposed_s += c.exposed_s;
    est.comm.push_back(std::move(c));
  };
  const double tokens_mb = static_cast<double>(l.micro_batch) * job.seq_len / l.cp;
  if (l.tp > 1)
    add({"tp", "all-gather + reduce-scatter, 2 per layer forward and backward", m * tp_per_mb, m * tp_per_mb * tp_keep,
         dense_w.tp_bytes, l.tp, g.tp.domains, comm.algorithm(CollectiveOp::all_gather, g.tp.id, dense_w.tp_bytes)});
  if (l.ep > 1)
    add({"ep", "all-to-all dispatch + combine per MoE layer forward and backward", m * ep_per_mb, m * ep_per_mb * ep_keep,
         moe_w.ep_bytes, l.ep, g.ep.domains, comm.algorithm(CollectiveOp::all_to_all, g.ep.id, moe_w.ep_bytes)});
  if (l.cp > 1)
    add({"cp", "ring attention K/V exchange per layer, overlapped with attention", m * cp_per_mb, m * cp_exposed_per_mb,
         dense_w.cp_bytes, l.cp, g.cp.domains, comm.algorithm(CollectiveOp::send_recv, g.cp_pair.id, dense_w.cp_bytes)});
  if (l.pp > 1) {
    const double bytes = tokens_mb * model.hidden_size * 2 / l.tp;
    const double t = comm.time_s(CollectiveOp::send_recv, g.pp_pair.id, bytes);
    const double exposed = 2 * (l.pp - 1) * t;
    add({"pp", "send/recv of activations and their gradients between stages", 2 * m * v * t, exposed, bytes, 2,
         g.pp.domains, comm.algorithm(CollectiveOp::send_recv, g.pp_pair.id, bytes)});
    step += exposed;
  }

  // Data parallelism on the stage with the most parameters.
  int mem_stage = 0;
  est.memory = layout_memory(model, job, l, &mem_stage);
  est.memory_stage = mem_stage;
  est.memory_capacity = sys.hbm_bytes * (1 - job.memory_reserve);
  {
    const auto& slices_all = slices;
    const std::vector<bool> first_of_kind = first_stage_of_each_kind(model, slices);
    int ps = 0;
    double most = -1;
    MemoryBreakdown params_of;
    for (int s = 0; s < l.pp; ++s) {
      if (!first_of_kind[s]) continue;
      const MemoryBreakdown b = training_memory_per_gpu(model, slices_all[s], memory_config(job, l, s));
      if (b.dense_params + b.expert_params > most) {
        most = b.dense_params + b.expert_params;
        ps = s;
        params_of = b;
      }
    }
    const std::string gdt = job.grad_bytes >= 4 ? "float" : "bfloat16";
    const double gd = params_of.dense_params * job.grad_bytes, ge = params_of.expert_params * job.grad_bytes;
    const double pd = params_of.dense_params * 2, pe = params_of.expert_params * 2;
    const double F = stage_fwd[ps], B = stage_bwd[ps];
    double total = 0, exposed = 0;
    std::string what, algo;
    auto coll = [&](CollectiveOp op, const GroupSpan& grp, double bytes, const std::string& dt) {
      return group_collective(op, grp, bytes, dt, comm);
    };
    const GroupSpan& dense_group = g.dense_dp;
    const GroupSpan& expert_group = g.expert_dp;
    if (dense_group.size > 1 || expert_group.size > 1) {
      if (l.zero_stage == 0) {
        const GroupTime a = coll(CollectiveOp::all_reduce, dense_group, gd, gdt);
        const double t = a.time_s + coll(CollectiveOp::all_reduce, expert_group, ge, gdt).time_s;
        total = t;
        exposed = std::max(0.0, t - B);
        what = "gradient all-reduce, overlapped with the last backward";
        algo = a.algorithm;
      } else {
        const GroupTime rsd = coll(CollectiveOp::reduce_scatter, dense_group, gd, gdt);
        const double rs = rsd.time_s + coll(CollectiveOp::reduce_scatter, expert_group, ge, gdt).time_s;
        const double ag = coll(CollectiveOp::all_gather, dense_group, pd, "bfloat16").time_s +
                          coll(CollectiveOp::all_gather, expert_group, pe, "bfloat16").time_s;
        algo = rsd.algorithm;
        if (l.zero_stage == 1) {
          total = rs + ag;
          exposed = std::max(0.0, rs - B) + std::max(0.0, ag - F);
          what = "gradient reduce-scatter (overlapped with the last backward) + parameter all-gather (with the next forward)";
        } else if (l.zero_stage == 2) {
          total = m * rs + ag;
          exposed = m * std::max(0.0, rs - B) + std::max(0.0, ag - F);
          what = "gradient reduce-scatter every micro-batch (with its backward) + parameter all-gather (with the next forward)";
        } else {
          total = m * (2 * ag + rs);
          exposed = m * (std::max(0.0, ag - F) + std::max(0.0, ag + rs - B));
          what = "FSDP: parameter all-gather before forward and backward, gradient reduce-scatter, every micro-batch";
        }
      }
      add({"dp", what, total, exposed, gd, dense_group.size, dense_group.domains, algo});
      step += exposed;
    }
    // Optimizer: Adam over this GPU's shard, HBM-bound: read grad + fp32 master + m + v, write master,
    // m, v and the bf16 weight.
    const double dp_dense = static_cast<double>(l.dp) * l.ep * l.cp, dp_expert = static_cast<double>(l.dp) * l.cp;
    const double shard = l.zero_stage >= 1 ? params_of.dense_params / dp_dense + params_of.expert_params / dp_expert
                                           : params_of.dense_params + params_of.expert_params;
    if (l.offload_optimizer) {
      // GPU-side Adam with its states streamed in and out over the host link each step (the memory
      // model's offload_step: C2C or PCIe shared as the tray shares it, CPU memory bandwidth), after
      // the backward pass: not overlapped.
      est.optimizer_s = gc.memory_time_s(shard * (job.grad_bytes + 2), sys.hbm_Bps);
      est.offload_s += offload_time(sys, shard, 0, 0);
    } else {
      est.optimizer_s = gc.memory_time_s(shard * (job.grad_bytes + 12 + 12 + 2), sys.hbm_Bps);
    }
  }
  if (l.offload_activations && in_flight(l, 0) > 1) {
    // Every micro-batch's activations out during its forward and back for its backward, overlapped with
    // the step's compute.
    const MemoryBreakdown one = training_memory_per_gpu(model, slices[0], [&] {
      TrainingMemoryConfig c = memory_config(job, l, 0);
      c.micro_batches_in_flight = 1;
      c.interleave_factor = 1;
      c.offload_activations = false;
      return c;
    }());
    est.offload_s += offload_time(sys, 0, m * one.activations, est.compute_s);
  }
  step += est.optimizer_s + est.offload_s;

  est.step_s = step;
  const double tokens = static_cast<double>(job.global_batch) * job.seq_len;
  est.tokens_per_s = tokens / step;
  est.tokens_per_s_per_gpu = est.tokens_per_s / l.gpus();
  const double peak = gc.dtype(job.dtype).peak_dense_TFLOPs * 1e12;
  est.mfu = tokens * forward_flops_per_token(model, job.seq_len).training() / (step * l.gpus() * peak);
  return est;
}

}  // namespace racksim
