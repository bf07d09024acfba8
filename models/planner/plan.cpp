#include "models/planner/plan.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <list>
#include <optional>
#include <system_error>
#include <thread>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

#include "models/planner/comm_cost.hpp"
#include "models/planner/explain.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/training_heldout.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/model_catalog.hpp"
#include "models/workload/model_costs.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/calib/heldout_errors.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

void check_job(const TrainingJob& j) {
  if (j.global_batch < 1) throw InputError("--global-batch", "", std::to_string(j.global_batch), "an integer >= 1 (sequences per step)");
  if (j.seq_len < 1) throw InputError("--seq-len", "", std::to_string(j.seq_len), "an integer >= 1 (tokens per sequence)");
  if (!(j.moe_imbalance >= 1 && j.moe_imbalance <= 16))
    throw InputError("--moe-imbalance", "", fmt::format("{}", j.moe_imbalance), "a number in [1, 16] (busiest EP rank / mean)");
  if (j.grad_bytes != 2 && j.grad_bytes != 4) throw InputError("--grad-dtype", "", fmt::format("{} bytes", j.grad_bytes), "bf16 (2) or fp32 (4)");
  if (!(j.memory_reserve >= 0 && j.memory_reserve < 0.9))
    throw InputError("--memory-reserve", "", fmt::format("{}", j.memory_reserve), "a fraction in [0, 0.9)");
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The NVLink domains `gpus` GPUs take (the fewest that hold them, domains of `gpus_per_domain`), refused where
// they do not split evenly over them, naming the nearest counts on as many domains that do: every domain the
// same share, as jobs run.
int check_splits_evenly(int gpus, int gpus_per_domain) {
  const int used = ceil_div(gpus, gpus_per_domain);
  if (gpus % used != 0)
    throw InputError("--gpus", "", std::to_string(gpus),
                     fmt::format("a count that splits evenly over {} NVLink domain(s) of {} GPUs, such as {} ({} x {}) or {} ({} x {})",
                                 used, gpus_per_domain, used * (gpus / used), used, gpus / used, used * ceil_div(gpus, used), used,
                                 ceil_div(gpus, used)));
  return used;
}

// GPU counts to search: --gpus as `domains_used` x `per_domain`, or every whole-tray count per domain
// from the full domain down to half of it on all domains.
std::vector<MeshShape> shapes_for(const TopologyGraph& graph, const std::optional<int>& gpus, int max_per_domain) {
  const int d = graph.gpus_per_domain(), gpt = graph.gpus_per_tray();
  const int domains = graph.gpu_count() / d;
  if (gpus) {
    if (*gpus < 1 || *gpus > graph.gpu_count())
      throw InputError("--gpus", "", std::to_string(*gpus), fmt::format("1 to {} (the GPUs of {})", graph.gpu_count(), graph.spec().rack.count_label(graph.racks())));
    const int used = check_splits_evenly(*gpus, d);
    if (*gpus / used > max_per_domain) return {};
    return {MeshShape{used, *gpus / used}};
  }
  std::vector<MeshShape> out;
  const int lowest = std::max(1, ceil_div(d, 2));
  for (int g = std::min(d, max_per_domain); g >= lowest; g -= std::min(gpt, d)) {
    if (g % std::min(gpt, d) != 0 && g != d) continue;
    out.push_back(MeshShape{domains, g});
  }
  return out;
}

// Fixed degrees must divide some GPU count searched (TP, CP, PP and DP all given: equal it). EP and ETP
// fold into TP x CP x DP and do not multiply the GPU count.
void check_constraints(const SearchConstraints& c, const std::vector<MeshShape>& shapes) {
  int product = 1, given = 0;
  std::string flags;
  for (const auto& [name, v] : {std::pair{"--tp", c.tp}, {"--cp", c.cp}, {"--pp", c.pp}, {"--dp", c.dp}}) {
    if (!v) continue;
    if (*v < 1) throw InputError(name, "", std::to_string(*v), "an integer >= 1");
    product *= *v;
    ++given;
    flags += (flags.empty() ? "" : " ") + std::string(name) + " " + std::to_string(*v);
  }
  for (const auto& [name, v] : {std::pair{"--ep", c.ep}, {"--etp", c.etp}, {"--vp", c.vp}, {"--edp", c.edp}, {"--tp-x-ep", c.tp_times_ep}})
    if (v && *v < 1) throw InputError(name, "", std::to_string(*v), "an integer >= 1");
  if (c.shard_group && *c.shard_group < 0) throw InputError("--fsdp", "", std::to_string(*c.shard_group), "an integer >= 0");
  // Megatron FSDP runs on Megatron's default rank order only (no use_tp_pp_dp_mapping: Megatron-Bridge
  // skills/perf-techniques/megatron-fsdp/card.yaml @033eb68).
  if (c.pp_outermost && !*c.pp_outermost && ((c.zero_stage && *c.zero_stage >= 3) || c.shard_group))
    throw InputError("--mesh-order", "", "dp-outer with ZeRO-3 / --fsdp",
                     "pp-outer or auto with ZeRO-3 / FSDP (Megatron FSDP does not support --use-tp-pp-dp-mapping)");
  // Megatron's optimizer offload is a part of its distributed optimizer (optimizer_cpu_offload needs
  // use_distributed_optimizer: megatron/core/optimizer/__init__.py), so ZeRO 0 cannot offload its optimizer.
  if (c.zero_stage && *c.zero_stage == 0 && (c.offload == "optimizer" || c.offload == "both"))
    throw InputError("--offload", "", c.offload + " with --zero 0",
                     "none or activations with --zero 0 (Megatron offloads the optimizer of its distributed optimizer: ZeRO 1-3)");
  if (c.tp_times_ep && c.tp && c.ep && *c.tp * *c.ep != *c.tp_times_ep)
    throw InputError("--tp-x-ep", "", std::to_string(*c.tp_times_ep), fmt::format("{} (the --tp {} --ep {} given)", *c.tp * *c.ep, *c.tp, *c.ep));
  if (flags.empty()) return;
  std::string counts;
  for (const auto& s : shapes) {
    const int n = s.gpus();
    if (given == 4 ? n == product : n % product == 0) return;
    counts += (counts.empty() ? "" : ", ") + std::to_string(n);
  }
  throw InputError(flags.substr(0, flags.find(' ')), "", flags + fmt::format(" (product {})", product),
                   fmt::format("degrees whose product {} the GPU count ({})", given == 4 ? "equals" : "divides", counts));
}

std::string reasons_text(const SearchResult& r) {
  std::string out;
  for (const auto& [reason, n] : r.rejected) out += (out.empty() ? "" : "; ") + fmt::format("{} x {}", n, rejection_text(reason));
  for (const auto& e : r.examples)
    if (e.reason == "memory") {
      out += " (e.g. " + e.layout + ": " + e.detail + ")";
      break;
    }
  return out.empty() ? "no layout satisfies the constraints" : out;
}

std::vector<TrayRanks> tray_map(const TopologyGraph& graph, const RankPlacement& p, int racks_shown) {
  std::map<int, int> rank_of_gpu;
  for (int r = 0; r < p.gpus(); ++r) rank_of_gpu[p.locate(r).gpu] = r;
  std::map<int, TrayRanks> trays;
  for (int i = 0; i < graph.gpu_count(); ++i) {
    const Vertex& v = graph.vertices()[graph.gpu_vertex(i)];
    if (v.rack >= racks_shown) continue;
    TrayRanks& t = trays[v.tray];
    t.rack = v.rack;
    t.tray = v.tray;
    t.tray_in_rack = v.tray - v.rack * graph.spec().rack.trays;
    auto it = rank_of_gpu.find(v.index);
    if (it != rank_of_gpu.end()) t.ranks.push_back(it->second);
  }
  std::vector<TrayRanks> out;
  for (auto& [id, t] : trays) {
    std::sort(t.ranks.begin(), t.ranks.end());
    out.push_back(t);
  }
  return out;
}

FailureImpact failure_impact(const Candidate& c, const RankPlacement& p) {
  FailureImpact f;
  const ParallelLayout& l = c.layout;
  f.tray_gpus = p.gpus_per_tray();
  f.job_gpus = l.gpus();
  f.replica_gpus = l.gpus() / l.dp;
  std::map<int, std::vector<int>> dp_on_tray;
  for (int r = 0; r < p.gpus(); ++r) dp_on_tray[p.locate(r).tray].push_back(RankPlacement::coordinates(l, r).dp);
  for (auto& [tray, dps] : dp_on_tray) {
    std::sort(dps.begin(), dps.end());
    const int hit = static_cast<int>(std::unique(dps.begin(), dps.end()) - dps.begin());
    f.replicas_hit = std::max(f.replicas_hit, hit);
  }
  f.blast_radius_gpus = f.replicas_hit * f.replica_gpus;
  f.spare_trays_per_domain = (p.domain_size() - p.gpus_per_domain_used()) / std::max(1, p.gpus_per_tray());
  f.runs_on_spares = f.spare_trays_per_domain >= 1;
  return f;
}

}  // namespace

ComputeTable compute_table_for(const PlanRequest& req) {
  return ComputeTable::load(req.compute_table.empty() ? ComputeTable::shipped_gpu_path() : req.compute_table,
                            req.compute_fit.empty() ? ComputeTable::shipped_fit_path() : req.compute_fit);
}

PrecisionRecipe precision_for(const ComputeTable& table, const std::string& id, const GpuCompute& gpu) {
  const PrecisionRecipe& p = table.precision(id);
  if (std::find(p.generations.begin(), p.generations.end(), gpu.generation) == p.generations.end()) {
    std::string ok;
    for (const auto& other : table.precision_ids()) {
      const auto& g = table.precision(other).generations;
      if (std::find(g.begin(), g.end(), gpu.generation) != g.end()) ok += (ok.empty() ? "" : ", ") + other;
    }
    throw InputError("--precision", "", "'" + id + "' on " + gpu.name + " (" + gpu.generation + ")", "a recipe it runs: " + ok);
  }
  gpu.peak_Fps(p.gemm_dtype);
  return p;
}

PlanResult run_plan(const PlanRequest& req) {
  check_job(req.job);
  if (req.top < 1) throw InputError("--top", "", std::to_string(req.top), "an integer >= 1");
  const SystemCatalog systems = req.topology_dir.empty() ? SystemCatalog::shipped() : SystemCatalog(req.topology_dir);
  const ModelCatalog models = req.model_dir.empty() ? ModelCatalog::shipped() : ModelCatalog(req.model_dir);
  const ComputeTable table = compute_table_for(req);
  const TopologySpec spec = systems.load(req.system);
  // --gpus without --racks: the fewest racks (whole NVLink domains) that hold them, the rule the comparison
  // systems follow below ("--gpus 256" on gb200-nvl72 is 4 racks of 64, on hgx-b200 32 nodes).
  int racks = req.racks.value_or(spec.rack.default_racks);
  if (!req.racks && req.gpus && *req.gpus > 0) {
    const int needed = racks_to_hold(spec, *req.gpus);
    if (needed > spec.rack.max_racks) {
      const int per_rack = spec.rack.trays * static_cast<int>(spec.tray.gpus.size());
      throw InputError("--gpus", "", std::to_string(*req.gpus),
                       fmt::format("at most {} on {} ({} racks of {} GPUs)", spec.rack.max_racks * per_rack, spec.id,
                                   spec.rack.max_racks, per_rack));
    }
    racks = std::max(racks, needed);
    // Before the graph: 100 000 GPUs that do not split evenly were refused only after building 1 389 racks (1.7 s).
    check_splits_evenly(*req.gpus, gpus_per_nvlink_domain(spec));
  }
  const TopologyGraph graph(spec, racks);
  const ModelSpec model = models.load(req.model);
  // A model without routed experts runs EP = ETP = 1 in every layout: a pin of more was dropped without a word.
  if (!model.is_moe()) {
    for (const auto& [name, v] : {std::pair{"--ep", req.constraints.ep}, std::pair{"--etp", req.constraints.etp}})
      if (v && *v > 1) throw InputError(name, "", std::to_string(*v), "1: " + model.id + " has no routed experts");
    if (!req.moe_options_given.empty())
      throw InputError(req.moe_options_given.front(), "", "for " + model.id,
                       "a model with routed experts (" + model.id + " has none: the option would change nothing)");
  }
  // The same for the multi-token-prediction modules: turning off what the model does not have changed nothing.
  if (!req.job.mtp && model.mtp_layers == 0)
    throw InputError("--no-mtp", "", "for " + model.id,
                     "a model with multi-token-prediction modules (" + model.id + " has none: the option would change nothing)");
  // A system to compare with that does not load is the user's typo: refused before the search (it was a note
  // in the comparison table, after the whole plan).
  for (const auto& other : req.compare) {
    try {
      (void)systems.load(other);
    } catch (const InputError& e) {
      throw InputError("--compare", "", "'" + other + "'", "shipped system ids or topology files, comma-separated, or none (" + std::string(e.what()) + ")");
    }
  }
  // A system whose GPU has no compute figures (the DGX Spark, the course's RTX 4090 box) cannot be planned on:
  // said of --system, naming the systems that can, not of the compute table's file.
  if (!table.find(spec.id, spec.tray.gpus.at(0).type)) {
    std::string plannable;
    for (const std::string& id : systems.ids()) {
      const TopologySpec s = systems.load(id);
      if (table.find(s.id, s.tray.gpus.at(0).type)) plannable += (plannable.empty() ? "" : ", ") + id;
    }
    throw InputError("--system", "",
                     fmt::format("'{}' (its GPU type '{}' has no compute figures in {})", spec.id, spec.tray.gpus.at(0).type, table.where()),
                     "a system whose GPU has them: " + plannable + ", or a topology file with one of their GPU types");
  }
  const GpuCompute& compute = table.lookup(spec.id, spec.tray.gpus.at(0).type);
  TrainingJob job = req.job;
  job.precision = precision_for(table, req.precision, compute);
  const SystemContext sys = make_system_context(graph, compute, table.params(compute.generation));
  const Calibration calibration = load_calibration(req.calibration);

  PlanResult out;
  out.system = spec.id;
  out.system_description = spec.description;
  out.racks = racks;
  out.rack_unit = spec.rack.unit;
  out.system_gpus = graph.gpu_count();
  out.gpus_per_domain = graph.gpus_per_domain();
  out.gpus_per_tray = graph.gpus_per_tray();
  out.model_id = model.id;
  out.model_name = model.name;
  out.model_source = model.source;
  const ParamCounts pc = count_params(model);
  out.model_params = pc.total;
  out.model_active_params = pc.active;
  out.model_moe = model.is_moe();
  out.model_hybrid = model.is_hybrid();
  out.job = job;
  out.compute_source = compute.name + ": peaks " + compute.source + "; " + job.precision.name + ": " + job.precision.source +
                       "; fitted efficiencies " + table.fit_where() + " (" + compute.generation + ": " + table.params_origin(compute.generation) + ")";
  out.generation = compute.generation;
  out.params_origin = table.params_origin(compute.generation);
  out.peak_TFLOPs = compute.peak_dense_TFLOPs.at(job.precision.gemm_dtype);
  out.gemm_efficiency = table.params(compute.generation).gemm_efficiency.count(job.precision.gemm_dtype)
                            ? table.params(compute.generation).gemm_efficiency.at(job.precision.gemm_dtype)
                            : table.params(compute.generation).gemm_efficiency.at("bf16");
  out.calibration = calibration.name;
  // The step model's error on published runs it was not fitted to (training_heldout.hpp): it applies to the
  // shipped fit priced with the shipped collective calibration only.
  if (req.compute_fit.empty() && req.compute_table.empty() && is_shipped_calibration(calibration))
    if (const TrainingHeldoutTable* t = shipped_training_heldout())
      out.heldout = plan_heldout_error(*t, table.fitted_generation(compute.generation), model.is_moe(), spec.id);
  out.shapes = shapes_for(graph, req.gpus, graph.gpus_per_domain());
  check_constraints(req.constraints, out.shapes);

  // Another system's comparison: its own search for the GPU count of the best layout (its own graph, collective
  // model and caches; the caches a search activates are per thread). The same system costs nothing (its
  // entry is the best layout, filled in below).
  auto compare_for = [&](const std::string& other, int n) {
    SystemComparison cmp;
    cmp.system = other;
    cmp.gpus = n;
    try {
      const TopologySpec ospec = systems.load(other);
      cmp.system = ospec.id;
      if (ospec.id == spec.id) return cmp;
      cmp.racks = racks_to_hold(ospec, n);
      if (cmp.racks > ospec.rack.max_racks) {
        cmp.note = fmt::format("{} GPUs need {} {}s, more than the {} the topology allows", n, cmp.racks, ospec.rack.unit, ospec.rack.max_racks);
        return cmp;
      }
      const TopologyGraph ograph(ospec, cmp.racks);
      const GpuCompute& ocompute = table.lookup(ospec.id, ospec.tray.gpus.at(0).type);
      TrainingJob ojob = job;
      ojob.precision = precision_for(table, req.precision, ocompute);
      const SystemContext osys = make_system_context(ograph, ocompute, table.params(ocompute.generation));
      const std::vector<MeshShape> oshapes = shapes_for(ograph, n, ograph.gpus_per_domain());
      AnalyticCommCost ocomm(ograph, calibration);
      // Only its best layout is shown (or, when none fits, the reasons: then every layout was fitted).
      SearchResult r = search_layouts(model, ojob, osys, oshapes, req.constraints, ocomm, 1, req.constraints.pinned(), false);
      if (!r.ranked.empty()) cmp.best = r.ranked.front();
      else cmp.note = "no layout fits: " + reasons_text(r);
    } catch (const InputError& e) {
      cmp.note = e.what();
    }
    return cmp;
  };
  // The comparison needs only the best layout's GPU count, which the engine checks below rarely change (they
  // re-rank the first few): the other systems' searches start as soon as the search guesses the count, when its
  // pricing starts (the count of the layout it prices first), on the core the pricing leaves idle, and run beside
  // the engine checks; they are abandoned if the search's best has another count and redone below if the
  // engine checks change it. The engine checks never fork beside them: the CLI (no SimGrid in its process)
  // sends its runs to the engine daemon, and a process that runs the engine itself (the Python module, the
  // benchmarks) sends them to its spawned engine servers while it has other threads (Simulation,
  // engine_process.hpp: a forked child of a threaded process may find a lock held).
  struct EarlyComparison {
    int gpus = 0;
    std::vector<std::size_t> order;  // of req.compare's indices
    std::vector<std::optional<SystemComparison>> done;
    std::vector<std::exception_ptr> failed;
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    // Abandoned, or an error on this thread: no new search starts, the running ones are waited for (everything
    // they use is declared above, so it outlives them).
    ~EarlyComparison() {
      next = done.size();
      for (auto& t : pool) t.join();
    }
  };
  std::list<EarlyComparison> early;  // the last is the one for the count guessed last (a list: its elements stay put)
  auto early_worker = [&](EarlyComparison& run) {
    for (std::size_t k = run.next++; k < run.order.size(); k = run.next++) {
      const std::size_t i = run.order[k];
      try {
        run.done[i] = compare_for(req.compare[i], run.gpus);
      } catch (...) {
        run.failed[i] = std::current_exception();
      }
    }
  };
  auto start_early = [&](int gpus) {
    if (req.compare.empty()) return;
    EarlyComparison& run = early.emplace_back();
    run.gpus = gpus;
    run.done.resize(req.compare.size());
    run.failed.resize(req.compare.size());
    // Longest first (a search costs about its NVLink domains: each adds groups to price), so that the last to
    // finish is a short one; ties in the order asked. An unknown system sorts last (its note is instant).
    std::vector<int> domains(req.compare.size(), 0);
    for (std::size_t i = 0; i < req.compare.size(); ++i) {
      run.order.push_back(i);
      try {
        const TopologySpec o = systems.load(req.compare[i]);
        // TopologyGraph::gpus_per_domain without building the graph
        const int per_domain = (o.nvlink_domain ? o.nvlink_domain->racks : 1) * o.rack.trays * static_cast<int>(o.tray.gpus.size());
        domains[i] = o.id == spec.id ? 0 : ceil_div(gpus, std::max(1, per_domain));
      } catch (const InputError&) {
      }
    }
    std::stable_sort(run.order.begin(), run.order.end(), [&](std::size_t a, std::size_t b) { return domains[a] > domains[b]; });
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t threads = std::min<std::size_t>(req.compare.size(), std::max(1u, cores - 1));
    for (std::size_t t = 0; t < threads; ++t) {
      try {
        run.pool.emplace_back(early_worker, std::ref(run));
      } catch (const std::system_error&) {
        break;  // no thread to be had: this thread runs the searches after the engine checks (early_worker below)
      }
    }
  };

  AnalyticCommCost comm(graph, calibration);
  // Equal-time variants are folded after the search, so ask for more exact layouts than are shown.
  const int keep = 3 * std::max(req.top, 2);
  out.search = search_layouts(model, job, sys, out.shapes, req.constraints, comm, keep, req.constraints.pinned(), true, start_early);
  if (out.search.ranked.empty()) {
    const int n = out.shapes.empty() ? 0 : out.shapes.front().gpus();
    const std::string searched = fmt::format("searched {}{}", n, out.shapes.size() > 1 ? fmt::format(" down to {}", out.shapes.back().gpus()) : "");
    // Degrees the user fixed: when nothing fits, they are what to change, so the message names them, not
    // the GPU count (--tp 3 on Llama 3 8B's 32 heads said "--racks: invalid value 1 rack(s)").
    std::vector<std::string> where, values;
    const SearchConstraints& c = req.constraints;
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::optional<int>>>{
             {"--tp", c.tp}, {"--cp", c.cp}, {"--pp", c.pp}, {"--dp", c.dp}, {"--ep", c.ep}, {"--etp", c.etp}, {"--edp", c.edp},
             {"--vp", c.vp}, {"--micro-batch", c.micro_batch}})
      if (value) {
        where.push_back(name);
        values.push_back(fmt::format("{} {}", name, *value));
      }
    if (where.size() == 1) values = {values.front().substr(where.front().size() + 1)};  // "--tp: invalid value 3"
    if (!where.empty())
      throw InputError(fmt::format("{}", fmt::join(where, "/")), "", fmt::format("{}", fmt::join(values, " ")),
                       fmt::format("{} with which some layout of {} on {} GPUs can run ({}): {}", where.size() == 1 ? "a degree" : "degrees",
                                   model.id, n, searched, reasons_text(out.search)));
    throw InputError(req.gpus ? "--gpus" : "--racks", "",
                     req.gpus ? std::to_string(*req.gpus) + " GPUs" : fmt::format("{} ({} GPUs)", graph.spec().rack.count_label(racks), graph.gpu_count()),
                     fmt::format("a GPU count that some TP x EP x CP x PP x DP layout of {} can use ({}): {}", model.id, searched,
                                 reasons_text(out.search)));
  }
  if (static_cast<int>(out.search.ranked.size()) > req.top) out.search.ranked.resize(req.top);
  // The guess missed: the searches running for it finish (a search cannot be stopped), the rest start for the
  // best's count.
  const int searched_gpus = out.search.ranked.front().layout.gpus();
  if (early.empty() || early.back().gpus != searched_gpus) {
    if (!early.empty()) early.back().next = early.back().order.size();
    start_early(searched_gpus);
  }

  // The discrete-event engine on the first few: cross-domain collectives with every group at once.
  if (req.engine_top < 0) throw InputError("--engine-top", "", std::to_string(req.engine_top), "an integer >= 0");
  const std::size_t checked = std::min<std::size_t>(req.engine_top, out.search.ranked.size());
  std::vector<std::pair<Candidate, EngineCheck>> refined;
  EngineRunMemo engine_runs;  // the checked layouts often share collectives
  for (std::size_t i = 0; i < checked; ++i) {
    Candidate c = out.search.ranked[i];
    const RankPlacement p(graph, c.shape.domains, c.shape.gpus_per_domain);
    EngineCheck check;
    c.estimate = engine_check(model, job, sys, p, c, calibration, &check, &engine_runs);
    refined.push_back({std::move(c), std::move(check)});
  }
  std::stable_sort(refined.begin(), refined.end(), [](const auto& a, const auto& b) {
    return a.first.estimate.step_s < b.first.estimate.step_s;
  });
  for (std::size_t i = 0; i < checked; ++i) {
    out.search.ranked[i] = std::move(refined[i].first);
    out.engine_checks.push_back(std::move(refined[i].second));
  }
  const Candidate& best = out.search.ranked.front();
  const RankPlacement best_placement(graph, best.shape.domains, best.shape.gpus_per_domain);
  const int racks_shown = std::min(racks, std::max(1, ceil_div(best.layout.gpus(), graph.gpu_count() / racks)));
  out.best_map = tray_map(graph, best_placement, racks_shown);
  out.explanation = describe_placement(best, best_placement, graph.gpus_per_domain());
  {
    AnalyticCommCost ecomm(graph, calibration);
    out.explanation += explain_expert_placement(best, best_placement, ecomm, model, job, sys);
  }
  // The runner-up: the next layout that is measurably slower (equal-time variants, such as CP=2 with
  // half the DP and twice the micro-batch, do the same work and are named as ties).
  std::size_t runner = 1, ties = 0;
  while (runner < out.search.ranked.size() && out.search.ranked[runner].estimate.step_s <= best.estimate.step_s * (1 + 1e-3)) {
    ++runner;
    ++ties;
  }
  if (ties > 0) out.explanation += fmt::format(" {} layout(s) ranked next are within 0.1% of it (the same work split differently).", ties);
  if (runner < out.search.ranked.size()) out.explanation += " " + explain_difference(best, out.search.ranked[runner]);
  out.runner_up = runner < out.search.ranked.size() ? static_cast<int>(runner) : -1;

  // Tray failures: what one costs each top layout, and the best layout on a degraded system (NVL68/NVL64, or
  // domains lost). A degraded system that the best no longer fits is searched again: those searches join the
  // other systems' below, on the same threads.
  struct DegradedSearch {
    DegradedPlan plan;
    std::vector<MeshShape> shapes;
    bool search = false;
  };
  std::vector<DegradedSearch> degraded;
  if (req.failures) {
    for (const Candidate& c : out.search.ranked) {
      const RankPlacement p(graph, c.shape.domains, c.shape.gpus_per_domain);
      out.failures.push_back(failure_impact(c, p));
    }
    const int d = graph.gpus_per_domain(), gpt = graph.gpus_per_tray();
    const int domains = graph.gpu_count() / d;
    for (int k = 1; k <= 2; ++k) {
      DegradedSearch job_k;
      DegradedPlan& dp = job_k.plan;
      std::vector<MeshShape>& shapes = job_k.shapes;
      if (d / gpt >= 3) {
        dp.gpus_per_domain = d - k * gpt;
        dp.name = fmt::format("NVL{}", dp.gpus_per_domain);
        dp.best_still_fits = best.shape.gpus_per_domain <= dp.gpus_per_domain;
        shapes = shapes_for(graph, std::nullopt, dp.gpus_per_domain);
        if (req.gpus) {  // keep the user's GPU count if it still fits, else the largest that does
          std::vector<MeshShape> kept;
          for (const auto& s : shapes)
            if (s.gpus() == *req.gpus) kept.push_back(s);
          if (!kept.empty()) shapes = kept;
        }
      } else if (domains - k >= 1) {
        dp.gpus_per_domain = d;
        dp.name = fmt::format("{} domain(s) lost", k);
        dp.best_still_fits = best.shape.domains <= domains - k;
        shapes = {MeshShape{domains - k, d}};
      } else {
        continue;
      }
      if (dp.best_still_fits) {
        dp.best = best;
        dp.note = fmt::format("runs unchanged: the layout uses {} of {} GPUs per domain, a spare tray takes the failed one's place",
                              best.shape.gpus_per_domain, d);
      } else {
        job_k.search = true;
      }
      degraded.push_back(std::move(job_k));
    }
  }
  // One degraded system's search, with a collective model of its own (a search's caches are its thread's).
  auto search_degraded = [&](DegradedSearch& job_k) {
    DegradedPlan& dp = job_k.plan;
    try {
      check_constraints(req.constraints, job_k.shapes);
      AnalyticCommCost dcomm(graph, calibration);
      SearchResult r = search_layouts(model, job, sys, job_k.shapes, req.constraints, dcomm, 1, req.constraints.pinned());
      if (!r.ranked.empty()) {
        dp.best = r.ranked.front();
        dp.slowdown = dp.best->estimate.step_s / best.estimate.step_s - 1;
        dp.note = fmt::format("re-planned on {} GPUs", dp.best->layout.gpus());
      } else {
        dp.note = "no layout fits: " + reasons_text(r);
      }
    } catch (const InputError& e) {
      dp.note = std::string("no layout: ") + e.what();
    }
  };

  // This thread helps with the comparison searches still waiting, then waits for the rest.
  const bool early_started = !early.empty();
  if (early_started) {
    early_worker(early.back());
    for (EarlyComparison& run : early) {
      for (auto& t : run.pool) t.join();
      run.pool.clear();
    }
  }
  const int n = best.layout.gpus();
  const bool early_valid = early_started && n == early.back().gpus;
  auto own_entry = [&](SystemComparison& cmp) {  // the planned system's entry is the best layout
    if (cmp.system == spec.id && cmp.note.empty() && !cmp.best) {
      cmp.racks = racks;
      cmp.best = best;
    }
  };
  auto compare_one = [&](const std::string& other) {
    SystemComparison cmp = compare_for(other, n);
    own_entry(cmp);
    return cmp;
  };
  // Workers take the next task as they finish one: the other systems first (the same system costs nothing,
  // another a whole search), then the degraded systems that need a search. Every task writes its own slot, so
  // the answer does not depend on which thread ran what.
  std::vector<std::size_t> degraded_searches;
  for (std::size_t i = 0; i < degraded.size(); ++i)
    if (degraded[i].search) degraded_searches.push_back(i);
  const std::size_t tasks = req.compare.size() + degraded_searches.size();
  std::vector<std::optional<SystemComparison>> done(req.compare.size());
  std::vector<std::exception_ptr> failed(tasks);
  if (early_valid)
    for (std::size_t i = 0; i < req.compare.size(); ++i) {
      failed[i] = early.back().failed[i];
      if (early.back().done[i]) {
        done[i] = std::move(early.back().done[i]);
        own_entry(*done[i]);
      }
    }
  std::atomic<std::size_t> next{early_valid ? req.compare.size() : 0};
  auto worker = [&] {
    for (std::size_t i = next++; i < tasks; i = next++) {
      try {
        if (i < req.compare.size()) done[i] = compare_one(req.compare[i]);
        else search_degraded(degraded[degraded_searches[i - req.compare.size()]]);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  const std::size_t remaining = tasks - next.load();
  const std::size_t threads = std::min<std::size_t>(remaining, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (std::size_t i = 0; i < tasks; ++i)
    if (failed[i]) std::rethrow_exception(failed[i]);
  for (DegradedSearch& d : degraded) out.degraded.push_back(std::move(d.plan));
  for (std::size_t i = 0; i < req.compare.size(); ++i) out.comparison.push_back(std::move(*done[i]));
  return out;
}

}  // namespace racksim
