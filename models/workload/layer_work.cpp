#include "models/workload/layer_work.hpp"

#include <algorithm>
#include <sstream>

#include "models/workload/model_costs.hpp"
#include "sim/core/errors.hpp"

namespace racksim {

namespace {

const std::vector<std::pair<const char*, unsigned>> kModules{
    {"layernorm", kRecLayernorm}, {"core_attn", kRecCoreAttn}, {"mla_up_proj", kRecMlaUpProj}, {"mlp", kRecMlp},
    {"moe_act", kRecMoeAct},      {"moe", kRecMoe},            {"shared_experts", kRecSharedExperts}};

constexpr double kAct = 2;  // bf16 activations

}  // namespace

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "none";
}

std::vector<std::string> recompute_module_list(unsigned modules) {
  std::vector<std::string> out;
  for (const auto& [name, bit] : kModules)
    if (modules & bit) out.emplace_back(name);
  return out;
}

std::string recompute_module_names(unsigned modules) {
  std::string out;
  for (const auto& name : recompute_module_list(modules)) out += (out.empty() ? "" : ",") + name;
  return out;
}

std::string RecomputePlan::text() const {
  switch (granularity) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective(" + recompute_module_names(modules) + ")";
    case Recompute::full:
      if (full_layers == 0) return "full";
      return std::string("full(") + (block_method ? "block " : "uniform ") + std::to_string(full_layers) + ")";
  }
  return "none";
}

RecomputePlan parse_recompute(const std::string& text, const std::string& where) {
  RecomputePlan p;
  const std::string allowed =
      "none, selective, full, selective:<modules> (comma-separated: layernorm, core_attn, mla_up_proj, mlp, moe_act, moe, "
      "shared_experts), full:block:<layers> or full:uniform:<layers>";
  if (text == "none") return p;
  if (text == "selective") {
    p.granularity = Recompute::selective;
    p.modules = kRecLayernorm | kRecMoeAct | kRecMlp;
    return p;
  }
  if (text == "full") {
    p.granularity = Recompute::full;
    return p;
  }
  if (text.rfind("selective:", 0) == 0) {
    p.granularity = Recompute::selective;
    std::stringstream ss(text.substr(10));
    std::string item;
    while (std::getline(ss, item, ',')) {
      bool found = false;
      for (const auto& [name, bit] : kModules)
        if (item == name) p.modules |= bit, found = true;
      if (!found) throw InputError(where, "", "'" + text + "' (unknown module '" + item + "')", allowed);
    }
    if (p.modules == 0) throw InputError(where, "", "'" + text + "'", allowed);
    return p;
  }
  if (text.rfind("full:", 0) == 0) {
    const std::string rest = text.substr(5);
    const auto colon = rest.find(':');
    const std::string method = rest.substr(0, colon);
    if ((method == "block" || method == "uniform") && colon != std::string::npos) {
      try {
        std::size_t used = 0;
        const int n = std::stoi(rest.substr(colon + 1), &used);
        if (used == rest.size() - colon - 1 && n >= 1 && n <= 10000) {
          p.granularity = Recompute::full;
          p.block_method = method == "block";
          p.full_layers = n;
          return p;
        }
      } catch (const std::exception&) {
      }
    }
  }
  throw InputError(where, "", "'" + text + "'", allowed);
}

double LayerWork::matmul_flops() const {
  double f = 0;
  for (const auto& g : gemms) f += g.shape.flops();
  return f;
}

double LayerWork::saved_bytes(unsigned recomputed) const { return saved.kept(recomputed); }

namespace {

struct Builder {
  const ModelSpec& m;
  const LayerShape& s;
  LayerWork& w;
  double tp, t, tsp, h, in_b;

  void gemm(const char* name, double rows, double n, double k, unsigned module, bool low = true, double count = 1,
            bool grouped = false) {
    if (rows <= 0 || n <= 0 || k <= 0 || count <= 0) return;
    w.gemms.push_back({name, GemmShape{rows, n, k, count, grouped}, low, module});
    if (low) {
      w.quantize_fwd += rows * k * count;
      w.quantize_bwd += rows * n * count;
    }
  }
  void elementwise(unsigned module, double bytes) { w.elementwise.add(module, bytes); }
  void save(unsigned module, double bytes) { w.saved.add(module, bytes); }
  // A saved tensor of a module Megatron's fine-grained activation offload can move (LayerWork::offloadable).
  void save_offloadable(unsigned module, double bytes) {
    w.saved.add(module, bytes);
    w.offloadable.add(module, bytes);
  }

  // A norm over this GPU's sequence-parallel tokens: read and write h each; its output is the next
  // GEMM's input (saved at the recipe's input width), recomputed by module layernorm. A transformer
  // layer's attn_norm / mlp_norm output is offloadable; a Mamba mixer's norm is no offload module.
  void norm(bool offloadable = true) {
    elementwise(kRecLayernorm, 2 * kAct * tsp * h);
    if (offloadable) save_offloadable(kRecLayernorm, tsp * h * in_b);
    else save(kRecLayernorm, tsp * h * in_b);
  }
  void residual() { elementwise(0, 3 * kAct * tsp * h); }
  void sp_pair() {
    if (s.par.tp > 1) {
      w.tp_bytes = t * h * kAct;
      ++w.tp_pairs;
    }
  }

  void attention(int kind) {
    const auto& a = m.attention;
    const double heads = a.heads / tp;
    norm();
    sp_pair();
    save(0, tsp * h * kAct);  // block input for the norm's backward
    if (a.kind == AttentionKind::gqa) {
      const double q = heads * a.head_dim;
      const double kv = std::max(1.0, a.kv_heads / tp) * a.head_dim;  // replicated when TP > KV heads
      gemm("qkv", t, q + 2 * kv, h, 0);
      elementwise(0, 2 * kAct * t * (q + kv));  // rotary (and q/k norms)
      save_offloadable(0, t * (q + 2 * kv) * kAct);  // q, k, v for the attention backward (core_attn)
      save_offloadable(0, t * q * in_b);             // attention output, the output projection's input (attn_proj)
      gemm("attn_out", t, h, q, 0);
      w.cp_bytes = t * 2 * kv * kAct;
    } else {
      const double qk = a.qk_head_dim(), v = a.v_head_dim;
      if (a.q_lora_rank > 0) {
        gemm("q_down", t, a.q_lora_rank, h, 0);  // replicated over TP
        elementwise(kRecLayernorm, 2 * kAct * t * a.q_lora_rank);
        save(kRecLayernorm, t * a.q_lora_rank * in_b);
        gemm("q_up", t, heads * qk, a.q_lora_rank, kRecMlaUpProj);
      } else {
        gemm("q_proj", t, heads * qk, h, 0);
      }
      gemm("kv_down", t, a.kv_lora_rank + a.qk_rope_head_dim, h, 0);
      elementwise(kRecLayernorm, 2 * kAct * t * a.kv_lora_rank);
      save(kRecLayernorm, t * a.kv_lora_rank * in_b);
      save(0, t * (a.kv_lora_rank + a.qk_rope_head_dim) * kAct);
      gemm("kv_up", t, heads * (a.qk_nope_head_dim + v), a.kv_lora_rank, kRecMlaUpProj);
      elementwise(0, 2 * kAct * t * heads * qk);            // rotary on q and k
      save_offloadable(kRecMlaUpProj, t * heads * (2 * qk + v) * kAct);  // q, k, v of the attention core (core_attn)
      save_offloadable(0, t * heads * v * in_b);                         // attention output (attn_proj)
      gemm("attn_out", t, h, heads * v, 0);
      w.cp_bytes = t * heads * (qk + v) * kAct;
    }
    w.attention_flops += t * attention_flops_per_token(m, LayerType{kind, LayerType::no_ffn, false}, s.seq_len) / tp *
                         attention_head_dim_weight(m.attention.qk_head_dim());
    save_offloadable(kRecCoreAttn, t * heads * 4);  // softmax statistics (fp32; core_attn)
    residual();
    ++w.blocks;
  }

  void mamba() {
    const auto& mb = m.mamba;
    const double di = mb.d_inner() / tp, gn = static_cast<double>(mb.groups) * mb.state_size / tp, nh = mb.heads / tp;
    norm(false);
    sp_pair();
    save(0, tsp * h * kAct);
    gemm("mamba_in", t, 2 * di + 2 * gn + nh, h, 0);
    elementwise(0, kAct * t * (di + 2 * gn) * (mb.conv_kernel + 2));  // causal conv1d + SiLU
    w.ssm_flops += t * ssm_flops_per_token(m) / tp;
    elementwise(0, 3 * kAct * t * di);  // gated RMSNorm
    // What backward keeps of the mixer: Megatron's MambaMixer trains through mamba_ssm's fused
    // mamba_split_conv1d_scan_combined (use_mem_eff_path, its default), which saves the in_proj output zxbcdt
    // and the scan output out_x and recomputes the causal conv1d in backward (ssd_combined.py,
    // MambaSplitConv1dScanCombinedFn: save_for_backward(zxbcdt, conv1d_weight, ..., out_x, ...)); then the
    // mixer's RMSNorm keeps its input, the gated output. (Until session 50 the conv1d's output, di + 2 gn per
    // token, was counted too: 4 GB of Nemotron-H 8B's 8192-token micro-batch.)
    save(0, t * (2 * di + 2 * gn + nh) * kAct + 2 * t * di * kAct);
    save(0, t * di * in_b);  // the output projection's input
    gemm("mamba_out", t, h, di, 0);
    residual();
    ++w.blocks;
  }

  double ffn_mats() const { return gated(m.ffn_activation) ? 2 : 1; }  // fc1 width multiple

  void dense_mlp() {
    const double f = m.intermediate_size / tp;
    norm();
    sp_pair();
    save(0, tsp * h * kAct);
    gemm("fc1", t, ffn_mats() * f, h, kRecMlp);
    elementwise(kRecMlp, kAct * t * (ffn_mats() + 1) * f);
    save(kRecMlp, t * ffn_mats() * f * kAct + t * f * in_b);
    gemm("fc2", t, h, f, kRecMlp);
    residual();
    ++w.blocks;
  }

  void moe() {
    const auto& e = m.moe;
    const double d = e.latent_size > 0 ? e.latent_size : h;
    const double ep = s.par.ep, etp = s.par.etp;
    const double local = e.experts / ep;
    // Each rank routes its sequence-parallel tokens; the ETP group computes on its members' tokens
    // together, each a 1/ETP slice of every expert's width.
    const double rows = tsp * e.top_k * s.imbalance * etp;
    const double fe = e.expert_intermediate_size / etp;
    norm();
    save(0, tsp * h * kAct);
    gemm("router", tsp, e.experts, h, kRecMoe, false);
    elementwise(kRecMoe, 4.0 * tsp * e.experts * 3);  // fp32 scores, top-k, probabilities
    save(kRecMoe, tsp * e.experts * 4);
    if (e.latent_size > 0) gemm("latent_down", tsp, d, h, kRecMoe);
    elementwise(kRecMoe, 2 * kAct * tsp * e.top_k * d);  // permute
    if (s.par.ep > 1) {
      w.ep_bytes = tsp * e.top_k * d * kAct;
      w.ep_all_to_alls += 2;
      w.moe_recompute_all_to_alls = 1;  // recomputing module moe repeats the dispatch
    }
    if (s.par.etp > 1) {
      w.etp_bytes = rows * d * kAct;
      ++w.etp_pairs;
    }
    save_offloadable(kRecMoe, rows * d * in_b);  // dispatched tokens, fc1's input (expert_fc1)
    gemm("expert_fc1", rows / local, ffn_mats() * fe, d, kRecMoe, true, local, true);
    elementwise(kRecMoeAct, kAct * rows * (ffn_mats() + 1) * fe);
    save_offloadable(kRecMoe, rows * ffn_mats() * fe * kAct);  // fc1's output, the activation's input (moe_act)
    save(kRecMoeAct | kRecMoe, rows * fe * in_b);
    gemm("expert_fc2", rows / local, d, fe, kRecMoe, true, local, true);
    elementwise(kRecMoe, 2 * kAct * tsp * e.top_k * d);  // unpermute and weighted sum
    if (e.latent_size > 0) gemm("latent_up", tsp, h, d, kRecMoe);
    if (e.shared_experts > 0) {
      // Shared experts are TP-split like a dense MLP and need the gathered tokens.
      const double fs = e.shared_intermediate_size / tp;
      sp_pair();
      gemm("shared_fc1", t, ffn_mats() * fs, h, kRecSharedExperts);
      elementwise(kRecSharedExperts, kAct * t * (ffn_mats() + 1) * fs);
      save(kRecSharedExperts, t * ffn_mats() * fs * kAct + t * fs * in_b);
      gemm("shared_fc2", t, h, fs, kRecSharedExperts);
    }
    residual();
    ++w.blocks;
    ++w.moe_blocks;
  }
};

}  // namespace

LayerWork layer_work(const ModelSpec& m, const LayerType& type, const LayerShape& s) {
  LayerWork w;
  w.type = type;
  Builder b{m, s, w, static_cast<double>(s.par.tp), static_cast<double>(s.micro_batch) * s.seq_len / s.par.cp, 0,
            static_cast<double>(m.hidden_size), s.saved_input_bytes};
  b.tsp = b.t / b.tp;
  w.tokens = b.t;
  if (type.mamba) b.mamba();
  if (type.attention != LayerType::no_attention) b.attention(type.attention);
  if (type.ffn == LayerType::dense) b.dense_mlp();
  if (type.ffn == LayerType::moe) b.moe();
  if (s.par.cp > 1 && type.attention != LayerType::no_attention) w.cp_steps = s.par.cp - 1;
  else w.cp_bytes = 0;
  w.input_bytes = b.tsp * b.h * kAct;
  if (type.bf16_gemms) {  // the recipe keeps this layer in BF16: its GEMMs run, and are not quantised, in BF16
    w.gemms.all_in_bf16();
    w.quantize_fwd = w.quantize_bwd = 0;
  }
  return w;
}

LayerWork head_work(const ModelSpec& m, const LayerShape& s) {
  LayerWork w;
  Builder b{m, s, w, static_cast<double>(s.par.tp), static_cast<double>(s.micro_batch) * s.seq_len / s.par.cp, 0,
            static_cast<double>(m.hidden_size), s.saved_input_bytes};
  b.tsp = b.t / b.tp;
  w.tokens = b.t;
  const double v = static_cast<double>(m.vocab_size) / b.tp;
  b.norm();
  b.sp_pair();
  b.gemm("lm_head", b.t, v, b.h, 0, false);
  b.elementwise(0, 4.0 * b.t * v * 3);  // fp32 logits: softmax statistics, loss, gradient
  b.save(0, b.t * v * 4);               // the fp32 logits
  ++w.blocks;
  w.input_bytes = b.tsp * b.h * kAct;
  return w;
}

LayerWork mtp_work(const ModelSpec& m, const LayerShape& s) {
  LayerWork w;
  Builder b{m, s, w, static_cast<double>(s.par.tp), static_cast<double>(s.micro_batch) * s.seq_len / s.par.cp, 0,
            static_cast<double>(m.hidden_size), s.saved_input_bytes};
  b.tsp = b.t / b.tp;
  w.tokens = b.t;
  b.norm();
  b.norm();
  b.sp_pair();
  b.gemm("mtp_proj", b.t, b.h / b.tp, 2 * b.h, 0);
  const LayerWork layer = layer_work(m, m.mtp_layer_type(), s);
  for (const auto& g : layer.gemms) w.gemms.push_back(g);
  w.attention_flops += layer.attention_flops;
  w.ssm_flops += layer.ssm_flops;
  layer.elementwise.each([&](unsigned m, double b) { w.elementwise.add(m, b); });
  layer.saved.each([&](unsigned m, double b) { w.saved.add(m, b); });
  layer.offloadable.each([&](unsigned m, double b) { w.offloadable.add(m, b); });
  w.quantize_fwd += layer.quantize_fwd;
  w.quantize_bwd += layer.quantize_bwd;
  w.blocks += layer.blocks;
  w.moe_blocks += layer.moe_blocks;
  w.tp_pairs += layer.tp_pairs;
  w.etp_pairs = layer.etp_pairs, w.etp_bytes = layer.etp_bytes;
  w.ep_all_to_alls = layer.ep_all_to_alls, w.ep_bytes = layer.ep_bytes;
  w.moe_recompute_all_to_alls = layer.moe_recompute_all_to_alls;
  w.cp_steps = layer.cp_steps, w.cp_bytes = layer.cp_bytes;
  w.input_bytes = b.tsp * b.h * kAct;
  return w;
}

}  // namespace racksim
