#include "models/planner/step_model.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "models/memory/offload.hpp"
#include "models/planner/placement.hpp"
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

namespace {

constexpr double kAttentionBackward = 2.5;  // flash-attention's backward / forward (FlashAttention-2 paper, section 3.1)
constexpr double kOtherBackward = 2;        // GEMMs: dgrad + wgrad; elementwise, scan: assumption

LayerShape layer_shape(const TrainingJob& job, const ParallelLayout& l) {
  LayerShape s;
  s.par = ParallelShape{l.tp, l.cp, l.ep, l.etp};
  s.micro_batch = l.micro_batch;
  s.seq_len = job.seq_len;
  s.imbalance = job.moe_imbalance;
  s.saved_input_bytes = job.precision.saved_input_bytes;
  return s;
}

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
  double cp_fwd = 0, cp_bwd = 0;
};

LayerComm layer_comm(const LayerWork& w, const TrainingJob& job, const MeshGroups& g, CommCost& comm, int top_k) {
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
  }
  if (w.cp_steps > 0) {
    c.cp_fwd = w.cp_steps * comm.time_s(CollectiveOp::send_recv, g.cp_pair.id, w.cp_bytes);
    c.cp_bwd = w.cp_steps * comm.time_s(CollectiveOp::send_recv, g.cp_pair.id, 2 * w.cp_bytes);
  }
  return c;
}

// Everything one layer type costs per micro-batch on one GPU, as Work.
struct LayerCost {
  Work compute;         // forward + backward
  Work recompute;       // recomputed forward work
  Work comm;            // exposed TP/EP/CP (features kTpComm, kEpOverlapComm, kFixed)
  Work fwd_window;      // forward compute + exposed comm (DP overlap windows)
  double tp_total = 0, ep_total = 0, cp_total = 0, cp_exposed = 0;
};

struct CostContext {
  const ModelSpec& model;
  const TrainingJob& job;
  const SystemContext& sys;
  const ParallelLayout& layout;
  const MeshGroups* groups;  // nullptr: no communication (the lower bound)
  CommCost* comm;
  LayerShape shape;
};

LayerCost cost_of(const LayerWork& w, const CostContext& cx, bool full_recompute, int moe_top_k) {
  const ComputeModel& cm = *cx.sys.compute;
  const RecomputePlan& rc = cx.layout.recompute;
  LayerCost c;
  const auto all = [](unsigned) { return true; };
  Work fwd = compute_work(w, cx.job, cm, all, false);
  add_blocks(fwd, w, 1);
  Work bwd = compute_work(w, cx.job, cm, all, true);
  add_blocks(bwd, w, 2);
  c.compute = fwd + bwd;
  c.fwd_window = fwd;
  bool rec_moe = false;
  if (full_recompute) {
    c.recompute = fwd;
  } else if (rc.granularity == Recompute::selective) {
    const unsigned mods = rc.modules;
    c.recompute = compute_work(w, cx.job, cm, [mods](unsigned m) { return m != 0 && (m & mods); }, false);
    rec_moe = (mods & kRecMoe) && w.moe_blocks > 0;
    if (rec_moe) c.recompute.x[kMoePasses] += w.moe_blocks;
  }
  if (!cx.groups) return c;
  const LayerComm lc = layer_comm(w, cx.job, *cx.groups, *cx.comm, std::max(1, moe_top_k));
  const double tp = lc.tp_fwd + lc.tp_bwd + (full_recompute ? lc.tp_fwd : 0);
  c.comm.x[kTpComm] += tp;
  c.fwd_window.x[kTpComm] += lc.tp_fwd;
  c.tp_total = tp;
  const double ep = 2 * lc.ep_fwd + (full_recompute ? lc.ep_fwd : 0) + (rec_moe ? lc.ep_one * w.moe_recompute_all_to_alls : 0);
  c.comm.x[cx.job.ep_overlap ? kEpOverlapComm : kFixed] += ep;
  c.fwd_window.x[cx.job.ep_overlap ? kEpOverlapComm : kFixed] += lc.ep_fwd;
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

// Per-layer-type costs of a layout, cached for the duration of one estimate.
class Costs {
 public:
  explicit Costs(CostContext cx) : cx_(std::move(cx)) {}
  const LayerCost& layer(const LayerType& t, bool full) {
    const auto key = std::make_pair(t, full);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      const LayerWork w = layer_work(cx_.model, t, cx_.shape);
      it = cache_.emplace(key, cost_of(w, cx_, full, cx_.model.moe.top_k)).first;
    }
    return it->second;
  }
  const LayerCost& head() {
    if (!head_) head_ = cost_of(head_work(cx_.model, cx_.shape), cx_, false, 0);
    return *head_;
  }
  const LayerCost& mtp() {
    if (!mtp_) mtp_ = cost_of(mtp_work(cx_.model, cx_.shape), cx_, cx_.layout.recompute.granularity == Recompute::full, 0);
    return *mtp_;
  }
  const CostContext& context() const { return cx_; }

 private:
  CostContext cx_;
  std::map<std::pair<LayerType, bool>, LayerCost> cache_;
  std::optional<LayerCost> head_, mtp_;
};

bool full_recompute_at(const RecomputePlan& rc, int index_in_chunk) {
  if (rc.granularity != Recompute::full) return false;
  if (rc.full_layers == 0 || !rc.block_method) return true;
  return index_in_chunk < rc.full_layers;
}

// The cost of one chunk for one micro-batch.
struct ChunkCost {
  Work compute, recompute, comm, fwd_window;
  double tp = 0, ep = 0, cp = 0, cp_exposed = 0;
  void add(const LayerCost& c) {
    compute += c.compute;
    recompute += c.recompute;
    comm += c.comm;
    fwd_window += c.fwd_window;
    tp += c.tp_total, ep += c.ep_total, cp += c.cp_total, cp_exposed += c.cp_exposed;
  }
  Work total() const { return compute + recompute + comm; }
};

ChunkCost chunk_cost(const StageSlice& st, Costs& costs) {
  const CostContext& cx = costs.context();
  ChunkCost c;
  for (int i = 0; i < st.layers; ++i)
    c.add(costs.layer(cx.model.layer_type(st.first_layer + i), full_recompute_at(cx.layout.recompute, i)));
  if (st.has_head) c.add(costs.head());
  if (st.has_mtp && cx.job.mtp && cx.model.mtp_layers > 0)
    for (int k = 0; k < cx.model.mtp_layers; ++k) {
      c.add(costs.mtp());
      c.add(costs.head());
    }
  return c;
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
  c.shape = ParallelShape{l.tp, l.cp, l.ep, l.etp};
  c.dp = l.dp;
  c.micro_batch = l.micro_batch;
  c.seq_len = job.seq_len;
  c.zero_stage = l.zero_stage;
  c.shard_group = l.shard_group;
  c.recompute = l.recompute;
  c.grad_bytes = job.grad_bytes;
  c.weight_copy_bytes = job.precision.weight_copy_bytes;
  c.param_bytes = job.precision.param_bytes;
  c.saved_input_bytes = job.precision.saved_input_bytes;
  c.imbalance = job.moe_imbalance;
  c.mtp = job.mtp;
  c.micro_batches_in_flight = in_flight(l, stage);
  c.interleave_factor = interleave_factor(l);
  c.offload_optimizer = l.offload_optimizer;
  c.offload_activations = l.offload_activations;
  return c;
}

// Exposed seconds per step of streaming this GPU's optimizer shard (params) and/or activation bytes
// to and from host memory, by the memory model (models/memory/offload.hpp) for a whole tray doing the
// same, with `compute_s` of compute to hide behind.
double offload_time(const SystemContext& sys, double optimizer_params, double activation_bytes, double compute_s) {
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

// A reduce-scatter or all-gather over a group that spans several fast domains with the same number of
// members in each: the better of the flat collective and the two-level one (inside each domain over
// NVLink, then across domains among the members at the same position, on 1/d of the data), which is
// what NCCL reaches with one ring per NIC rail.
struct GroupTime {
  double time_s = 0;
  std::string algorithm;
};
GroupTime group_collective(CollectiveOp op, const GroupSpan& g, double bytes, const std::string& dtype, CommCost& comm) {
  if (g.id < 0 || g.size < 2 || bytes <= 0) return {};
  const bool two_level_ok = (op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) && g.inner >= 0;
  if (two_level_ok) {
    // Across domains with equal members in each: the two-level form (what NCCL reaches with a ring per
    // NIC rail). The flat ring over every GPU moves the same bytes per NIC with more latency steps, and
    // pricing it costs the collective model a route per member, so it is not asked.
    const double d = static_cast<double>(comm.gpus(g.inner).size());
    const double t = comm.time_s(op, g.inner, bytes, dtype) + comm.time_s(op, g.outer, bytes / d, dtype);
    return GroupTime{t, "two-level (" + comm.algorithm(op, g.inner, bytes, dtype) + " in domain, " +
                            comm.algorithm(op, g.outer, bytes / d, dtype) + " across)"};
  }
  return GroupTime{comm.time_s(op, g.id, bytes, dtype), comm.algorithm(op, g.id, bytes, dtype)};
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

// Weight of each layer (and of the head/MTP/embedding) for balancing the pipeline: its compute time
// for one micro-batch at the current parameters.
double layer_weight(Costs& costs, const LayerType& t) {
  const CostContext& cx = costs.context();
  return cx.sys.compute->time_s(costs.layer(t, false).compute);
}

}  // namespace

std::vector<StageSlice> chunks_of_stage(const std::vector<StageSlice>& chunks, int pp, int stage) {
  std::vector<StageSlice> out;
  for (std::size_t c = static_cast<std::size_t>(stage); c < chunks.size(); c += static_cast<std::size_t>(pp)) out.push_back(chunks[c]);
  return out;
}

std::vector<StageSlice> uniform_pp_chunks(int layers, int chunks) {
  std::vector<StageSlice> out;
  if (chunks < 1 || layers < 1) return out;
  std::vector<int> counts;
  if (layers % chunks == 0) {
    counts.assign(static_cast<std::size_t>(chunks), layers / chunks);
  } else if (chunks >= 2 && (layers + 2) % chunks == 0) {  // the embedding and the loss each count as a layer
    counts.assign(static_cast<std::size_t>(chunks), (layers + 2) / chunks);
    --counts.front(), --counts.back();
  } else if ((layers + 1) % chunks == 0) {  // the loss counts as a layer
    counts.assign(static_cast<std::size_t>(chunks), (layers + 1) / chunks);
    --counts.back();
  } else {
    return out;
  }
  int first = 0;
  for (int i = 0; i < chunks; ++i) {
    const int c = counts[static_cast<std::size_t>(i)];
    out.push_back(StageSlice{first, c, i == 0, i + 1 == chunks, i + 1 == chunks});
    first += c;
  }
  return out;
}

namespace {

// Expands Megatron's layout grammar: symbols E t m L |, "x*N" and "(...)*N" repeats, commas cosmetic.
std::string expand_layout(const std::string& s, std::size_t& i) {
  std::string out;
  while (i < s.size() && s[i] != ')') {
    const char c = s[i];
    std::string item;
    if (c == ',' || c == ' ') {
      ++i;
      continue;
    }
    if (c == '(') {
      ++i;
      item = expand_layout(s, i);
      if (i >= s.size() || s[i] != ')') throw std::invalid_argument(fmt::format("pipeline layout '{}': unbalanced '('", s));
      ++i;
    } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
      item = std::string(1, c);
      ++i;
    } else {
      throw std::invalid_argument(fmt::format("pipeline layout '{}': unexpected '{}' (symbols: E t m L |, x*N, (...)*N)", s, c));
    }
    if (i < s.size() && s[i] == '*') {
      ++i;
      const std::size_t start = i;
      int n = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && n < 100000) n = n * 10 + (s[i++] - '0');
      if (i == start) throw std::invalid_argument(fmt::format("pipeline layout '{}': '*' without a count", s));
      std::string r;
      for (int k = 0; k < n; ++k) r += item;
      item = r;
    }
    out += item;
  }
  return out;
}

}  // namespace

std::vector<StageSlice> parse_pp_layout(const std::string& text, const ModelSpec& model, int chunks) {
  std::size_t i = 0;
  const std::string flat = expand_layout(text, i);
  if (i != text.size()) throw std::invalid_argument(fmt::format("pipeline layout '{}': unbalanced ')'", text));
  std::vector<std::string> parts{""};
  for (char c : flat) {
    if (c == '|') parts.emplace_back();
    else parts.back() += c;
  }
  if (static_cast<int>(parts.size()) != chunks)
    throw std::invalid_argument(fmt::format("pipeline layout '{}' has {} chunks; PP x VP = {}", text, parts.size(), chunks));
  std::vector<StageSlice> out;
  int first = 0, mtp = 0;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    StageSlice st;
    st.first_layer = first;
    for (char x : parts[c]) {
      if (x == 't') ++st.layers;
      if (x == 'E') st.has_embedding = true;
      if (x == 'L') st.has_head = true;
      if (x == 'm') st.has_mtp = true, ++mtp;
    }
    if (st.has_embedding && c != 0) throw std::invalid_argument(fmt::format("pipeline layout '{}': the embedding (E) must open the first chunk", text));
    if (st.has_head && c + 1 != parts.size()) throw std::invalid_argument(fmt::format("pipeline layout '{}': the loss (L) must be in the last chunk", text));
    first += st.layers;
    out.push_back(st);
  }
  if (!out.front().has_embedding) throw std::invalid_argument(fmt::format("pipeline layout '{}': no embedding (E) in the first chunk", text));
  if (!out.back().has_head) throw std::invalid_argument(fmt::format("pipeline layout '{}': no loss (L) in the last chunk", text));
  if (first != model.layers)
    throw std::invalid_argument(fmt::format("pipeline layout '{}' places {} decoder layers; {} has {}", text, first, model.name, model.layers));
  if (mtp > 0 && mtp != model.mtp_layers)
    throw std::invalid_argument(fmt::format("pipeline layout '{}' places {} MTP layers; {} has {}", text, mtp, model.name, model.mtp_layers));
  if (mtp == 0 && model.mtp_layers > 0) out.back().has_mtp = true;  // Megatron puts them with the loss
  return out;
}

std::string megatron_pp_layout(const std::vector<StageSlice>& chunks, int mtp_layers) {
  if (chunks.size() <= 1) return "";
  std::vector<std::string> parts;
  for (const StageSlice& c : chunks) {
    std::string s = c.has_embedding ? "E" : "";
    if (c.layers == 1) s += "t";
    else if (c.layers == 2) s += "tt";
    else if (c.layers > 2) s += fmt::format("t*{}", c.layers);
    if (c.has_mtp) s += std::string(static_cast<std::size_t>(std::max(0, mtp_layers)), 'm');
    if (c.has_head) s += "L";
    parts.push_back(s);
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size();) {
    std::size_t j = i;
    while (j < parts.size() && parts[j] == parts[i]) ++j;
    const std::size_t r = j - i;
    const bool last = j == parts.size();
    if (r >= 2 && !last) {
      out += fmt::format("({}|)*{}", parts[i], r);
    } else if (r >= 3) {
      out += fmt::format("({}|)*{}{}", parts[i], r - 1, parts[i]);
    } else {
      for (std::size_t k = i; k < j; ++k) out += parts[k] + (k + 1 < parts.size() ? "|" : "");
    }
    i = j;
  }
  return out;
}

namespace {

std::vector<StageSlice> balanced_partition(const ModelSpec& model, const ParallelLayout& l, Costs& costs);

std::vector<StageSlice> partition(const ModelSpec& model, const ParallelLayout& l, Costs& costs) {
  const int k = l.pp * l.virtual_stages;
  if (k > 1 && !l.pp_layout.empty()) {
    if (l.pp_layout != "uniform") return parse_pp_layout(l.pp_layout, model, k);
    std::vector<StageSlice> u = uniform_pp_chunks(model.layers, k);
    if (!u.empty()) return u;
  }
  return balanced_partition(model, l, costs);
}

std::vector<StageSlice> balanced_partition(const ModelSpec& model, const ParallelLayout& l, Costs& costs) {
  const int k = l.pp * l.virtual_stages;
  const int n = model.layers;
  std::vector<StageSlice> out;
  if (k <= 1) {
    out.push_back(StageSlice{0, n, true, true, true});
    return out;
  }
  std::vector<double> w(static_cast<std::size_t>(n));
  std::map<LayerType, double> by_type;
  for (int i = 0; i < n; ++i) {
    const LayerType t = model.layer_type(i);
    auto it = by_type.find(t);
    if (it == by_type.end()) it = by_type.emplace(t, layer_weight(costs, t)).first;
    w[static_cast<std::size_t>(i)] = it->second;
  }
  const CostContext& cx = costs.context();
  double tail = cx.sys.compute->time_s(costs.head().compute);
  if (cx.job.mtp && model.mtp_layers > 0)
    tail += model.mtp_layers * cx.sys.compute->time_s(costs.mtp().compute + costs.head().compute);
  // Smallest bottleneck T such that the layers fit in k contiguous chunks of at most T (the last one also
  // carrying the head and MTP), each with at least one layer: bisection with a greedy fill from the end.
  auto chunks_needed = [&](double cap) {
    int chunks = 1, in_chunk = 0;
    double load = tail;
    for (int i = n - 1; i >= 0; --i) {
      const double x = w[static_cast<std::size_t>(i)];
      if (load + x > cap && in_chunk > 0) {
        ++chunks;
        load = 0;
        in_chunk = 0;
      }
      load += x;
      ++in_chunk;
    }
    return chunks;
  };
  double lo = 0, hi = tail;
  for (double x : w) hi += x, lo = std::max(lo, x);
  lo = std::max(lo, tail + w.back());
  for (int it = 0; it < 50 && hi - lo > 1e-9 * hi; ++it) {
    const double mid = (lo + hi) / 2;
    (chunks_needed(mid) <= k ? hi : lo) = mid;
  }
  // Greedy from the end at capacity hi, then split the fullest chunks until there are k.
  std::vector<std::pair<int, int>> ranges;  // [first, last] layer indices, built from the end
  {
    int last = n - 1, in_chunk = 0;
    double load = tail;
    for (int i = n - 1; i >= 0; --i) {
      const double x = w[static_cast<std::size_t>(i)];
      if (load + x > hi * (1 + 1e-12) && in_chunk > 0) {
        ranges.push_back({i + 1, last});
        last = i;
        load = 0;
        in_chunk = 0;
      }
      load += x;
      ++in_chunk;
    }
    ranges.push_back({0, last});
    std::reverse(ranges.begin(), ranges.end());
  }
  while (static_cast<int>(ranges.size()) < k) {
    std::size_t widest = 0;
    for (std::size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].second - ranges[i].first > ranges[widest].second - ranges[widest].first) widest = i;
    const auto [a, b] = ranges[widest];
    if (b == a) break;  // cannot happen: n >= k is checked by the callers
    const int mid = a + (b - a + 1) / 2;
    ranges[widest] = {a, mid - 1};
    ranges.insert(ranges.begin() + static_cast<long>(widest) + 1, {mid, b});
  }
  for (std::size_t i = 0; i < ranges.size(); ++i)
    out.push_back(StageSlice{ranges[i].first, ranges[i].second - ranges[i].first + 1, i == 0, i + 1 == ranges.size(),
                             i + 1 == ranges.size()});
  return out;
}

CostContext context_for(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l,
                        const MeshGroups* groups, CommCost* comm) {
  return CostContext{model, job, sys, l, groups, comm, layer_shape(job, l)};
}

}  // namespace

std::vector<StageSlice> pipeline_chunks(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys,
                                        const ParallelLayout& l) {
  Costs costs(context_for(model, job, sys, l, nullptr, nullptr));
  return partition(model, l, costs);
}

namespace {

// Stages holding the same layers (types and counts) and the same embedding/head differ only in
// micro-batches in flight, which fall with the stage index: the first of each make-up is the fullest.
std::vector<int> distinct_stages(const ModelSpec& model, const std::vector<StageSlice>& chunks, int pp) {
  std::vector<int> out;
  std::vector<std::vector<int>> seen;
  for (int s = 0; s < pp; ++s) {
    std::vector<int> makeup;
    for (const auto& c : chunks_of_stage(chunks, pp, s)) {
      makeup.insert(makeup.end(), {c.layers, c.has_embedding, c.has_head, c.has_mtp});
      for (int i = 0; i < c.layers; ++i) {
        const LayerType t = model.layer_type(c.first_layer + i);
        makeup.push_back(t.attention * 100 + t.ffn * 10 + (t.mamba ? 1 : 0));
      }
    }
    if (std::find(seen.begin(), seen.end(), makeup) != seen.end()) continue;
    seen.push_back(makeup);
    out.push_back(s);
  }
  return out;
}

}  // namespace

MemoryBreakdown layout_memory(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l,
                              int* stage_out, const std::vector<StageSlice>* given) {
  const std::vector<StageSlice> chunks = given ? *given : pipeline_chunks(model, job, sys, l);
  MemoryFitter fitter(model, job, l, chunks);
  return fitter.worst(l.zero_stage, l.shard_group, l.recompute, l.offload_optimizer, l.offload_activations, stage_out);
}

MemoryFitter::MemoryFitter(const ModelSpec& model, const TrainingJob& job, const ParallelLayout& layout, const std::vector<StageSlice>& chunks)
    : model_(model), job_(job), layout_(layout), stages_(distinct_stages(model, chunks, layout.pp)) {
  for (int s : stages_) chunks_.push_back(chunks_of_stage(chunks, layout.pp, s));
}

MemoryBreakdown MemoryFitter::worst(int zero, int shard, const RecomputePlan& rc, bool oo, bool oa, int* stage_out) {
  MemoryBreakdown worst;
  int worst_stage = 0;
  const std::string rkey = rc.text();
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    const int s = stages_[i];
    // the parameter part (weights, gradients, optimizer) with no activations, and the activation part
    auto pk = std::make_tuple(i, zero, shard, oo);
    auto pit = params_.find(pk);
    if (pit == params_.end()) {
      ParallelLayout l = layout_;
      l.zero_stage = zero, l.shard_group = shard, l.offload_optimizer = oo, l.offload_activations = false;
      l.recompute = RecomputePlan{};
      TrainingMemoryConfig c = memory_config(job_, l, s);
      pit = params_.emplace(pk, training_memory_per_gpu(model_, chunks_[i], c)).first;
    }
    auto ak = std::make_tuple(i, rkey, oa);
    auto ait = activations_.find(ak);
    if (ait == activations_.end()) {
      ParallelLayout l = layout_;
      l.recompute = rc, l.offload_activations = oa, l.offload_optimizer = false;
      ait = activations_.emplace(ak, training_memory_per_gpu(model_, chunks_[i], memory_config(job_, l, s))).first;
    }
    MemoryBreakdown b = pit->second;
    const MemoryBreakdown& a = ait->second;
    b.activations = a.activations;
    b.logits = a.logits;
    b.host_offloaded = pit->second.host_offloaded + (a.host_offloaded - 0);  // activation offload (optimizer off there)
    if (i == 0 || b.total() > worst.total()) {
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

double step_lower_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& sys, const ParallelLayout& l,
                        const std::vector<StageSlice>* given) {
  Costs costs(context_for(model, job, sys, l, nullptr, nullptr));
  const std::vector<StageSlice> chunks = given ? *given : partition(model, l, costs);
  const ComputeModel& cm = *sys.compute;
  double t_max = 0, t_sum = 0;
  for (int s = 0; s < l.pp; ++s) {
    Work w;
    for (const auto& c : chunks_of_stage(chunks, l.pp, s)) w += chunk_cost(c, costs).total();
    const double t = cm.time_s(w);
    t_max = std::max(t_max, t);
    t_sum += t;
  }
  return l.micro_batches * t_max + (l.pp - 1) * (t_sum / l.pp) / l.virtual_stages;
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
    for (const auto& c : chunks_of_stage(chunks, l.pp, s)) {
      const ChunkCost cc = chunk_cost(c, costs);
      ChunkCost& x = st[static_cast<std::size_t>(s)];
      x.compute += cc.compute, x.recompute += cc.recompute, x.comm += cc.comm, x.fwd_window += cc.fwd_window;
      x.tp += cc.tp, x.ep += cc.ep, x.cp += cc.cp, x.cp_exposed += cc.cp_exposed;
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
    add({"ep", std::string("MoE dispatch + combine (") + to_string(job.dispatcher) + ") per MoE block, forward and backward" +
                   (job.ep_overlap ? ", overlapped with computation" : ""),
         m * b.ep, m * b.ep * exposed, bytes, l.ep, g.ep.domains, comm.algorithm(CollectiveOp::all_to_all, g.ep.id, bytes)});
  }
  if (b.cp > 0)
    add({"cp", "ring attention K/V exchange per layer, overlapped with attention", m * b.cp, m * b.cp_exposed,
         layer_work(model, LayerType{LayerType::full, LayerType::no_ffn, false}, shape).cp_bytes, l.cp, g.cp.domains,
         comm.algorithm(CollectiveOp::send_recv, g.cp_pair.id, tokens_mb * h)});
  if (l.pp > 1) {
    // Activations (forward) and their gradients (backward) cross each chunk boundary: every micro-batch
    // leaves each of a GPU's VP chunks once forward and once backward, plus the fill and drain.
    const double bytes = tokens_mb * h * 2 / l.tp;
    const double t = comm.time_s(CollectiveOp::send_recv, g.pp_pair.id, bytes);
    const double transfers = 2 * m * v + 2 * (l.pp - 1);
    Work pp;
    pp.x[kPpTransfers] = transfers;
    pp.add_fixed(transfers * t);
    step += pp;
    const double each = t + cm.coefficients()[kPpTransfers];
    add({"pp", "send/recv of activations and their gradients between stages, every one on the critical path", transfers * each,
         transfers * each, bytes, 2, g.pp.domains,
         comm.algorithm(CollectiveOp::send_recv, g.pp_pair.id, bytes)});
  }

  // Memory of the fullest stage, and data parallelism on the stage with the most parameters.
  int mem_stage = 0;
  est.memory = layout_memory(model, job, sys, l, &mem_stage, &chunks);
  est.memory_stage = mem_stage;
  est.memory_capacity = sys.hbm_bytes * (1 - job.memory_reserve);
  est.fits = fits(est.memory, job, sys);
  {
    int ps = 0;
    double most = -1, dense = 0, expert = 0;
    for (int s = 0; s < l.pp; ++s) {
      const auto [d, e] = chunk_params(model, chunks_of_stage(chunks, l.pp, s), shape.par, job.mtp);
      if (d + e > most) most = d + e, ps = s, dense = d, expert = e;
    }
    const std::string gdt = job.grad_bytes >= 4 ? "float" : "bfloat16";
    const double gd = dense * job.grad_bytes, ge = expert * job.grad_bytes;
    const double pb = job.precision.param_bytes;  // FP8 primary weights gather in FP8
    const double pd = dense * pb, pe = expert * pb;
    const std::string pdt = pb < 2 ? "uint8" : "bfloat16";
    // Overlap windows: the last micro-batch's backward and the first one's forward on that stage. With
    // VP chunks, Megatron reduces each chunk's gradients when its last backward ends, during the
    // pipeline's drain, so only the last chunk's share (1/VP of the bytes and of the window) can stay
    // exposed; the parameter all-gather likewise waits only for the first chunk's. The windows are the
    // stage's computation less the time its TP and EP collectives hold the same GPU's links (the DP
    // traffic of a group inside the domain competes with them for the NVLink ports; across domains the
    // NIC is shared with EP's cross-domain share): forward one third, backward two thirds.
    const ChunkCost& pst = st[static_cast<std::size_t>(ps)];
    const double window = std::max(0.0, cm.time_s(pst.compute + pst.recompute) - pst.tp - pst.ep);
    const double F = window / 3, B = window - F;
    double total = 0, exposed = 0;
    std::string what, algo;
    auto coll = [&](CollectiveOp op, const GroupSpan& grp, double bytes, const std::string& dt) {
      return group_collective(op, grp, bytes, dt, comm);
    };
    const GroupSpan& dg = g.dense_dp;
    const GroupSpan& eg = g.expert_dp;
    if (dg.size > 1 || eg.size > 1) {
      if (l.zero_stage == 0) {
        const GroupTime a = coll(CollectiveOp::all_reduce, dg, gd, gdt);
        const double t = a.time_s + coll(CollectiveOp::all_reduce, eg, ge, gdt).time_s;
        total = t;
        exposed = std::max(0.0, t - B) / v;
        what = "gradient all-reduce, overlapped with the last backward";
        algo = a.algorithm;
      } else if (l.zero_stage <= 2) {
        const GroupTime rsd = coll(CollectiveOp::reduce_scatter, dg, gd, gdt);
        const double rs = rsd.time_s + coll(CollectiveOp::reduce_scatter, eg, ge, gdt).time_s;
        const double ag = coll(CollectiveOp::all_gather, dg, pd, pdt).time_s + coll(CollectiveOp::all_gather, eg, pe, pdt).time_s;
        algo = rsd.algorithm;
        if (l.zero_stage == 1) {
          total = rs + ag;
          exposed = (std::max(0.0, rs - B) + std::max(0.0, ag - F)) / v;
          what = "gradient reduce-scatter (overlapped with the last backward) + parameter all-gather (with the next forward)";
        } else {
          total = m * rs + ag;
          exposed = m * std::max(0.0, rs - B) + std::max(0.0, ag - F) / v;
          what = "gradient reduce-scatter every micro-batch (with its backward) + parameter all-gather (with the next forward)";
        }
      } else {
        // FSDP over the whole DP x CP (EDP) group, or HSDP: inside the shard group per micro-batch and
        // a gradient all-reduce across the replicas once per step.
        const bool hsdp = l.shard_group > 0 && g.shard.id >= 0;
        const GroupSpan& sd = hsdp ? g.shard : dg;
        const GroupSpan& se = hsdp ? g.expert_shard : eg;
        const GroupTime agd = coll(CollectiveOp::all_gather, sd, pd, pdt);
        const double ag = agd.time_s + coll(CollectiveOp::all_gather, se, pe, pdt).time_s;
        const double rs = coll(CollectiveOp::reduce_scatter, sd, gd, gdt).time_s + coll(CollectiveOp::reduce_scatter, se, ge, gdt).time_s;
        total = m * (2 * ag + rs);
        exposed = m * (std::max(0.0, ag - F) + std::max(0.0, ag + rs - B));
        algo = agd.algorithm;
        what = hsdp ? "HSDP: parameter all-gather before forward and backward, gradient reduce-scatter, every micro-batch, inside shard groups of " +
                          std::to_string(l.shard_group) + "; gradient all-reduce across them once per step"
                    : "FSDP: parameter all-gather before forward and backward, gradient reduce-scatter, every micro-batch";
        if (hsdp && dg.size > sd.size) {
          // replicas: one all-reduce of this GPU's shard over the groups' counterparts (priced on the
          // whole group with the shard's bytes: an upper bound of the cross-replica ring)
          const double ar = coll(CollectiveOp::all_reduce, dg, gd / sd.size, gdt).time_s;
          total += ar;
          exposed += std::max(0.0, ar - B);
        }
      }
      add({"dp", what, total, exposed, gd, dg.size, dg.domains, algo});
      step.add_fixed(exposed);
    }
    // Optimizer: Adam over this GPU's shard, HBM-bound: read grad + fp32 master + m + v, write master,
    // m, v and the bf16 weight.
    const double dp_dense = static_cast<double>(l.dp) * l.cp, dp_expert = std::max(1, l.edp());
    const double shard = l.zero_stage >= 1 ? dense / dp_dense + expert / dp_expert : dense + expert;
    if (l.offload_optimizer) {
      est.optimizer_s = cm.streaming_s(shard * (job.grad_bytes + 2));
      est.offload_s += offload_time(sys, shard, 0, 0);
    } else {
      est.optimizer_s = cm.streaming_s(shard * (job.grad_bytes + 12 + 12 + 2));
    }
  }
  if (l.offload_activations && in_flight(l, 0) > 1) {
    TrainingMemoryConfig c = memory_config(job, l, 0);
    c.micro_batches_in_flight = 1;
    c.interleave_factor = 1;
    c.offload_activations = false;
    const MemoryBreakdown one = training_memory_per_gpu(model, chunks_of_stage(chunks, l.pp, 0), c);
    est.offload_s += offload_time(sys, 0, m * one.activations, est.compute_s);
  }
  step.add_fixed(est.optimizer_s + est.offload_s);

  est.work = step;
  est.step_s = cm.time_s(step);
  const double tokens = static_cast<double>(job.global_batch) * job.seq_len;
  est.tokens_per_s = tokens / est.step_s;
  est.tokens_per_s_per_gpu = est.tokens_per_s / l.gpus();
  const double flops = tokens * forward_flops_per_token(model, job.seq_len).training();
  est.model_tflops_per_gpu = flops / (est.step_s * l.gpus()) / 1e12;
  est.mfu = flops / (est.step_s * l.gpus() * cm.gpu().peak_Fps(job.precision.gemm_dtype));
  return est;
}

}  // namespace racksim
