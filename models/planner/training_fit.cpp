#include "models/planner/training_fit.hpp"
#include "sim/core/statistics.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "models/planner/explain.hpp"
#include "models/planner/placement.hpp"
#include "models/planner/plan.hpp"
#include "models/planner/search.hpp"
#include "models/planner/step_model.hpp"
#include "models/workload/model_catalog.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim {

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------------
// The parameters as a vector: per generation, each field of ComputeParams the fit learns.
enum Field { kFGemmBf16, kFGemmFp8, kFGemmFp4, kFGrouped, kFAttention, kFSsm, kFHbm, kFGemmOver, kFBlockOver, kFMoeOver,
             kFPpOver, kFTpExposed, kFEpExposed, kFieldCount };
const char* kFieldNames[kFieldCount] = {"gemm_efficiency.bf16", "gemm_efficiency.fp8", "gemm_efficiency.fp4", "grouped_gemm_factor",
                                        "attention_efficiency", "ssm_efficiency",      "hbm_efficiency",      "gemm_overhead_us",
                                        "block_overhead_us",    "moe_block_overhead_us", "pp_transfer_overhead_us", "tp_exposed",
                                        "ep_exposed_overlapped"};
// logit for fractions in (0, 1), log for the rest
bool is_fraction(int f) { return f != kFGrouped && f != kFGemmOver && f != kFBlockOver && f != kFMoeOver && f != kFPpOver; }
double to_phi(int f, double v) { return is_fraction(f) ? std::log(v / (1 - v)) : std::log(v); }
double from_phi(int f, double p) { return is_fraction(f) ? 1 / (1 + std::exp(-p)) : std::exp(p); }
double scale_of(int f) { return f == kFGemmOver || f == kFBlockOver || f == kFMoeOver || f == kFPpOver ? 1e-6 : 1; }  // us -> s

// Starting points and priors (natural units; sigma in the transformed units). Each is stated in the
// report: what no row constrains stays near these.
struct Prior {
  int field;
  double value;
  double sigma;
  const char* why;
};
const Prior kPriors[] = {
    {kFGemmBf16, 0.787, 1.0, "the H200 cuBLAS probe's large-GEMM fraction (docs/planner.md); the probe points themselves are fitted"},
    {kFAttention, 0.6, 1.0, "between FlashAttention-3's forward (0.75 of the H100 peak, arXiv 2407.08608) and its slower backward"},
    {kFSsm, 0.3, 1.5, "assumption: the SSD scan kernels reach well under the attention kernels' fraction"},
    {kFHbm, 0.7, 1.0, "assumption: unfused elementwise kernels below the probe's 0.91 of HBM bandwidth"},
    {kFGrouped, 0.8, 0.7, "assumption: grouped expert GEMMs a little below dense ones at the same shapes"},
    {kFGemmOver, 12.8, 0.3, "the H200 probe's fixed time per cuBLAS product (12.8 us)"},
    {kFBlockOver, 30, 2.0, "assumption: tens of microseconds of launch gaps per layer block"},
    {kFMoeOver, 300, 2.0, "assumption: hundreds of microseconds of routing and host synchronisation per MoE block"},
    {kFPpOver, 30, 2.0, "assumption: tens of microseconds per pipeline send/recv"},
    {kFTpExposed, 0.5, 2.0, "assumption: half of the sequence-parallel traffic exposed"},
    {kFEpExposed, 0.5, 2.0, "assumption: half of an overlapped all-to-all exposed"},
};
constexpr double kFp8TieSigma = 0.7;     // fp8 efficiency near bf16's (logit units)
constexpr double kFp4TieSigma = 0.7;     // fp4 near fp8's
constexpr double kGenerationTie = 0.7;   // Blackwell near Hopper, every shared field
// A probe point measures the GEMM alone, where a training run mixes every part of the step: each weighs as
// much as kProbeWeight^2 runs (assumption), so the GEMM efficiency follows the probe and the runs'
// other costs go to the parameters that describe them.
constexpr double kProbeWeight = 3;

const std::vector<std::string> kGenerations{"hopper", "blackwell"};

struct ParamIndex {
  std::vector<std::pair<int, int>> slots;  // (generation, field) of each vector entry
  int index(int g, int f) const {
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i].first == g && slots[i].second == f) return static_cast<int>(i);
    return -1;
  }
};

ParamIndex make_index() {
  ParamIndex ix;
  for (int g = 0; g < 2; ++g)
    for (int f = 0; f < kFieldCount; ++f)
      if (!(f == kFGemmFp4 && kGenerations[static_cast<std::size_t>(g)] == "hopper")) ix.slots.push_back({g, f});
  return ix;
}

Eigen::VectorXd start_vector(const ParamIndex& ix) {
  Eigen::VectorXd phi(static_cast<long>(ix.slots.size()));
  for (std::size_t i = 0; i < ix.slots.size(); ++i) {
    const int f = ix.slots[i].second;
    double v = 0.6;
    for (const auto& p : kPriors)
      if (p.field == f) v = p.value;
    if (f == kFGemmFp8 || f == kFGemmFp4) v = 0.7;
    phi[static_cast<long>(i)] = to_phi(f, v);
  }
  return phi;
}

ComputeParams params_of(const ParamIndex& ix, const Eigen::VectorXd& phi, int g) {
  auto get = [&](int f) { return from_phi(f, phi[ix.index(g, f)]) * scale_of(f); };
  ComputeParams p;
  p.gemm_efficiency["bf16"] = get(kFGemmBf16);
  p.gemm_efficiency["fp8"] = get(kFGemmFp8);
  if (ix.index(g, kFGemmFp4) >= 0) p.gemm_efficiency["fp4"] = get(kFGemmFp4);
  p.grouped_gemm_factor = get(kFGrouped);
  p.attention_efficiency = get(kFAttention);
  p.ssm_efficiency = get(kFSsm);
  p.hbm_efficiency = get(kFHbm);
  p.gemm_overhead_s = get(kFGemmOver);
  p.block_overhead_s = get(kFBlockOver);
  p.moe_block_overhead_s = get(kFMoeOver);
  p.pp_transfer_overhead_s = get(kFPpOver);
  p.tp_exposed = get(kFTpExposed);
  p.ep_exposed_overlapped = get(kFEpExposed);
  return p;
}

// ---------------------------------------------------------------------------------------------------
// Pricing published runs on their systems, with caches that live across the fit's iterations.
class Pricer {
 public:
  Pricer(const TrainingFitOptions& o)
      : systems_(o.topology_dir.empty() ? SystemCatalog::shipped() : SystemCatalog(o.topology_dir)),
        models_(ModelCatalog::shipped()),
        table_(ComputeTable::shipped()),
        calibration_(load_calibration(o.calibration)) {}

  struct Env {
    std::unique_ptr<TopologyGraph> graph;
    std::unique_ptr<RankPlacement> placement;
    std::unique_ptr<AnalyticCommCost> comm;
    const GpuCompute* gpu = nullptr;
    SystemContext base;
    int sm_count = 1;
  };
  struct Priced {
    StepEstimate estimate;
    std::string recompute;
  };

  Env& env(const std::string& system, int gpus) {
    const auto key = std::make_pair(system, gpus);
    auto it = envs_.find(key);
    if (it != envs_.end()) return *it->second;
    auto e = std::make_unique<Env>();
    const TopologySpec spec = systems_.load(system);
    const int per_rack = spec.rack.trays * static_cast<int>(spec.tray.gpus.size());
    const int racks = (gpus + per_rack - 1) / per_rack;
    e->graph = std::make_unique<TopologyGraph>(spec, racks);
    const int d = e->graph->gpus_per_domain();
    e->placement = std::make_unique<RankPlacement>(*e->graph, (gpus + d - 1) / d, std::min(d, gpus));
    e->comm = std::make_unique<AnalyticCommCost>(*e->graph, calibration_);
    e->gpu = &table_.lookup(spec.id, spec.tray.gpus.at(0).type);
    e->base = make_system_context(*e->graph, *e->gpu, table_.params(e->gpu->generation));
    e->sm_count = spec.gpu_type(spec.tray.gpus.at(0).type).sm_count;
    return *envs_.emplace(key, std::move(e)).first->second;
  }
  const ModelSpec& model(const std::string& id) {
    auto it = models_cache_.find(id);
    if (it == models_cache_.end()) it = models_cache_.emplace(id, models_.load(id)).first;
    return it->second;
  }
  const ComputeTable& table() const { return table_; }
  const Calibration& calibration() const { return calibration_; }
  std::string generation(const PublishedRun& r) { return env(r.system, r.gpus).gpu->generation; }

  TrainingJob job_of(const PublishedRun& r) {
    Env& e = env(r.system, r.gpus);
    TrainingJob job;
    job.global_batch = r.global_batch;
    job.seq_len = r.seq_len;
    job.precision = precision_for(table_, r.precision, *e.gpu);
    // The Megatron-Bridge pages: "In MoE training benchmarks, we force-balance the token distribution
    // among experts"; the dgxc-benchmarking MoE rows are assumed to do the same.
    job.moe_imbalance = 1;
    job.dispatcher = r.dispatcher;
    job.ep_overlap = r.ep_overlap;
    job.mtp = r.mtp;
    // The performance recipes reduce gradients in bf16 (grad_reduce_in_fp32 = False in Megatron-Bridge's
    // and NeMo's performance configs).
    job.grad_bytes = 2;
    return job;
  }

  SystemContext context(const PublishedRun& r, const ComputeParams& p) {
    Env& e = env(r.system, r.gpus);
    SystemContext sys = e.base;
    sys.compute = std::make_shared<ComputeModel>(*e.gpu, p, sys.hbm_Bps, e.sm_count);
    return sys;
  }

  Priced price(const PublishedRun& r, const ComputeParams& p) {
    Env& e = env(r.system, r.gpus);
    const ModelSpec& m = model(r.model);
    const TrainingJob job = job_of(r);
    const SystemContext sys = context(r, p);
    ParallelLayout l = r.layout;
    std::string how = " (recipe)";
    if (!r.recompute_from_recipe && r.measured) {
      // A measured run whose record names no recompute: none (the performance recipes list their
      // recompute modules when they set any). Whether the memory model agrees it fits is reported.
      l.recompute = RecomputePlan{};
      how = " (not named: none)";
    } else if (!r.recompute_from_recipe) {
      // A recipe without a measurement and without a recompute setting: the least that fits.
      const std::vector<RecomputePlan> ladder = recompute_ladder(m);
      l.recompute = ladder.back();
      for (const auto& rc : ladder) {
        l.recompute = rc;
        if (fits(layout_memory(m, job, sys, l), job, sys)) break;
      }
      how = " (least that fits)";
    }
    auto git = groups_.find(r.index);
    if (git == groups_.end()) git = groups_.emplace(r.index, mesh_groups(*e.placement, l, *e.comm)).first;
    Priced out;
    out.estimate = estimate_step(m, job, sys, *e.placement, l, *e.comm, &git->second);
    out.recompute = l.recompute.text() + how;
    return out;
  }

 private:
  SystemCatalog systems_;
  ModelCatalog models_;
  ComputeTable table_;
  Calibration calibration_;
  std::map<std::pair<std::string, int>, std::unique_ptr<Env>> envs_;
  std::map<std::string, ModelSpec> models_cache_;
  std::map<int, MeshGroups> groups_;
};

// ---------------------------------------------------------------------------------------------------
// One observation of the fit: features and a measured time.
struct Observation {
  int generation = 0;
  Work work;
  double measured_s = 0;
  std::string label;
};

struct ProbePoint {
  std::string label;
  GemmShape shape;
  double measured_s = 0;
};

std::vector<ProbePoint> read_probes(const std::vector<std::string>& dirs) {
  std::vector<ProbePoint> out;
  for (const auto& dir : dirs) {
    const fs::path file = fs::path(dir) / "gemm_bf16.jsonl";
    std::ifstream f(file);
    if (!f) throw InputError(file.string(), "", "(missing)", "a GEMM probe file (calibrate/probes/gemm_bf16.cu output)");
    std::string line;
    while (std::getline(f, line)) {
      if (line.empty()) continue;
      const nlohmann::json j = parse_json_text(line, file.string());
      if (j.value("record", "") != "gemm") continue;
      const double n = j.at("m").get<double>();
      // 2048 to 8192: smaller squares are launch-bound, 16384 ran power-limited (the probe's SUMMARY.md)
      if (n < 2048 || n > 8192) continue;
      out.push_back({fmt::format("H200 bf16 GEMM {0}x{0}x{0} ({1})", static_cast<int>(n), fs::path(dir).filename().string()),
                     GemmShape{n, j.at("n").get<double>(), j.at("k").get<double>(), 1, false}, j.at("time_us").get<double>() * 1e-6});
    }
  }
  return out;
}

std::vector<std::string> default_probe_dirs() {
  const fs::path data = fs::path(RACKSIM_TOPOLOGY_DIR).parent_path() / "calibrate" / "data";
  return {(data / "h200-pcie-1gpu-2026-11-29").string(), (data / "h200-nvswitch-2gpu-2026-11-29").string()};
}

// The H200 as the probe ran it: hgx-h200's GPU (same die as the lent one).
struct ProbeModel {
  const GpuCompute* gpu = nullptr;
  double hbm_Bps = 0;
  int sm_count = 132;
};

struct FitProblem {
  const ParamIndex& ix;
  std::vector<Observation> obs;
  std::vector<ProbePoint> probes;
  ProbeModel probe;
};

Eigen::VectorXd residuals(const FitProblem& pb, const Eigen::VectorXd& phi) {
  std::vector<Coefficients> coeff;
  for (int g = 0; g < 2; ++g) coeff.push_back(coefficients_of(params_of(pb.ix, phi, g)));
  std::vector<double> r;
  for (const auto& o : pb.obs) {
    double t = 0;
    for (int k = 0; k < kFeatureCount; ++k) t += coeff[static_cast<std::size_t>(o.generation)][static_cast<std::size_t>(k)] * o.work.x[static_cast<std::size_t>(k)];
    r.push_back(std::log(std::max(t, 1e-12) / o.measured_s));
  }
  if (pb.probe.gpu) {
    const ComputeModel cm(*pb.probe.gpu, params_of(pb.ix, phi, 0), pb.probe.hbm_Bps, pb.probe.sm_count);
    for (const auto& p : pb.probes) {
      Work w;
      cm.add_gemm(w, p.shape, "bf16", 1);
      r.push_back(kProbeWeight * std::log(cm.time_s(w) / p.measured_s));
    }
  }
  // priors
  for (std::size_t i = 0; i < pb.ix.slots.size(); ++i) {
    const auto [g, f] = pb.ix.slots[i];
    const double x = phi[static_cast<long>(i)];
    if (g == 0) {
      for (const auto& p : kPriors)
        if (p.field == f) r.push_back((x - to_phi(f, p.value)) / p.sigma);
      if (f == kFGemmFp8) r.push_back((x - phi[pb.ix.index(0, kFGemmBf16)]) / kFp8TieSigma);
    } else {
      const int h = pb.ix.index(0, f);
      if (h >= 0) r.push_back((x - phi[h]) / kGenerationTie);
      if (f == kFGemmFp4) r.push_back((x - phi[pb.ix.index(1, kFGemmFp8)]) / kFp4TieSigma);
    }
  }
  return Eigen::Map<Eigen::VectorXd>(r.data(), static_cast<long>(r.size()));
}

// Levenberg-Marquardt on the residuals above, from phi.
Eigen::VectorXd solve(const FitProblem& pb, Eigen::VectorXd phi) {
  double lambda = 1e-3;
  Eigen::VectorXd r = residuals(pb, phi);
  double cost = r.squaredNorm();
  for (int it = 0; it < 200; ++it) {
    const long n = phi.size();
    Eigen::MatrixXd J(r.size(), n);
    for (long j = 0; j < n; ++j) {
      Eigen::VectorXd a = phi, b = phi;
      a[j] += 1e-6, b[j] -= 1e-6;
      J.col(j) = (residuals(pb, a) - residuals(pb, b)) / 2e-6;
    }
    const Eigen::MatrixXd A = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 20; ++tries) {
      Eigen::MatrixXd M = A;
      M.diagonal() += lambda * (A.diagonal().array() + 1e-9).matrix();
      const Eigen::VectorXd step = M.ldlt().solve(-g);
      const Eigen::VectorXd trial = phi + step;
      const Eigen::VectorXd rt = residuals(pb, trial);
      if (rt.squaredNorm() < cost) {
        phi = trial, r = rt;
        const double gain = cost - rt.squaredNorm();
        cost = rt.squaredNorm();
        lambda = std::max(1e-9, lambda / 3);
        improved = true;
        if (gain < 1e-12 * std::max(1.0, cost)) it = 1000;
        break;
      }
      lambda *= 4;
    }
    if (!improved) break;
  }
  return phi;
}

using racksim::median;

GroupError group_error(const std::string& name, const std::vector<const RowPrediction*>& rows) {
  GroupError g;
  g.name = name;
  g.rows = static_cast<int>(rows.size());
  std::vector<double> a;
  double s = 0;
  for (const auto* r : rows) {
    a.push_back(std::fabs(r->error));
    s += r->error;
    g.worst_abs = std::max(g.worst_abs, std::fabs(r->error));
  }
  g.median_abs = median(a);
  g.mean_signed = rows.empty() ? 0 : s / static_cast<double>(rows.size());
  return g;
}

std::string breakdown_words(const StepEstimate& e) {
  std::string comm;
  for (const auto& c : e.comm) comm += fmt::format(" {} {:.2f}/{:.2f}", c.kind, c.exposed_s, c.total_s);
  return fmt::format("step {:.2f} s: compute {:.2f} (overhead {:.2f}, recompute {:.2f}), bubble {:.2f}, exposed comm {:.2f} [exposed/total:{}], optimizer {:.2f}",
                     e.step_s, e.compute_s, e.overhead_s, e.recompute_s, e.bubble_s, e.comm_exposed_s, comm, e.optimizer_s);
}

struct Engine {
  Pricer pricer;
  ParamIndex ix = make_index();
  ProbeModel probe;
  std::vector<ProbePoint> probes;
  std::vector<const PublishedRun*> used;

  Engine(const TrainingFitOptions& o, const std::vector<PublishedRun>& runs) : pricer(o) {
    probes = read_probes(o.probe_dirs.empty() ? default_probe_dirs() : o.probe_dirs);
    Pricer::Env& h200 = pricer.env("hgx-h200", 8);
    probe.gpu = h200.gpu;
    probe.hbm_Bps = h200.base.hbm_Bps;
    probe.sm_count = h200.sm_count;
    for (const auto& r : runs)
      if (r.excluded.empty()) used.push_back(&r);
  }

  int gen_index(const PublishedRun& r) {
    const std::string g = pricer.generation(r);
    for (std::size_t i = 0; i < kGenerations.size(); ++i)
      if (kGenerations[i] == g) return static_cast<int>(i);
    throw InputError("--fit", "", "a run on generation " + g, "hopper or blackwell runs");
  }

  // Alternating fit on the runs `keep` accepts, from phi.
  Eigen::VectorXd fit(const std::function<bool(const PublishedRun&)>& keep, Eigen::VectorXd phi, int outer, int* iterations = nullptr) {
    int it = 0;
    for (; it < outer; ++it) {
      FitProblem pb{ix, {}, probes, probe};
      for (const PublishedRun* r : used) {
        if (!keep(*r)) continue;
        const int g = gen_index(*r);
        const Pricer::Priced p = pricer.price(*r, params_of(ix, phi, g));
        pb.obs.push_back({g, p.estimate.work, r->step_s(), r->label});
      }
      const Eigen::VectorXd next = solve(pb, phi);
      const double change = (next - phi).cwiseAbs().maxCoeff();
      phi = next;
      if (change < 1e-4) {
        ++it;
        break;
      }
    }
    if (iterations) *iterations = it;
    return phi;
  }

  RowPrediction predict(const PublishedRun& r, const ComputeParams& p) {
    RowPrediction out;
    out.run = r;
    out.generation = pricer.generation(r);
    const Pricer::Priced pr = pricer.price(r, p);
    out.predicted_tokens_per_s_per_gpu = pr.estimate.tokens_per_s_per_gpu;
    out.error = out.predicted_tokens_per_s_per_gpu / r.tokens_per_s_per_gpu - 1;
    out.fits_in_memory = pr.estimate.fits;
    out.recompute = pr.recompute;
    out.breakdown = breakdown_words(pr.estimate);
    {
      const Coefficients c = coefficients_of(p);
      std::string f;
      for (int k = 0; k < kFeatureCount; ++k)
        if (pr.estimate.work.x[static_cast<std::size_t>(k)] != 0)
          f += fmt::format(" {}={:.3g}s", feature_name(k), c[static_cast<std::size_t>(k)] * pr.estimate.work.x[static_cast<std::size_t>(k)]);
      out.breakdown += "; time by feature:" + f;
    }
    return out;
  }
};

std::string round_text(double v) { return fmt::format("{:.6g}", v); }

double r6(double v) { return std::stod(round_text(v)); }

std::vector<GroupError> groups_of(const std::vector<RowPrediction>& rows, GroupError* overall) {
  std::vector<GroupError> out;
  std::vector<const RowPrediction*> all;
  std::map<std::string, std::vector<const RowPrediction*>> by_system, by_model, by_precision;
  for (const auto& r : rows) {
    all.push_back(&r);
    by_system[r.run.system_label].push_back(&r);
    by_model[r.run.model_label].push_back(&r);
    by_precision[r.run.precision].push_back(&r);
  }
  if (overall) *overall = group_error("all", all);
  for (const auto& [k, v] : by_system) out.push_back(group_error("system " + k, v));
  for (const auto& [k, v] : by_model) out.push_back(group_error("model " + k, v));
  for (const auto& [k, v] : by_precision) out.push_back(group_error("precision " + k, v));
  return out;
}

}  // namespace

// -------------------------------------------------------------------------------------------------------
TrainingFitResult fit_training(const std::string& rows_file, const TrainingFitOptions& o) {
  TrainingFitResult res;
  res.rows_file = rows_file;
  res.runs = load_published_runs(rows_file);
  Engine eng(o, res.runs);
  if (eng.used.empty()) throw InputError(rows_file, "", "no usable run", "published runs with a throughput racksim can price");
  const Eigen::VectorXd phi = eng.fit([](const PublishedRun&) { return true; }, start_vector(eng.ix), 8, &res.outer_iterations);
  for (int g = 0; g < 2; ++g) {
    ComputeParams p = params_of(eng.ix, phi, g);
    p.source = fmt::format("racksim plan --fit {} (models/planner/training_fit.cpp)", fs::path(rows_file).filename().string());
    res.params[kGenerations[static_cast<std::size_t>(g)]] = p;
  }
  for (const PublishedRun* r : eng.used) res.fitted.push_back(eng.predict(*r, res.params.at(eng.pricer.generation(*r))));
  {
    const ComputeModel cm(*eng.probe.gpu, res.params.at("hopper"), eng.probe.hbm_Bps, eng.probe.sm_count);
    for (const auto& p : eng.probes) {
      Work w;
      cm.add_gemm(w, p.shape, "bf16", 1);
      res.probe_errors.push_back({p.label, cm.time_s(w) / p.measured_s - 1});
    }
  }
  for (const auto& p : kPriors)
    res.priors.push_back(fmt::format("{} ~ {} (sigma {} in {} units): {}", kFieldNames[p.field], p.value, p.sigma,
                                     is_fraction(p.field) ? "logit" : "log", p.why));
  res.priors.push_back(fmt::format("gemm_efficiency.fp8 ~ gemm_efficiency.bf16 of the same generation (sigma {} logit)", kFp8TieSigma));
  res.priors.push_back(fmt::format("gemm_efficiency.fp4 ~ gemm_efficiency.fp8 (sigma {} logit)", kFp4TieSigma));
  res.priors.push_back(fmt::format("every Blackwell parameter ~ the Hopper one (sigma {} in its units): what the Blackwell rows do not constrain stays at Hopper's", kGenerationTie));
  res.priors.push_back(fmt::format("each H200 GEMM probe point weighs as much as {:.0f} training runs (assumption: it measures the GEMM alone)", kProbeWeight * kProbeWeight));
  std::vector<double> a;
  for (const auto& r : res.fitted) a.push_back(std::fabs(r.error)), res.worst_abs = std::max(res.worst_abs, std::fabs(r.error));
  res.median_abs = median(a);
  return res;
}

std::string fit_to_json_text(const TrainingFitResult& fit) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["description"] =
      "Compute parameters of the planner's step model per GPU generation, fitted on published training runs and the H200 GEMM "
      "probe (calibrate/training/README.md). Rebuild: calibrate/training/fit.sh. Do not edit by hand.";
  j["produced_by"] = "racksim plan --fit calibrate/training/published_training_throughput.json --fit-out calibrate/training/compute-fit.json";
  nlohmann::ordered_json gens;
  for (const auto& [g, p] : fit.params) {
    nlohmann::ordered_json e;
    nlohmann::ordered_json ge;
    for (const auto& [d, v] : p.gemm_efficiency) ge[d] = r6(v);
    e["gemm_efficiency"] = ge;
    e["grouped_gemm_factor"] = r6(p.grouped_gemm_factor);
    e["attention_efficiency"] = r6(p.attention_efficiency);
    e["ssm_efficiency"] = r6(p.ssm_efficiency);
    e["hbm_efficiency"] = r6(p.hbm_efficiency);
    e["gemm_overhead_us"] = r6(p.gemm_overhead_s * 1e6);
    e["block_overhead_us"] = r6(p.block_overhead_s * 1e6);
    e["moe_block_overhead_us"] = r6(p.moe_block_overhead_s * 1e6);
    e["pp_transfer_overhead_us"] = r6(p.pp_transfer_overhead_s * 1e6);
    e["tp_exposed"] = r6(p.tp_exposed);
    e["ep_exposed_overlapped"] = r6(p.ep_exposed_overlapped);
    e["source"] = p.source;
    int rows = 0;
    std::vector<double> a;
    double worst = 0;
    for (const auto& r : fit.fitted)
      if (r.generation == g) ++rows, a.push_back(std::fabs(r.error)), worst = std::max(worst, std::fabs(r.error));
    e["fit"] = {{"rows", rows}, {"median_abs_error", r6(median(a))}, {"worst_abs_error", r6(worst)}};
    gens[g] = e;
  }
  j["generations"] = gens;
  j["fallbacks"] = {{"blackwell-ultra", "blackwell"}};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : fit.fitted) rows.push_back(fmt::format("#{} {}", r.run.index, r.run.label));
  j["rows"] = rows;
  return dump_json(j, 2) + "\n";
}

std::string fit_summary_text(const TrainingFitResult& fit) {
  std::string o = fmt::format("fit on {} published runs ({} records in {}), {} GEMM probe points, {} outer iterations\n", fit.fitted.size(),
                              fit.runs.size(), fit.rows_file, fit.probe_errors.size(), fit.outer_iterations);
  o += fmt::format("in-sample |error| of tokens/s/GPU: median {:.1f}%, worst {:.1f}%\n", 100 * fit.median_abs, 100 * fit.worst_abs);
  return o;
}

std::string fit_report_markdown(const TrainingFitResult& fit) {
  std::string o = "# Compute fit of the training step model\n\n";
  o += "Produced by `calibrate/training/fit.sh` (`racksim plan --fit " + fs::path(fit.rows_file).filename().string() +
       "`); do not edit by hand. Parameters: `compute-fit.json`; what they mean: docs/planner.md.\n\n";
  o += fit_summary_text(fit) + "\n";
  o += "## Parameters\n\n| parameter |";
  for (const auto& [g, p] : fit.params) o += " " + g + " |";
  o += "\n|---|";
  for (std::size_t i = 0; i < fit.params.size(); ++i) o += "---|";
  o += "\n";
  auto row = [&](const std::string& name, const std::function<std::string(const ComputeParams&)>& f) {
    o += "| " + name + " |";
    for (const auto& [g, p] : fit.params) o += " " + f(p) + " |";
    o += "\n";
  };
  for (const std::string d : {"bf16", "fp8", "fp4"})
    row("GEMM efficiency " + d, [&](const ComputeParams& p) { return p.gemm_efficiency.count(d) ? fmt::format("{:.3f}", p.gemm_efficiency.at(d)) : "-"; });
  row("grouped GEMM factor", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.grouped_gemm_factor); });
  row("attention efficiency", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.attention_efficiency); });
  row("SSD scan efficiency", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.ssm_efficiency); });
  row("HBM efficiency (elementwise)", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.hbm_efficiency); });
  row("per GEMM launch (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.gemm_overhead_s * 1e6); });
  row("per layer block and pass (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.block_overhead_s * 1e6); });
  row("per MoE block and pass (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.moe_block_overhead_s * 1e6); });
  row("per pipeline transfer (us)", [](const ComputeParams& p) { return fmt::format("{:.1f}", p.pp_transfer_overhead_s * 1e6); });
  row("TP traffic exposed", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.tp_exposed); });
  row("overlapped EP traffic exposed", [](const ComputeParams& p) { return fmt::format("{:.3f}", p.ep_exposed_overlapped); });
  o += "\n## Priors\n\n";
  for (const auto& p : fit.priors) o += "* " + p + "\n";
  o += "\n## GEMM probe points (H200, calibrate/data)\n\n| probe | predicted / measured - 1 |\n|---|---|\n";
  for (const auto& [label, e] : fit.probe_errors) o += fmt::format("| {} | {:+.1f}% |\n", label, 100 * e);
  o += "\n## Runs used (in-sample)\n\n| # | run | layout | recompute | published tok/s/GPU | fitted | error |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : fit.fitted)
    o += fmt::format("| {} | {} | {} mb={} | {} | {:.0f} | {:.0f} | {:+.1f}% |\n", r.run.index, r.run.label, r.run.layout.degrees(),
                     r.run.layout.micro_batch, r.recompute, r.run.tokens_per_s_per_gpu, r.predicted_tokens_per_s_per_gpu, 100 * r.error);
  o += "\n## Records left out\n\n| # | record | why |\n|---|---|---|\n";
  for (const auto& r : fit.runs)
    if (!r.excluded.empty()) o += fmt::format("| {} | {} | {} |\n", r.index, r.label, r.excluded);
  return o;
}

// -------------------------------------------------------------------------------------------------------
TrainingValidation validate_training(const std::string& rows_file, const TrainingFitOptions& o, bool lomo) {
  TrainingValidation v;
  v.rows_file = rows_file;
  v.leave_one_model_out = lomo;
  const std::vector<PublishedRun> runs = load_published_runs(rows_file);
  for (const auto& r : runs)
    if (!r.excluded.empty()) v.excluded.push_back({fmt::format("#{} {}", r.index, r.label), r.excluded});
  Engine eng(o, runs);
  std::map<std::string, ComputeParams> shipped;
  {
    const ComputeTable t = o.compute_fit.empty() ? ComputeTable::shipped() : ComputeTable::load(ComputeTable::shipped_gpu_path(), o.compute_fit);
    for (const auto& g : kGenerations) shipped[g] = t.params(g);
  }
  if (!lomo) {
    for (const PublishedRun* r : eng.used) v.rows.push_back(eng.predict(*r, shipped.at(eng.pricer.generation(*r))));
  } else {
    // Start every left-out fit from the shipped parameters (a fit on every row).
    Eigen::VectorXd start(static_cast<long>(eng.ix.slots.size()));
    for (std::size_t i = 0; i < eng.ix.slots.size(); ++i) {
      const auto [g, f] = eng.ix.slots[i];
      const ComputeParams& p = shipped.at(kGenerations[static_cast<std::size_t>(g)]);
      const double values[kFieldCount] = {p.gemm_efficiency.at("bf16"),
                                          p.gemm_efficiency.count("fp8") ? p.gemm_efficiency.at("fp8") : 0.7,
                                          p.gemm_efficiency.count("fp4") ? p.gemm_efficiency.at("fp4") : 0.7,
                                          p.grouped_gemm_factor, p.attention_efficiency, p.ssm_efficiency, p.hbm_efficiency,
                                          p.gemm_overhead_s * 1e6, p.block_overhead_s * 1e6, p.moe_block_overhead_s * 1e6,
                                          p.pp_transfer_overhead_s * 1e6, p.tp_exposed, p.ep_exposed_overlapped};
      start[static_cast<long>(i)] = to_phi(f, std::clamp(values[f], 1e-6, is_fraction(f) ? 1 - 1e-6 : 1e9));
    }
    std::vector<std::string> models;
    for (const PublishedRun* r : eng.used)
      if (std::find(models.begin(), models.end(), r->model) == models.end()) models.push_back(r->model);
    std::map<int, RowPrediction> by_index;
    for (const auto& m : models) {
      const Eigen::VectorXd phi = eng.fit([&](const PublishedRun& r) { return r.model != m; }, start, 3);
      for (const PublishedRun* r : eng.used)
        if (r->model == m) by_index.emplace(r->index, eng.predict(*r, params_of(eng.ix, phi, eng.gen_index(*r))));
    }
    for (auto& [i, p] : by_index) v.rows.push_back(std::move(p));
  }
  v.groups = groups_of(v.rows, &v.overall);

  if (o.layouts) {
    // The planner's own best layout for each distinct job (its most recent record), against the published one.
    std::vector<std::string> seen;
    for (const PublishedRun* r : eng.used) {
      const std::string job = fmt::format("{} {} {} {} GPUs gbs {} x {}", r->system_label, r->model_label, r->precision, r->gpus,
                                          r->global_batch, r->seq_len);
      if (std::find(seen.begin(), seen.end(), job) != seen.end()) continue;
      seen.push_back(job);
      const ComputeParams& p = shipped.at(eng.pricer.generation(*r));
      Pricer::Env& e = eng.pricer.env(r->system, r->gpus);
      const ModelSpec& m = eng.pricer.model(r->model);
      const TrainingJob tj = eng.pricer.job_of(*r);
      const SystemContext sys = eng.pricer.context(*r, p);
      SearchConstraints c;
      c.micro_batch_options = {1, 2, 4, 8};
      if (std::find(c.micro_batch_options.begin(), c.micro_batch_options.end(), r->layout.micro_batch) == c.micro_batch_options.end())
        c.micro_batch_options.push_back(r->layout.micro_batch);
      c.offload = "none";
      const SearchResult sr = search_layouts(m, tj, sys, {MeshShape{e.placement->domains_used(), e.placement->gpus_per_domain_used()}}, c,
                                             *e.comm, 1);
      LayoutCheck lc;
      lc.job = job;
      const Pricer::Priced pub = eng.pricer.price(*r, p);
      lc.published_layout = r->layout.degrees() + " mb=" + std::to_string(r->layout.micro_batch) + " " + pub.recompute;
      lc.published_tokens_per_s_per_gpu = pub.estimate.tokens_per_s_per_gpu;
      if (!sr.ranked.empty()) {
        const Candidate& best = sr.ranked.front();
        lc.best_layout = best.layout.degrees() + " mb=" + std::to_string(best.layout.micro_batch) + " " + best.layout.fsdp_text() +
                         " recompute " + best.layout.recompute.text();
        lc.best_tokens_per_s_per_gpu = best.estimate.tokens_per_s_per_gpu;
        lc.ratio = best.estimate.tokens_per_s_per_gpu / pub.estimate.tokens_per_s_per_gpu;
        Candidate published{r->layout, MeshShape{e.placement->domains_used(), e.placement->gpus_per_domain_used()}, pub.estimate, {}};
        lc.why = lc.ratio > 1 + 1e-3   ? explain_difference(best, published)
                 : lc.ratio > 1 - 1e-3 ? "the search's best is the published layout or prices the same"
                 : pub.estimate.fits   ? "the published layout is outside the search (its degrees or schedule are not searched)"
                                       : "the memory model says the published layout does not fit, so the search cannot pick it";
      } else {
        lc.why = "the search found no layout that fits";
      }
      v.layouts.push_back(lc);
    }
  }
  return v;
}

std::vector<LayoutPricing> price_every_layout(const std::string& rows_file, const TrainingFitOptions& o) {
  const std::vector<PublishedRun> runs = load_published_runs(rows_file);
  Pricer pricer(o);
  std::vector<LayoutPricing> out;
  for (PublishedRun r : runs) {
    LayoutPricing x;
    x.index = r.index;
    x.label = r.label;
    x.layout = r.layout.degrees() + " mb=" + std::to_string(r.layout.micro_batch);
    x.problem = r.layout_problem;
    if (x.problem.empty() && (r.model.empty() || r.system.empty())) x.problem = r.excluded;
    if (x.problem.empty()) {
      if (r.precision.empty()) r.precision = "bf16";
      x.precision = r.precision;
      const Pricer::Priced p = pricer.price(r, pricer.table().params(pricer.generation(r)));
      x.tokens_per_s_per_gpu = p.estimate.tokens_per_s_per_gpu;
      x.fits_in_memory = p.estimate.fits;
    }
    out.push_back(x);
  }
  return out;
}

std::string layout_pricing_text(const std::vector<LayoutPricing>& priced) {
  std::string o;
  int ok = 0, fit = 0;
  for (const auto& p : priced) {
    if (p.problem.empty()) {
      ++ok;
      fit += p.fits_in_memory ? 1 : 0;
      o += fmt::format("{:>4} {:<70} {:<42} {:<9} {:>9.0f} tok/s/GPU{}\n", p.index, p.label.substr(0, 70), p.layout.substr(0, 42), p.precision,
                       p.tokens_per_s_per_gpu, p.fits_in_memory ? "" : "  (memory model: does not fit)");
    } else {
      o += fmt::format("{:>4} {:<70} not pinnable: {}\n", p.index, p.label.substr(0, 70), p.problem);
    }
  }
  o += fmt::format("{} of {} records pinned and priced ({} fit in HBM by the memory model); {} cannot be pinned\n", ok, priced.size(),
                   fit, priced.size() - static_cast<std::size_t>(ok));
  return o;
}

std::string validation_to_text(const TrainingValidation& v) {
  std::string o = fmt::format("racksim plan --validate {}: {} published runs priced with their layouts pinned, {}\n", v.rows_file,
                              v.rows.size(), v.leave_one_model_out ? "leave-one-model-out (each model predicted by a fit without it)"
                                                                    : "in-sample (the shipped fit)");
  o += fmt::format("{:>4} {:<62} {:<44} {:>9} {:>9} {:>8}\n", "#", "run", "layout", "published", "predicted", "error");
  for (const auto& r : v.rows)
    o += fmt::format("{:>4} {:<62} {:<44} {:>9.0f} {:>9.0f} {:>+7.1f}%{}\n", r.run.index, r.run.label.substr(0, 62),
                     (r.run.layout.degrees() + " mb=" + std::to_string(r.run.layout.micro_batch)).substr(0, 44),
                     r.run.tokens_per_s_per_gpu, r.predicted_tokens_per_s_per_gpu, 100 * r.error, r.fits_in_memory ? "" : "  (memory model: does not fit)");
  o += fmt::format("\n|error| of tokens/s/GPU{}:\n", v.leave_one_model_out ? ", leave-one-model-out" : "");
  o += fmt::format("  {:<58} {:>5} {:>9} {:>9} {:>9}\n", "", "runs", "median", "worst", "bias");
  auto line = [&](const GroupError& g) {
    o += fmt::format("  {:<58} {:>5} {:>8.1f}% {:>8.1f}% {:>+8.1f}%\n", g.name, g.rows, 100 * g.median_abs, 100 * g.worst_abs, 100 * g.mean_signed);
  };
  line(v.overall);
  for (const auto& g : v.groups) line(g);
  if (!v.layouts.empty()) {
    o += "\nPublished layout vs the planner's best for the same job (shipped fit):\n";
    for (const auto& l : v.layouts)
      o += fmt::format("  {}: published {} ({:.0f} tok/s/GPU predicted); planner's best {} ({:.0f}), {:+.1f}%. {}\n", l.job, l.published_layout,
                       l.published_tokens_per_s_per_gpu, l.best_layout, l.best_tokens_per_s_per_gpu, 100 * (l.ratio - 1), l.why);
  }
  o += fmt::format("\n{} records left out:\n", v.excluded.size());
  std::map<std::string, int> reasons;
  for (const auto& [label, why] : v.excluded) ++reasons[why];
  for (const auto& [why, n] : reasons) o += fmt::format("  {:>4} x {}\n", n, why);
  return o;
}

std::string validation_to_json_text(const TrainingValidation& v) {
  nlohmann::ordered_json j;
  j["rows_file"] = v.rows_file;
  j["leave_one_model_out"] = v.leave_one_model_out;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : v.rows)
    rows.push_back({{"index", r.run.index},
                    {"run", r.run.label},
                    {"model", r.run.model},
                    {"system", r.run.system},
                    {"precision", r.run.precision},
                    {"layout", r.run.layout.degrees()},
                    {"micro_batch", r.run.layout.micro_batch},
                    {"recompute", r.recompute},
                    {"published_tokens_per_s_per_gpu", r6(r.run.tokens_per_s_per_gpu)},
                    {"derivation", r.run.derivation},
                    {"assumptions", r.run.assumptions},
                    {"predicted_tokens_per_s_per_gpu", r6(r.predicted_tokens_per_s_per_gpu)},
                    {"error", r6(r.error)},
                    {"fits_in_memory", r.fits_in_memory},
                    {"breakdown", r.breakdown},
                    {"source", r.run.source}});
  j["rows"] = rows;
  auto g = [](const GroupError& x) {
    return nlohmann::ordered_json{{"name", x.name}, {"rows", x.rows}, {"median_abs_error", r6(x.median_abs)},
                                  {"worst_abs_error", r6(x.worst_abs)}, {"mean_error", r6(x.mean_signed)}};
  };
  j["overall"] = g(v.overall);
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& x : v.groups) groups.push_back(g(x));
  j["groups"] = groups;
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const auto& l : v.layouts)
    layouts.push_back({{"job", l.job},
                       {"published_layout", l.published_layout},
                       {"published_tokens_per_s_per_gpu", r6(l.published_tokens_per_s_per_gpu)},
                       {"best_layout", l.best_layout},
                       {"best_tokens_per_s_per_gpu", r6(l.best_tokens_per_s_per_gpu)},
                       {"best_over_published", r6(l.ratio)},
                       {"why", l.why}});
  j["layouts"] = layouts;
  nlohmann::ordered_json ex = nlohmann::ordered_json::array();
  for (const auto& [label, why] : v.excluded) ex.push_back({{"record", label}, {"why", why}});
  j["excluded"] = ex;
  return dump_json(j, 2) + "\n";
}

}  // namespace racksim
