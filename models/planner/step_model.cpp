#include "models/planner/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/memory/offload.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/step_costs.hpp"
#include "models/workload/model_costs.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

SystemContext make_system_context(const TopologyGraph& graph, const GpuCompute& gpu, const ComputeParams& params) {
  const TopologySpec& spec = graph.spec();
  SystemContext s;
  s.system_id = spec.id;
  s.graph = &graph;
  const GpuType& type = spec.gpu_type(spec.tray.gpus.at(0).type);
  s.hbm_bytes = static_cast<double>(type.hbm_capacity_bytes);  // as the driver reports it (issue 16)
  s.hbm_Bps = units::GBps_to_Bps(type.hbm_bandwidth_GBps);
  s.compute = std::make_shared<ComputeModel>(gpu, params, s.hbm_Bps, type.sm_count);
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
  double host_Bps = 0;
  for (const auto& c : spec.tray.cpus) host_Bps += units::GBps_to_Bps(spec.cpu_type(c.type).memory_bandwidth_GBps);
  s.host_memory_Bps_per_gpu = host_Bps / static_cast<double>(spec.tray.gpus.size());
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

SystemContext make_system_context(const TopologyGraph& graph, const ComputeTable& table) {
  const TopologySpec& spec = graph.spec();
  const GpuCompute& gpu = table.lookup(spec.id, spec.tray.gpus.at(0).type);
  return make_system_context(graph, gpu, table.params(gpu.generation));
}

double StepEstimate::comm_exposed(const std::string& kind) const {
  double t = 0;
  for (const auto& c : comm) t += c.kind == kind ? c.exposed_s : 0;
  return t;
}

using namespace step_detail;

namespace {

// Megatron's optimizer offload (`optimizer_cpu_offload`: HybridDeviceOptimizer, megatron/core/optimizer/
// cpu_offloading/hybrid_optimizer.py) steps the offloaded parameters on the host CPU: the GPU sends their
// gradients down (D2H), a torch CPU optimizer updates the host's fp32 copy and Adam moments, and the updated
// fp32 parameters come back up (H2D) into the GPU's main parameters, which stay in HBM (memory_fit.cpp).
inline constexpr double kHybridTransferBytesPerParam = 4;  // fp32 gradients down, fp32 parameters up
// AdamW's memory traffic on the host: read the parameter, gradient and two moments, write back the parameter
// and the moments, 4 B each (fp32).
inline constexpr double kCpuAdamBytesPerParam = 28;
// How fast one rank's CPU optimizer steps its shard. Megatron builds it as torch's AdamW with fused=True
// (megatron/core/optimizer/__init__.py, the optimizer_cpu_offload branch), and each of a node's ranks runs it in its
// own process on as many threads as torch was given: one under torchrun, which sets OMP_NUM_THREADS=1 when it
// starts several processes (torch/distributed/run.py). So a rank's Adam runs on one core: 0.776 G parameters/s,
// measured by calibrate/probes/cpu_adam.py (fused AdamW, one thread, mean of 10 steps over 2^26 parameters) on a
// 16-vCPU Sapphire Rapids host (calibrate/data/h100-sxm-1gpu-2026-12-07/extra/cpu-adam/ranks/; session 51). The
// same probe with all 16 threads reached 4.4-6.5 G parameters/s, about that host's memory bandwidth: a core's
// rate, not the memory's, is what bounds a rank. Checked against the one end-to-end measurement there is, which
// nothing here was fitted on: Megatron-Bridge's Qwen3-30B-A3B on two 8-GPU H100 nodes (TP 2, PP 2, EP 4), 996 ms a
// step and 4 189 ms with the whole optimizer offloaded (docs/training/cpu-offloading.md and skills/perf-techniques/
// cpu-offloading/card.yaml at NVIDIA-NeMo/Megatron-Bridge@b00deab): racksim's 1.91 B parameters a GPU give 2.46 s of
// host Adam and +2.64 s a step with the transfers, 17 % under the measured +3.19 s (its cores ran 0.634 G/s each;
// a Xeon 8480C's all-core clock may be below the probe host's). Assumption: a Grace (Neoverse V2) core steps as fast.
// The host's memory bandwidth, shared by the tray's GPUs, bounds it where a rank would get many threads.
inline constexpr double kCpuAdamParamsPerSecondPerRank = 0.776e9;

// Exposed seconds per step of streaming this GPU's optimizer shard (params: HybridDeviceOptimizer's transfers)
// and/or activation bytes to and from host memory, by the memory model (models/memory/offload.hpp) for a whole
// tray doing the same, with `compute_s` of compute to hide behind.
double offload_time(const SystemContext& sys, double optimizer_params, double activation_bytes, double compute_s) {
  // Nothing to stream (a layout that offloads activations of a stage that keeps none, e.g. one-token
  // sequences): no time, and no request to the memory model, which refuses an offload of nothing.
  if (!(optimizer_params > 0) && !(activation_bytes > 0)) return 0;
  SystemContext::OffloadMemo& memo = *sys.offload_streaming;
  const std::lock_guard<std::mutex> lock(memo.mutex);
  auto& streaming = memo.seconds;
  const auto key = std::make_pair(optimizer_params, activation_bytes);
  auto it = streaming.find(key);
  if (it == streaming.end()) {
    const TopologySpec& spec = sys.graph->spec();
    memory::OffloadRequest q;
    const double gpt = static_cast<double>(spec.tray.gpus.size());
    q.params = optimizer_params * gpt;
    q.optimizer_bytes_per_param = kHybridTransferBytesPerParam;  // each way (the memory model moves it down and up)
    q.offload_optimizer = optimizer_params > 0;
    q.activation_bytes = activation_bytes * gpt;
    q.offload_activations = activation_bytes > 0;
    for (const auto& g : spec.tray.gpus) q.gpus.push_back(g.id);
    it = streaming.emplace(key, memory::offload_step(spec, q).step_s).first;
  }
  return std::max(0.0, it->second - compute_s);
}

// Seconds per step of the host CPU's Adam over this GPU's offloaded shard: one core's rate, or the rank's share of
// the host's memory bandwidth where that is less. Not hidden: it runs between the last backward and the next forward.
double cpu_adam_time(const SystemContext& sys, double params) {
  if (!(params > 0)) return 0;
  if (!(sys.host_memory_Bps_per_gpu > 0))
    throw InputError("--offload", "", "optimizer on " + sys.system_id, "a system whose CPUs state their memory bandwidth");
  return std::max(params / kCpuAdamParamsPerSecondPerRank, params * kCpuAdamBytesPerParam / sys.host_memory_Bps_per_gpu);
}

// A reduce-scatter or all-gather over a group that spans several fast domains with the same number of
// members in each: the better of the flat collective and the two-level one (inside each domain over
// NVLink, then across domains among the members at the same position, on 1/d of the data), which is
// what NCCL reaches with one ring per NIC rail.
struct GroupTime {
  double time_s = 0;
  std::string algorithm;
  double sm_s = 0;  // SM-seconds its kernels hold: each piece's time x its NCCL channels
};
GroupTime group_collective(CollectiveOp op, const GroupSpan& g, double bytes, const std::string& dtype, CommCost& comm) {
  if (g.id < 0 || g.size < 2 || bytes <= 0) return {};
  const bool two_level_ok = (op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) && g.inner >= 0;
  if (two_level_ok) {
    // Across domains with equal members in each: the two-level form (what NCCL reaches with a ring per
    // NIC rail). The flat ring over every GPU moves the same bytes per NIC with more latency steps, and
    // pricing it costs the collective model a route per member, so it is not asked.
    const double d = static_cast<double>(comm.gpus(g.inner).size());
    const double in = comm.time_s(op, g.inner, bytes, dtype), across = comm.time_s(op, g.outer, bytes / d, dtype);
    return GroupTime{in + across,
                     "two-level (" + comm.algorithm(op, g.inner, bytes, dtype) + " in domain, " +
                         comm.algorithm(op, g.outer, bytes / d, dtype) + " across)",
                     in * comm.sms(op, g.inner, bytes, dtype) + across * comm.sms(op, g.outer, bytes / d, dtype)};
  }
  const double t = comm.time_s(op, g.id, bytes, dtype);
  return GroupTime{t, comm.algorithm(op, g.id, bytes, dtype), t * comm.sms(op, g.id, bytes, dtype)};
}

GroupSpan span_of(const RankPlacement& p, const std::vector<int>& ranks, CommCost& comm) {
  GroupSpan g;
  if (ranks.empty()) return g;
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

// The pipeline's send/recv on the critical path: activations (forward) and their gradients (backward)
// cross each chunk boundary, every micro-batch leaving each of a GPU's VP chunks once forward and once
// backward, plus the fill and drain.
struct PipelineTransfers {
  Work work;
  double transfers = 0, bytes = 0, each_s = 0;
};
PipelineTransfers pipeline_transfers(const ModelSpec& model, const TrainingJob& job, const ParallelLayout& l, const MeshGroups& g,
                                     CommCost& comm) {
  PipelineTransfers p;
  const double tokens_mb = static_cast<double>(l.micro_batch) * job.seq_len / l.cp;
  p.bytes = tokens_mb * model.hidden_size * 2 / l.tp;
  p.each_s = comm.time_s(CollectiveOp::send_recv, g.pp_pair.id, p.bytes);
  p.transfers = 2.0 * l.micro_batches * l.virtual_stages + 2.0 * (l.pp - 1);
  p.work.x[kPpTransfers] = p.transfers;
  p.work.add_fixed(p.transfers * p.each_s);
  return p;
}

// The stage with the most parameters (dense + expert, before sharding): the one whose data-parallel
// collectives the step pays.
struct ParamStage {
  int stage = 0;
  double dense = 0, expert = 0;
};
ParamStage params_stage(const ModelSpec& model, const TrainingJob& job, const ParallelLayout& l, const std::vector<StageSlice>& chunks) {
  ParamStage p;
  double most = -1;
  const ParallelShape par = layer_shape(job, l).par;
  for (int s = 0; s < l.pp; ++s) {
    const auto [d, e] = chunk_params(model, chunks_of_stage(chunks, l.pp, s), par, job.mtp);
    if (d + e > most) most = d + e, p.stage = s, p.dense = d, p.expert = e;
  }
  return p;
}

// The data-parallel collectives of that stage's parameters under the layout's ZeRO stage, and how much of
// them stays exposed with `window_s` of the stage's computation to hide behind (forward one third,
// backward two thirds). With VP chunks, Megatron reduces each chunk's gradients when its last backward
// ends, during the pipeline's drain, so only the last chunk's share (1/VP of the bytes and of the window)
// can stay exposed; the parameter all-gather likewise waits only for the first chunk's. Exposed time does
// not grow with the window.
struct DataParallelComm {
  double total = 0, exposed = 0;
  double sm = 0;  // SM-seconds the collectives' kernels hold
  std::string what, algorithm;
};
DataParallelComm data_parallel_comm(const TrainingJob& job, const ParallelLayout& l, const MeshGroups& g, CommCost& comm,
                                    const ParamStage& params, double window_s) {
  DataParallelComm out;
  const double m = l.micro_batches, v = l.virtual_stages;
  const std::string gdt = job.grad_bytes >= 4 ? "float" : "bfloat16";
  const double gd = params.dense * job.grad_bytes, ge = params.expert * job.grad_bytes;
  const double pb = job.precision.param_bytes;  // FP8 primary weights gather in FP8
  const double pd = params.dense * pb, pe = params.expert * pb;
  const std::string pdt = pb < 2 ? "uint8" : "bfloat16";
  const double F = window_s / 3, B = window_s - F;
  auto coll = [&](CollectiveOp op, const GroupSpan& grp, double bytes, const std::string& dt) {
    return group_collective(op, grp, bytes, dt, comm);
  };
  const GroupSpan& dg = g.dense_dp;
  const GroupSpan& eg = g.expert_dp;
  if (l.zero_stage == 0) {
    const GroupTime a = coll(CollectiveOp::all_reduce, dg, gd, gdt), ae = coll(CollectiveOp::all_reduce, eg, ge, gdt);
    const double t = a.time_s + ae.time_s;
    out.total = t;
    out.sm = a.sm_s + ae.sm_s;
    out.exposed = std::max(0.0, t - B) / v;
    out.what = "gradient all-reduce, overlapped with the last backward";
    out.algorithm = a.algorithm;
  } else if (l.zero_stage <= 2) {
    const GroupTime rsd = coll(CollectiveOp::reduce_scatter, dg, gd, gdt), rse = coll(CollectiveOp::reduce_scatter, eg, ge, gdt);
    const GroupTime agd = coll(CollectiveOp::all_gather, dg, pd, pdt), age = coll(CollectiveOp::all_gather, eg, pe, pdt);
    const double rs = rsd.time_s + rse.time_s, ag = agd.time_s + age.time_s;
    const double rs_sm = rsd.sm_s + rse.sm_s, ag_sm = agd.sm_s + age.sm_s;
    out.algorithm = rsd.algorithm;
    if (l.zero_stage == 1) {
      out.total = rs + ag;
      out.sm = rs_sm + ag_sm;
      out.exposed = (std::max(0.0, rs - B) + std::max(0.0, ag - F)) / v;
      out.what = "gradient reduce-scatter (overlapped with the last backward) + parameter all-gather (with the next forward)";
    } else {
      out.total = m * rs + ag;
      out.sm = m * rs_sm + ag_sm;
      out.exposed = m * std::max(0.0, rs - B) + std::max(0.0, ag - F) / v;
      out.what = "gradient reduce-scatter every micro-batch (with its backward) + parameter all-gather (with the next forward)";
    }
  } else {
    // FSDP over the whole DP x CP (EDP) group, or HSDP: inside the shard group per micro-batch and
    // a gradient all-reduce across the replicas once per step.
    const bool hsdp = l.shard_group > 0 && g.shard.id >= 0;
    const GroupSpan& sd = hsdp ? g.shard : dg;
    const GroupSpan& se = hsdp ? g.expert_shard : eg;
    const GroupTime agd = coll(CollectiveOp::all_gather, sd, pd, pdt), age = coll(CollectiveOp::all_gather, se, pe, pdt);
    const GroupTime rsd = coll(CollectiveOp::reduce_scatter, sd, gd, gdt), rse = coll(CollectiveOp::reduce_scatter, se, ge, gdt);
    const double ag = agd.time_s + age.time_s, rs = rsd.time_s + rse.time_s;
    out.total = m * (2 * ag + rs);
    out.sm = m * (2 * (agd.sm_s + age.sm_s) + rsd.sm_s + rse.sm_s);
    out.exposed = m * (std::max(0.0, ag - F) + std::max(0.0, ag + rs - B));
    out.algorithm = agd.algorithm;
    out.what = hsdp ? "HSDP: parameter all-gather before forward and backward, gradient reduce-scatter, every micro-batch, inside shard groups of " +
                      std::to_string(l.shard_group) + "; gradient all-reduce across them once per step"
                : "FSDP: parameter all-gather before forward and backward, gradient reduce-scatter, every micro-batch";
    if (hsdp && dg.size > sd.size) {
      // replicas: one all-reduce of this GPU's shard over the groups' counterparts (priced on the
      // whole group with the shard's bytes: an upper bound of the cross-replica ring)
      const GroupTime ar = coll(CollectiveOp::all_reduce, dg, gd / sd.size, gdt);
      out.total += ar.time_s;
      out.sm += ar.sm_s;
      out.exposed += std::max(0.0, ar.time_s - B);
    }
  }
  return out;
}

}  // namespace

double step_lower_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l,
                        const std::vector<StageSlice>* given, int* stage) {
  Costs costs(context_for(model, job, sys, l, nullptr, nullptr));
  const std::vector<StageSlice> chunks = given ? *given : partition(model, l, costs);
  const ComputeModel& cm = *sys.compute;
  double t_max = 0, t_sum = 0;
  int s_max = 0;
  for (int s = 0; s < l.pp; ++s) {
    ChunkCost w;
    for (const auto& c : StageChunks(chunks, l.pp, s)) w += chunk_cost(c, costs);
    const double t = cm.time_s(w.total());
    if (t > t_max) t_max = t, s_max = s;
    t_sum += t;
  }
  if (stage) *stage = s_max;
  return l.micro_batches * t_max + (l.pp - 1) * (t_sum / l.pp) / l.virtual_stages;
}

double step_split_free_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l) {
  ParallelLayout none = l;
  none.recompute = RecomputePlan{};
  Costs costs(context_for(model, job, sys, none, nullptr, nullptr));
  const auto whole = [&] {
    // One chunk of every layer with the head and MTP: chunk_cost's sum, as the stages' chunks together hold it.
    return sys.compute->time_s(chunk_cost(StageSlice{0, model.layers, true, true, true}, costs).total());
  };
  LayerCostCache* shared = LayerCostCache::active(costs.context());
  const double total_s = shared != nullptr ? shared->whole_model_s(costs.context(), whole) : whole();
  const double mean_s = total_s / l.pp;
  // step_lower_bound: micro-batches x busiest stage + (PP - 1) x mean / VP, the busiest no less than the mean.
  // The margin covers the two sums' different rounding (~1e-15 relative).
  const double bound_s = l.micro_batches * mean_s + (l.pp - 1) * mean_s / l.virtual_stages;
  return bound_s - std::fabs(bound_s) * 1e-9;
}

double comm_lower_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const std::vector<ParallelLayout>& choices,
                        const MeshGroups& g, CommCost& comm, const std::vector<StageSlice>& chunks, int stage) {
  if (choices.empty()) return 0;
  const ComputeModel& cm = *sys.compute;
  ParallelLayout l = choices.front();
  l.recompute = RecomputePlan{};  // recomputing only repeats collectives (cost_of)
  Costs costs(context_for(model, job, sys, l, &g, &comm));
  // The bottleneck stage's collectives every micro-batch, and every stage's in the bubble (mean x (PP - 1) / VP).
  Work at_stage, mean;
  for (int s = 0; s < l.pp; ++s) {
    ChunkCost w;
    for (const auto& c : StageChunks(chunks, l.pp, s)) w += chunk_cost(c, costs);
    if (s == stage) at_stage = w.comm;
    mean += w.comm * (1.0 / l.pp);
  }
  Work extra = at_stage * static_cast<double>(l.micro_batches) + mean * ((l.pp - 1) / static_cast<double>(l.virtual_stages));
  if (l.pp > 1) extra += pipeline_transfers(model, job, l, g, comm).work;
  // Data parallelism: the least exposed time over the memory choices, each with a window no shorter than
  // estimate_step's (the stage's computation under that choice's recompute, no collective subtracted).
  double dp = 0;
  if (g.dense_dp.size > 1 || g.expert_dp.size > 1) {
    const ParamStage params = params_stage(model, job, l, chunks);
    std::vector<std::pair<RecomputePlan, double>> windows;  // choices share a few recompute plans
    auto window_of = [&](const ParallelLayout& choice) {
      for (const auto& [plan, w] : windows)
        if (plan == choice.recompute) return w;
      Costs compute_only(context_for(model, job, sys, choice, nullptr, nullptr));
      ChunkCost w;
      for (const auto& c : StageChunks(chunks, l.pp, params.stage)) w += chunk_cost(c, compute_only);
      windows.emplace_back(choice.recompute, cm.time_s(w.compute + w.recompute));
      return windows.back().second;
    };
    // Exposed time does not grow with the window: per ZeRO stage, the choices' longest window gives the least.
    std::map<int, double> longest;  // ZeRO stage -> window
    bool hsdp = false;              // HSDP's shard groups are not among these groups: no bound
    for (const ParallelLayout& choice : choices) {
      hsdp = hsdp || choice.shard_group != 0;
      double& w = longest.emplace(choice.zero_stage, 0.0).first->second;
      w = std::max(w, window_of(choice));
    }
    if (!hsdp) {
      dp = -1;
      for (const auto& [zero, window] : longest) {
        ParallelLayout z = l;
        z.zero_stage = zero;
        const double exposed = data_parallel_comm(job, z, g, comm, params, window).exposed;
        dp = dp < 0 ? exposed : std::min(dp, exposed);
      }
    }
  }
  // Not negative while the fitted exposure coefficients are not; if one were, no tightening.
  return std::max(0.0, cm.time_s(extra)) + dp;
}

MeshGroups mesh_groups(const RankPlacement& p, const ParallelLayout& l, CommCost& comm) {
  MeshGroups g;
  g.tp = span_of(p, p.worst_group_ranks(l, GroupKind::tp), comm);
  const std::vector<int> cp = p.worst_group_ranks(l, GroupKind::cp);
  g.cp = span_of(p, cp, comm);
  g.cp_pair = pair_of(p, cp, comm);
  const std::vector<int> pp = p.worst_group_ranks(l, GroupKind::pp);
  g.pp = span_of(p, pp, comm);
  g.pp_pair = pair_of(p, pp, comm);
  const std::vector<int> dense = p.worst_group_ranks(l, GroupKind::dp_cp);
  g.dense_dp = span_of(p, dense, comm);
  const std::vector<int> expert = p.worst_group_ranks(l, GroupKind::edp);
  g.expert_dp = span_of(p, expert, comm);
  g.ep = span_of(p, p.worst_group_ranks(l, GroupKind::ep), comm);
  g.etp = span_of(p, p.worst_group_ranks(l, GroupKind::etp), comm);
  if (l.zero_stage >= 3 && l.shard_group > 0) {
    // HSDP: shard inside consecutive groups of the DP x CP group, replicate across them
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(l.shard_group), dense.size());
    g.shard = span_of(p, std::vector<int>(dense.begin(), dense.begin() + static_cast<long>(n)), comm);
    const std::size_t ne = std::min<std::size_t>(static_cast<std::size_t>(l.shard_group), expert.size());
    g.expert_shard = span_of(p, std::vector<int>(expert.begin(), expert.begin() + static_cast<long>(ne)), comm);
  }
  return g;
}

StepEstimate estimate_step(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const RankPlacement& placement,
                           const ParallelLayout& l, CommCost& comm, const MeshGroups* groups_in, const std::vector<StageSlice>* given) {
  StepEstimate est;
  const ComputeModel& cm = *sys.compute;
  const MeshGroups g = groups_in ? *groups_in : mesh_groups(placement, l, comm);
  Costs costs(context_for(model, job, sys, l, &g, &comm));
  const std::vector<StageSlice> chunks = given ? *given : partition(model, l, costs);

  // Per pipeline stage: its chunks' costs for one micro-batch.
  std::vector<ChunkCost> st(static_cast<std::size_t>(l.pp));
  for (int s = 0; s < l.pp; ++s) {
    int layers = 0;
    for (const auto& c : StageChunks(chunks, l.pp, s)) {
      st[static_cast<std::size_t>(s)] += chunk_cost(c, costs);
      layers += c.layers;
    }
    est.stage_layers.push_back(layers);
  }
  est.pp_layout = megatron_pp_layout(chunks, job.mtp ? model.mtp_layers : 0);
  int bottleneck = 0;
  for (int s = 0; s < l.pp; ++s) {
    const double t = cm.time_s(st[static_cast<std::size_t>(s)].total());
    est.stage_times.push_back(t);
    if (t > est.stage_times[static_cast<std::size_t>(bottleneck)]) bottleneck = s;
  }
  est.bottleneck_stage = bottleneck;
  const ChunkCost& b = st[static_cast<std::size_t>(bottleneck)];
  const double m = l.micro_batches, v = l.virtual_stages;
  Work mean;
  for (const auto& x : st) mean += x.total() * (1.0 / l.pp);
  const Work bubble = mean * ((l.pp - 1) / v);
  Work step = b.total() * m + bubble;
  est.bubble_s = cm.time_s(bubble);
  est.compute_s = m * cm.time_s(b.compute + b.recompute);
  est.recompute_s = m * cm.time_s(b.recompute);
  {
    Work over;
    for (int f : {kGemmLaunches, kBlockPasses, kMoePasses}) over.x[f] = (b.compute + b.recompute).x[f];
    est.overhead_s = m * cm.time_s(over);
  }

  auto add = [&](CommTime c) {
    est.comm_total_s += c.total_s;
    est.comm_exposed_s += c.exposed_s;
    est.contention_s += c.contention_s;
    est.comm.push_back(std::move(c));
  };
  const LayerShape shape = layer_shape(job, l);
  const double tokens_mb = static_cast<double>(l.micro_batch) * job.seq_len / l.cp;
  const double h = model.hidden_size;
  if (b.tp > 0)
    add({"tp", "sequence-parallel all-gather + reduce-scatter around every TP-split block (and ETP around the experts)",
         m * b.tp, m * b.tp * cm.coefficients()[kTpComm], tokens_mb * h * 2, l.tp, g.tp.domains,
         comm.algorithm(CollectiveOp::all_gather, g.tp.id, tokens_mb * h * 2)});
  if (b.ep > 0) {
    const double exposed = job.ep_overlap ? cm.coefficients()[kEpOverlapComm] : 1;
    const double bytes = tokens_mb / l.tp * model.moe.top_k * (model.moe.latent_size > 0 ? model.moe.latent_size : h) * 2;
    CommTime c{"ep", std::string("MoE dispatch + combine (") + to_string(job.dispatcher) + ") per MoE block, forward and backward" +
                         (job.ep_overlap ? ", overlapped with computation" : ""),
               m * b.ep, m * b.ep * exposed, bytes, l.ep, g.ep.domains, comm.moe_dispatch_algorithm(g.ep.id, g.ep.inner, g.ep.outer, bytes)};
    c.contention_s = m * b.ep_sm * (1 - exposed);
    add(c);
  }
  if (b.cp > 0)
    add({"cp", "ring attention K/V exchange per layer, overlapped with attention", m * b.cp, m * b.cp_exposed,
         layer_work(model, LayerType{LayerType::full, LayerType::no_ffn, false}, shape).cp_bytes, l.cp, g.cp.domains,
         comm.algorithm(CollectiveOp::send_recv, g.cp_pair.id, tokens_mb * h)});
  if (l.pp > 1) {
    const PipelineTransfers pp = pipeline_transfers(model, job, l, g, comm);
    step += pp.work;
    const double each = pp.each_s + cm.coefficients()[kPpTransfers];
    add({"pp", "send/recv of activations and their gradients between stages, every one on the critical path", pp.transfers * each,
         pp.transfers * each, pp.bytes, 2, g.pp.domains,
         comm.algorithm(CollectiveOp::send_recv, g.pp_pair.id, pp.bytes)});
  }

  // Memory of the fullest stage, and data parallelism on the stage with the most parameters.
  int mem_stage = 0;
  est.memory = layout_memory(model, job, sys, l, &mem_stage, &chunks);
  est.memory_stage = mem_stage;
  est.memory_capacity = sys.hbm_bytes * (1 - job.memory_reserve);
  est.fits = fits(est.memory, job, sys);
  {
    const ParamStage params = params_stage(model, job, l, chunks);
    const double dense = params.dense, expert = params.expert;
    const double gd = dense * job.grad_bytes;
    // Overlap windows: the last micro-batch's backward and the first one's forward on that stage. The
    // windows are the stage's computation less the time its TP and EP collectives hold the same GPU's
    // links (the DP traffic of a group inside the domain competes with them for the NVLink ports; across
    // domains the NIC is shared with EP's cross-domain share).
    const ChunkCost& pst = st[static_cast<std::size_t>(params.stage)];
    const double window = std::max(0.0, cm.time_s(pst.compute + pst.recompute) - pst.tp - pst.ep);
    const GroupSpan& dg = g.dense_dp;
    if (dg.size > 1 || g.expert_dp.size > 1) {
      const DataParallelComm d = data_parallel_comm(job, l, g, comm, params, window);
      // The hidden part runs beside computation that meanwhile lacks the SMs NCCL's kernels hold (one
      // per channel): it loses that share of the overlapped time.
      const double contention = d.total > 0 ? (d.total - d.exposed) / d.total * d.sm / cm.sm_count() : 0;
      CommTime c{"dp", d.what, d.total, d.exposed, gd, dg.size, dg.domains, d.algorithm};
      c.contention_s = contention;
      add(c);
      step.add_fixed(d.exposed + contention);
    }
    // Optimizer: Adam over this GPU's shard, HBM-bound: read grad + fp32 master + m + v, write master,
    // m, v and the bf16 weight.
    const double dp_dense = static_cast<double>(l.dp) * l.cp, dp_expert = std::max(1, l.edp());
    const double shard = l.zero_stage >= 1 ? dense / dp_dense + expert / dp_expert : dense + expert;
    if (l.offload_optimizer) {
      // the GPU casts the fp32 parameters that came back into its bf16 weights; the host runs Adam (above)
      est.optimizer_s = cm.streaming_s(shard * (job.grad_bytes + 2));
      est.offload_s += offload_time(sys, shard, 0, 0) + cpu_adam_time(sys, shard);
    } else {
      est.optimizer_s = cm.streaming_s(shard * (job.grad_bytes + 12 + 12 + 2));
    }
  }
  if (l.offload_activations && in_flight(l, 0) > 1) {
    // What one micro-batch moves down and back: its offloadable tensors (two in flight, one offloaded).
    TrainingMemoryConfig c = memory_config(job, l, 0);
    c.micro_batches_in_flight = 2;
    c.interleave_factor = 1;
    c.offload_activations = true;
    c.offload_optimizer = false;
    const MemoryBreakdown one = training_memory_per_gpu(model, chunks_of_stage(chunks, l.pp, 0), c);
    est.offload_s += offload_time(sys, 0, m * one.host_offloaded, est.compute_s);
  }
  step.add_fixed(est.optimizer_s + est.offload_s);

  est.work = step;
  est.step_s = cm.time_s(step);
  const double tokens = static_cast<double>(job.global_batch) * job.seq_len;
  est.tokens_per_s = tokens / est.step_s;
  est.tokens_per_s_per_gpu = est.tokens_per_s / l.gpus();
  LayerCostCache* shared = LayerCostCache::active(costs.context());
  const double flops = tokens * (shared ? shared->training_flops_per_token() : forward_flops_per_token(model, job.seq_len).training());
  est.model_tflops_per_gpu = flops / (est.step_s * l.gpus()) / 1e12;
  est.mfu = flops / (est.step_s * l.gpus() * cm.gpu().peak_Fps(job.precision.gemm_dtype));
  return est;
}

}  // namespace racksim
