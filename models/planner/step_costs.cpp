#include "models/planner/step_costs.hpp"

#include "models/workload/model_costs.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace racksim::step_detail {

LayerShape layer_shape(const TrainingJob& job, const ParallelLayout& l) {
  LayerShape s;
  s.par = ParallelShape{l.tp, l.cp, l.ep, l.etp};
  s.micro_batch = l.micro_batch;
  s.seq_len = job.seq_len;
  s.imbalance = job.moe_imbalance;
  s.saved_input_bytes = job.precision.saved_input_bytes;
  return s;
}

bool keeps_bf16_layers(const ModelSpec& model, const TrainingJob& job) {
  return job.precision.id == "nvfp4" && (model.nvfp4_bf16_at_start > 0 || model.nvfp4_bf16_at_end > 0);
}

namespace {

// Forward compute of the items of a layer's work that `keep` accepts (by recompute module), `passes`
// times (GEMMs), with the backward factors when `backward`.
Work compute_work(const LayerWork& w, const TrainingJob& job, const ComputeModel& cm, const std::function<bool(unsigned)>& keep,
                  bool backward) {
  Work out;
  const double gemm_passes = backward ? 2 : 1;
  const double other = backward ? kOtherBackward : 1;
  const bool quantised = job.precision.quantize_bytes > 0;
  for (const auto& g : w.gemms) {
    if (!keep(g.module)) continue;
    cm.add_gemm(out, g.shape, g.low_precision ? job.precision.gemm_dtype : "bf16", gemm_passes);
    if (g.low_precision && quantised) {
      const double elements = backward ? g.shape.m * g.shape.n * g.shape.count : g.shape.m * g.shape.k * g.shape.count;
      cm.add_hbm(out, elements * job.precision.quantize_bytes);
    }
  }
  if (keep(kRecCoreAttn)) cm.add_attention(out, w.attention_flops * (backward ? kAttentionBackward : 1));
  if (keep(0)) cm.add_ssm(out, w.ssm_flops * other);
  w.elementwise.each([&](unsigned module, double bytes) {
    if (keep(module)) cm.add_hbm(out, bytes * other);
  });
  return out;
}

void add_blocks(Work& w, const LayerWork& lw, double passes) {
  w.x[kBlockPasses] += passes * lw.blocks;
  w.x[kMoePasses] += passes * lw.moe_blocks;
}

// The communication groups' times for one layer type.
struct LayerComm {
  double tp_fwd = 0, tp_bwd = 0;   // TP + ETP collectives
  double ep_fwd = 0;               // dispatch + combine of one pass (backward the same)
  double ep_one = 0;               // one all-to-all
  double ep_sm_share = 0;          // the SMs one all-to-all holds, of the GPU's
  double cp_fwd = 0, cp_bwd = 0;
};

LayerComm layer_comm(const LayerWork& w, const TrainingJob& job, const MeshGroups& g, CommCost& comm, int top_k, int sm_count) {
  LayerComm c;
  if (w.tp_pairs > 0) {
    const double ag = comm.time_s(CollectiveOp::all_gather, g.tp.id, w.tp_bytes);
    const double rs = comm.time_s(CollectiveOp::reduce_scatter, g.tp.id, w.tp_bytes);
    // Megatron's sequence parallelism: forward all-gather + reduce-scatter; backward all-gathers the
    // output gradient and (for wgrad) the input again, and reduce-scatters the input gradient.
    c.tp_fwd += w.tp_pairs * (ag + rs);
    c.tp_bwd += w.tp_pairs * (2 * ag + rs);
  }
  if (w.etp_pairs > 0) {
    const double ag = comm.time_s(CollectiveOp::all_gather, g.etp.id, w.etp_bytes);
    const double rs = comm.time_s(CollectiveOp::reduce_scatter, g.etp.id, w.etp_bytes);
    c.tp_fwd += w.etp_pairs * (ag + rs);
    c.tp_bwd += w.etp_pairs * (ag + rs);
  }
  if (w.ep_all_to_alls > 0) {
    // the busiest EP rank bounds the exchange: imbalance x the mean bytes
    const double bytes = w.ep_bytes * job.moe_imbalance;
    c.ep_one = comm.moe_dispatch_s(job.dispatcher, g.ep.id, g.ep.inner, g.ep.outer, bytes, bytes / top_k, top_k);
    c.ep_fwd = w.ep_all_to_alls * c.ep_one;
    c.ep_sm_share = comm.moe_dispatch_sms(job.dispatcher, g.ep.id, g.ep.inner, g.ep.outer, bytes) / static_cast<double>(sm_count);
  }
  if (w.cp_steps > 0) {
    c.cp_fwd = w.cp_steps * comm.time_s(CollectiveOp::send_recv, g.cp_pair.id, w.cp_bytes);
    c.cp_bwd = w.cp_steps * comm.time_s(CollectiveOp::send_recv, g.cp_pair.id, 2 * w.cp_bytes);
  }
  return c;
}

}  // namespace

LayerCompute compute_of(const LayerWork& w, const CostContext& cx, bool full_recompute) {
  const ComputeModel& cm = *cx.sys.compute;
  const RecomputePlan& rc = cx.layout.recompute;
  LayerCompute c;
  const auto all = [](unsigned) { return true; };
  Work fwd = compute_work(w, cx.job, cm, all, false);
  add_blocks(fwd, w, 1);
  Work bwd = compute_work(w, cx.job, cm, all, true);
  add_blocks(bwd, w, 2);
  c.compute = fwd + bwd;
  c.fwd_window = fwd;
  if (full_recompute) {
    c.recompute = fwd;
  } else if (rc.granularity == Recompute::selective) {
    const unsigned mods = rc.modules;
    c.recompute = compute_work(w, cx.job, cm, [mods](unsigned m) { return m != 0 && (m & mods); }, false);
    c.recompute_moe = (mods & kRecMoe) && w.moe_blocks > 0;
    if (c.recompute_moe) c.recompute.x[kMoePasses] += w.moe_blocks;
  }
  return c;
}

LayerCost cost_of(const LayerWork& w, const CostContext& cx, bool full_recompute, int moe_top_k) {
  return cost_of(w, compute_of(w, cx, full_recompute), cx, full_recompute, moe_top_k);
}

LayerCost cost_of(const LayerWork& w, const LayerCompute& lcomp, const CostContext& cx, bool full_recompute, int moe_top_k) {
  const ComputeModel& cm = *cx.sys.compute;
  LayerCost c;
  c.compute = lcomp.compute;
  c.fwd_window = lcomp.fwd_window;
  c.recompute = lcomp.recompute;
  const bool rec_moe = lcomp.recompute_moe;
  if (!cx.groups) return c;
  const LayerComm lc = layer_comm(w, cx.job, *cx.groups, *cx.comm, std::max(1, moe_top_k), cm.sm_count());
  const double tp = lc.tp_fwd + lc.tp_bwd + (full_recompute ? lc.tp_fwd : 0);
  c.comm.x[kTpComm] += tp;
  c.fwd_window.x[kTpComm] += lc.tp_fwd;
  c.tp_total = tp;
  const double ep = 2 * lc.ep_fwd + (full_recompute ? lc.ep_fwd : 0) + (rec_moe ? lc.ep_one * w.moe_recompute_all_to_alls : 0);
  if (cx.job.ep_overlap) {
    // The fitted fraction f of an overlapped all-to-all stays exposed; the rest runs beside computation
    // that meanwhile lacks the SMs the dispatch kernels hold (share s), which costs s of the overlapped
    // time: f ep + s (1 - f) ep = s ep + (1 - s) f ep, linear in f.
    const double sm = std::min(1.0, lc.ep_sm_share);
    c.comm.x[kEpOverlapComm] += (1 - sm) * ep;
    c.comm.add_fixed(sm * ep);
    c.fwd_window.x[kEpOverlapComm] += (1 - sm) * lc.ep_fwd;
    c.fwd_window.add_fixed(sm * lc.ep_fwd);
    c.ep_sm = sm * ep;
  } else {
    c.comm.add_fixed(ep);
    c.fwd_window.add_fixed(lc.ep_fwd);
  }
  c.ep_total = ep;
  if (lc.cp_fwd > 0) {
    // Ring attention overlaps each K/V step with the attention core on the chunk in hand.
    Work att_f, att_b;
    cm.add_attention(att_f, w.attention_flops);
    cm.add_attention(att_b, w.attention_flops * kAttentionBackward);
    const double ef = std::max(0.0, lc.cp_fwd - cm.time_s(att_f)), eb = std::max(0.0, lc.cp_bwd - cm.time_s(att_b));
    c.cp_total = lc.cp_fwd + lc.cp_bwd + (full_recompute ? lc.cp_fwd : 0);
    c.cp_exposed = ef + eb + (full_recompute ? ef : 0);
    c.comm.add_fixed(c.cp_exposed);
    c.fwd_window.add_fixed(ef);
  }
  return c;
}

ChunkCost chunk_cost(const StageSlice& st, Costs& costs) {
  const CostContext& cx = costs.context();
  ChunkCost c;
  for (int i = 0; i < st.layers; ++i)
    c.add(costs.layer(recipe_layer_type(cx.model, cx.bf16_layers, st.first_layer + i), full_recompute_at(cx.layout.recompute, i)));
  if (st.has_head) c.add(costs.head());
  if (st.has_mtp && cx.job.mtp && cx.model.mtp_layers > 0)
    for (int k = 0; k < cx.model.mtp_layers; ++k) {
      c.add(costs.mtp());
      c.add(costs.head());
    }
  return c;
}

namespace {

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
std::uint64_t code(int x) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(x)); }
}  // namespace

LayerCostCache* LayerCostCache::active(const CostContext& cx) {
  LayerCostCache* c = Scope::active();
  return c != nullptr && &c->model_ == &cx.model && &c->job_ == &cx.job && &c->compute_ == cx.sys.compute.get() ? c : nullptr;
}

LayerCostCache* LayerCostCache::active(const ModelSpec& model, const TrainingJob& job) {
  LayerCostCache* c = Scope::active();
  return c != nullptr && &c->model_ == &model && &c->job_ == &job ? c : nullptr;
}

SavedActivations& LayerCostCache::saved_activations(const LayerShape& shape) {
  auto& slot = saved_[work_key(WorkKind::layer, LayerType{}, shape)];
  if (!slot) slot = std::make_unique<SavedActivations>(model_, shape);
  return *slot;
}

LayerCostCache::WorkKey LayerCostCache::work_key(WorkKind kind, const LayerType& t, const LayerShape& s) {
  return {code(static_cast<int>(kind)), code(t.attention), code(t.ffn), code(t.mamba + 2 * t.bf16_gemms), code(s.par.tp), code(s.par.cp),
          code(s.par.ep), code(s.par.etp), code(s.micro_batch), code(s.seq_len), bits(s.imbalance), bits(s.saved_input_bytes)};
}

const LayerWork& LayerCostCache::work(WorkKind kind, const LayerType& type, const LayerShape& shape) {
  const WorkKey key = work_key(kind, type, shape);
  auto it = works_.find(key);
  if (it == works_.end()) {
    LayerWork w = kind == WorkKind::head ? head_work(model_, shape) : kind == WorkKind::mtp ? mtp_work(model_, shape) : layer_work(model_, type, shape);
    it = works_.emplace(key, std::move(w)).first;
  }
  return it->second;
}

const LayerCostCache::WorkAndCompute& LayerCostCache::compute(WorkKind kind, const LayerType& type, const CostContext& cx, bool full) {
  const WorkKey wk = work_key(kind, type, cx.shape);
  const RecomputePlan& rc = cx.layout.recompute;
  ComputeKey key{};
  std::copy(wk.begin(), wk.end(), key.begin());
  key[12] = full;
  key[13] = code(static_cast<int>(rc.granularity));
  key[14] = rc.modules;
  key[15] = code(rc.full_layers);
  key[16] = rc.block_method;
  auto it = computes_.find(key);
  if (it == computes_.end()) {
    const LayerWork& w = work(kind, type, cx.shape);
    it = computes_.emplace(key, WorkAndCompute{&w, compute_of(w, cx, full)}).first;
  }
  return it->second;
}

double LayerCostCache::training_flops_per_token() {
  if (training_flops_per_token_ < 0) training_flops_per_token_ = forward_flops_per_token(model_, job_.seq_len).training();
  return training_flops_per_token_;
}

LayerCost Costs::cost(WorkKind kind, const LayerType& t, bool full, int moe_top_k) {
  if (shared_ != nullptr) {
    const LayerCostCache::WorkAndCompute& wc = shared_->compute(kind, t, cx_, full);
    return cost_of(*wc.work, wc.compute, cx_, full, moe_top_k);
  }
  const LayerWork w = kind == WorkKind::head ? head_work(cx_.model, cx_.shape)
                      : kind == WorkKind::mtp ? mtp_work(cx_.model, cx_.shape)
                                              : layer_work(cx_.model, t, cx_.shape);
  return cost_of(w, cx_, full, moe_top_k);
}

CostContext context_for(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l,
                        const MeshGroups* groups, CommCost* comm) {
  return CostContext{model, job, sys, l, groups, comm, layer_shape(job, l), keeps_bf16_layers(model, job)};
}

double layer_weight(Costs& costs, const LayerType& t) {
  const CostContext& cx = costs.context();
  return cx.sys.compute->time_s(costs.layer(t, false).compute);
}

}  // namespace racksim::step_detail
