#include "models/planner/explain.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <vector>

#include "models/planner/comm_cost.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/step_model.hpp"
#include "sim/core/units.hpp"

namespace racksim {

namespace {

const CommTime* find_comm(const StepEstimate& e, const std::string& kind) {
  for (const auto& c : e.comm)
    if (c.kind == kind) return &c;
  return nullptr;
}

std::string layout_words(const ParallelLayout& l) {
  std::string s = l.degrees() + ", micro-batch " + std::to_string(l.micro_batch) + " x " + std::to_string(l.micro_batches);
  if (l.pp > 1) {
    s += std::string(", ") + to_string(l.schedule);
    if (l.schedule == PipelineSchedule::interleaved) s += " x" + std::to_string(l.virtual_stages);
  }
  s += ", " + l.fsdp_text() + ", recompute " + l.recompute.text();
  return s;
}

struct Component {
  std::string name;
  double best = 0, other = 0;
  std::string why_other;  // what in the other layout causes it
};

std::string pipeline_words(const ParallelLayout& l) {
  if (l.pp == 1) return "no pipeline";
  return fmt::format("PP={} with {} micro-batches, {}{}", l.pp, l.micro_batches, to_string(l.schedule),
                     l.schedule == PipelineSchedule::interleaved ? " x" + std::to_string(l.virtual_stages) : "");
}

std::string comm_words(const StepEstimate& e, const ParallelLayout& l, const std::string& kind) {
  const CommTime* c = find_comm(e, kind);
  if (!c) return "none";
  std::string where = c->domains > 1 ? fmt::format("across {} NVLink domains", c->domains) : "inside one NVLink domain";
  const int degree = kind == "tp" ? l.tp : kind == "ep" ? l.ep : kind == "cp" ? l.cp : kind == "pp" ? l.pp : c->group;
  return fmt::format("{}={} {}, {:.3f} s of {:.3f} s exposed", kind == "dp" ? "DP group" : kind, degree, where, c->exposed_s,
                     c->total_s);
}

// What costs a layout compute time while its hidden communication runs: "FSDP traffic hides 16.9 s
// behind computation that loses 3.600 s to the SMs NCCL holds".
std::string contention_words(const StepEstimate& e) {
  std::string s;
  for (const auto& c : e.comm)
    if (c.contention_s > 0)
      s += fmt::format("{}{} traffic hides {:.3f} s behind computation that loses {:.3f} s to the SMs its kernels hold",
                       s.empty() ? "" : ", ", c.kind == "dp" ? "DP/ZeRO" : c.kind == "ep" ? "EP" : c.kind,
                       c.total_s - c.exposed_s, c.contention_s);
  return s.empty() ? "no overlapped traffic" : s;
}

}  // namespace

std::string describe_placement(const Candidate& best, const RankPlacement& p, int domain_size) {
  const ParallelLayout& l = best.layout;
  std::vector<std::string> inside, across;
  const std::pair<GroupKind, int> dims[] = {{GroupKind::tp, l.tp}, {GroupKind::ep, l.ep}, {GroupKind::etp, l.etp},
                                            {GroupKind::cp, l.cp},  {GroupKind::pp, l.pp}, {GroupKind::dp, l.dp}};
  for (const auto& [kind, size] : dims) {
    if (size == 1) continue;
    const std::string item = fmt::format("{}={}", to_string(kind), size);
    (p.crosses_domain(l, kind) ? across : inside).push_back(item);
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    return s;
  };
  std::string out = fmt::format("DeviceMesh {} on {} GPUs ({} per NVLink domain of {}).", l.mesh(), l.gpus(),
                                p.gpus_per_domain_used(), domain_size);
  if (!inside.empty())
    out += fmt::format(" {} {} inside one NVLink domain: {} collectives run on NVLink.", join(inside),
                       inside.size() == 1 ? "stays" : "stay", inside.size() == 1 ? "its" : "their");
  if (!across.empty())
    out += fmt::format(" {} {} domains over the scale-out NICs.", join(across), across.size() == 1 ? "crosses" : "cross");
  for (const auto& c : best.estimate.comm) {
    if (c.domains < 2) continue;
    out += fmt::format(" The {} traffic ({}) spans {} domains: {:.3f} s per step, {:.3f} s of it exposed.", c.kind, c.what,
                       c.domains, c.total_s, c.exposed_s);
  }
  return out;
}

std::string explain_difference(const Candidate& best, const Candidate& other) {
  const StepEstimate &a = best.estimate, &b = other.estimate;
  const ParallelLayout &la = best.layout, &lb = other.layout;
  std::vector<Component> comps{
      {"compute", a.compute_s - a.recompute_s - a.overhead_s, b.compute_s - b.recompute_s - b.overhead_s, ""},
      {"launch and per-layer overhead", a.overhead_s, b.overhead_s, ""},
      {"recomputation", a.recompute_s, b.recompute_s,
       la.recompute == lb.recompute ? "" : fmt::format("recompute {} vs {}", lb.recompute.text(), la.recompute.text())},
      {"pipeline bubble", a.bubble_s, b.bubble_s, pipeline_words(lb) + " vs " + pipeline_words(la)},
      {"TP collectives", a.comm_exposed("tp"), b.comm_exposed("tp"), comm_words(b, lb, "tp") + " vs " + comm_words(a, la, "tp")},
      {"EP all-to-all", a.comm_exposed("ep"), b.comm_exposed("ep"), comm_words(b, lb, "ep") + " vs " + comm_words(a, la, "ep")},
      {"CP K/V exchange", a.comm_exposed("cp"), b.comm_exposed("cp"), comm_words(b, lb, "cp") + " vs " + comm_words(a, la, "cp")},
      {"pipeline send/recv", a.comm_exposed("pp"), b.comm_exposed("pp"), comm_words(b, lb, "pp") + " vs " + comm_words(a, la, "pp")},
      {"DP/ZeRO traffic", a.comm_exposed("dp"), b.comm_exposed("dp"),
       fmt::format("{}, {} vs {}, {}", lb.fsdp_text(), comm_words(b, lb, "dp"), la.fsdp_text(), comm_words(a, la, "dp"))},
      {"SM contention", a.contention_s, b.contention_s, contention_words(b) + " vs " + contention_words(a)},
      {"optimizer step", a.optimizer_s, b.optimizer_s, ""},
      {"offload traffic", a.offload_s, b.offload_s, ""},
  };
  // compute: say how much work each GPU does
  comps[0].why_other = fmt::format("the runner-up's GPUs each compute {:.3f} s vs {:.3f} s ({} vs {} GPUs, micro-batch {} vs {})",
                                   comps[0].other, comps[0].best, lb.gpus(), la.gpus(), lb.micro_batch, la.micro_batch);
  std::sort(comps.begin(), comps.end(), [](const Component& x, const Component& y) {
    return std::fabs(x.other - x.best) > std::fabs(y.other - y.best);
  });
  const double diff = b.step_s - a.step_s;
  std::string out = fmt::format("The best layout ({}) takes {:.3f} s per step; the runner-up ({}) {:.3f} s, {:.1f}% slower.",
                                layout_words(la), a.step_s, layout_words(lb), b.step_s, 100 * diff / a.step_s);
  if (la.gpus() != lb.gpus())
    out += fmt::format(" Per GPU the best delivers {:.0f} tokens/s, the runner-up {:.0f}.", a.tokens_per_s_per_gpu, b.tokens_per_s_per_gpu);
  std::string more, less;
  int shown = 0;
  for (const auto& c : comps) {
    const double d = c.other - c.best;
    if (std::fabs(d) < 1e-4 * std::max(a.step_s, 1e-9) || shown >= 4) continue;
    ++shown;
    const std::string item = fmt::format("{} {:+.3f} s{}", c.name, d, c.why_other.empty() ? "" : " (" + c.why_other + ")");
    (d > 0 ? more : less) += (d > 0 ? (more.empty() ? "" : "; ") : (less.empty() ? "" : "; ")) + item;
  }
  if (!more.empty()) out += " The runner-up loses time on: " + more + ".";
  if (!less.empty()) out += " It gains some back on: " + less + ".";
  if (shown == 0) out += " Their step-time components are equal; the tie goes to the simpler layout.";
  return out;
}

}  // namespace racksim

namespace racksim {

namespace {

// What the layout would need per GPU without EP: every routed expert of its layers on every GPU.
std::string without_ep_words(const Candidate& best, const ModelSpec& model, const TrainingJob& job, const SystemContext& sys) {
  ParallelLayout one = best.layout;
  one.ep = 1, one.etp = 1;
  const double usable = sys.hbm_bytes * (1 - job.memory_reserve);
  const MemoryBreakdown same = layout_memory(model, job, sys, one);
  one.zero_stage = 3, one.shard_group = 0;
  const MemoryBreakdown fsdp = layout_memory(model, job, sys, one);
  const auto [dense, experts] = chunk_params(model, {StageSlice{0, model.layers, false, false, false}},
                                             ParallelShape{one.tp, one.cp, 1, 1}, false);
  (void)dense;
  return fmt::format(
      " Without EP every GPU would hold all {} routed experts of its stage's layers ({:.1f} B parameters per GPU over the {} "
      "pipeline stages): this layout would need {:.1f} GB per GPU with its {}, {:.1f} GB with FSDP (which holds two whole layers "
      "at a time, each {:.1f} GB of parameters and gradients), of {:.1f} GB usable.",
      model.moe.experts, experts / best.layout.pp / 1e9, best.layout.pp, same.total() / units::kGB, best.layout.fsdp_text(),
      fsdp.total() / units::kGB, fsdp.gathered / 2 / units::kGB, usable / units::kGB);
}

}  // namespace

std::string explain_expert_placement(const Candidate& best, const RankPlacement& p, CommCost& comm, const ModelSpec& model,
                                     const TrainingJob& job, const SystemContext& sys) {
  const ParallelLayout& l = best.layout;
  if (!model.is_moe() || l.ep < 2) return "";
  const CommTime* ep = nullptr;
  for (const auto& c : best.estimate.comm)
    if (c.kind == "ep") ep = &c;
  if (!ep || ep->total_s <= 0) return "";
  const std::vector<int> actual = p.worst_group_ranks(l, GroupKind::ep);
  const int spanned = p.domains_spanned(actual);
  auto price = [&](const std::vector<int>& ranks, MoeDispatcher dispatcher) {
    std::map<int, std::vector<int>> by_domain;
    for (int r : ranks) by_domain[p.locate(r).domain].push_back(r);
    const int g = comm.group(p.gpus_of(ranks));
    int inner = -1, outer = -1;
    if (by_domain.size() > 1) {
      const std::size_t d = by_domain.begin()->second.size();
      bool equal = true;
      std::vector<int> outer_ranks;
      for (const auto& [dom, members] : by_domain) equal = equal && members.size() == d, outer_ranks.push_back(members.front());
      if (equal && d >= 1) {
        inner = comm.group(p.gpus_of(by_domain.begin()->second));
        outer = comm.group(p.gpus_of(outer_ranks));
      }
    }
    const double bytes = ep->bytes * job.moe_imbalance;
    return comm.moe_dispatch_s(dispatcher, g, inner, outer, bytes, bytes / model.moe.top_k, model.moe.top_k);
  };
  const double here = price(actual, job.dispatcher);
  if (here <= 0) return "";
  // Megatron's alltoall dispatcher sends a token once per expert it picks; HybridEP (and DeepEP) once per rank that
  // holds one (comm_cost.cpp): where a token's experts share ranks, say what that dispatcher would save here.
  std::string fused;
  if (job.dispatcher == MoeDispatcher::alltoall && model.moe.top_k > 1) {
    const double hybrid = price(actual, MoeDispatcher::hybridep);
    if (hybrid > 0 && hybrid < 0.95 * here)
      fused = fmt::format(" With --moe-dispatcher hybridep (or deepep), which sends a token once to each rank holding one of "
                          "its {} experts, the same all-to-alls would take {:.3f} s ({:.2f}x).",
                          model.moe.top_k, ep->total_s * hybrid / here, hybrid / here);
  }
  // The other placement: spread over every domain the job uses (strided ranks), or packed into one.
  std::vector<int> other;
  const int n = p.gpus();
  if (spanned == 1 && p.domains_used() > 1) {
    const int stride = n / l.ep;
    for (int k = 0; k < l.ep; ++k) other.push_back(k * stride);
  } else if (spanned > 1 && l.ep <= p.gpus_per_domain_used()) {
    for (int k = 0; k < l.ep; ++k) other.push_back(k);
  } else if (spanned == 1) {
    return fmt::format(" EP={} stays inside the job's one NVLink domain: its all-to-alls cost {:.3f} s per step, {:.3f} s exposed.",
                       l.ep, ep->total_s, ep->exposed_s) + fused;
  } else {
    return fmt::format(" EP={} spans {} NVLink domains: its all-to-alls cost {:.3f} s per step, {:.3f} s exposed.", l.ep, spanned,
                       ep->total_s, ep->exposed_s) + fused;
  }
  const double there = price(other, job.dispatcher);
  const double per_step = ep->total_s / here;  // all-to-alls per step on the bottleneck GPU
  const int other_domains = p.domains_spanned(other);
  const std::string memory = without_ep_words(best, model, job, sys);
  if (spanned == 1)
    return fmt::format(
        " EP={} stays inside one NVLink domain: its {:.0f} dispatch/combine all-to-alls per step ({:.1f} MB per GPU each, {}) "
        "take {:.3f} s there; spread over {} domains the same all-to-alls would take {:.3f} s ({:.1f}x), because the share "
        "leaving the domain rides the scale-out NICs instead of NVLink.",
        l.ep, per_step, ep->bytes / 1e6, to_string(job.dispatcher), ep->total_s, other_domains, per_step * there, there / here) +
           fused + memory;
  return fmt::format(
      " EP={} spans {} NVLink domains: its {:.0f} all-to-alls per step take {:.3f} s ({:.3f} s exposed); packed into one domain "
      "they would take {:.3f} s, but this layout's other degrees need the spread.",
      l.ep, spanned, per_step, ep->total_s, ep->exposed_s, per_step * there) + fused + memory;
}

}  // namespace racksim
