#pragma once
// Internal to the training fit (training_fit.cpp, training_validation.cpp): the fitted parameters as a
// vector, the pricing of published runs on their systems (cached across the fit's iterations), and the
// Levenberg-Marquardt fit with its priors (training_fit_engine.cpp).
#include <Eigen/Dense>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/planner/placement.hpp"
#include "models/planner/plan.hpp"
#include "models/planner/search.hpp"
#include "models/planner/step_model.hpp"
#include "models/planner/training_fit.hpp"
#include "models/workload/model_catalog.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::fit_detail {

// The parameters as a vector: per generation, each field of ComputeParams the fit learns.
enum Field { kFGemmBf16, kFGemmFp8, kFGemmFp4, kFGrouped, kFAttention, kFSsm, kFHbm, kFGemmOver, kFBlockOver, kFMoeOver,
             kFPpOver, kFTpExposed, kFEpExposed, kFieldCount };
extern const char* const kFieldNames[kFieldCount];
bool is_fraction(int f);
double to_phi(int f, double v);
double from_phi(int f, double p);

extern const std::vector<std::string> kGenerations;  // "hopper", "blackwell": the generation index g

struct ParamIndex {
  std::vector<std::pair<int, int>> slots;  // (generation, field) of each vector entry
  int index(int g, int f) const {
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i].first == g && slots[i].second == f) return static_cast<int>(i);
    return -1;
  }
};
ParamIndex make_index();
Eigen::VectorXd start_vector(const ParamIndex& ix);
ComputeParams params_of(const ParamIndex& ix, const Eigen::VectorXd& phi, int g);
// The vector of the given parameters per generation (clamped into each field's domain).
Eigen::VectorXd phi_of(const ParamIndex& ix, const std::map<std::string, ComputeParams>& params);
// Every prior and weight of the fit, in words (the report lists them).
std::vector<std::string> prior_descriptions();

// ---------------------------------------------------------------------------------------------------
// Pricing published runs on their systems, with caches that live across the fit's iterations.
// How a published run's GPUs sit in NVLink domains of `domain_gpus`: the fewest domains that hold them
// with the same number of whole trays in each (256 GPUs on NVL72 racks: 4 racks of 64, 16 of the 18 trays,
// as NVL72 jobs run; on 8-GPU nodes: GPUs / 8 nodes). {domains, GPUs per domain}.
std::pair<int, int> even_domains(int gpus, int domain_gpus, int tray_gpus);

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

  // The environment a kernel probe of `system`'s GPU is priced in: one tray of it.
  Env& tray_env(const std::string& system) {
    return env(system, static_cast<int>(systems_.load(system).tray.gpus.size()));
  }

  Env& env(const std::string& system, int gpus) {
    const auto key = std::make_pair(system, gpus);
    auto it = envs_.find(key);
    if (it != envs_.end()) return *it->second;
    auto e = std::make_unique<Env>();
    const TopologySpec spec = systems_.load(system);
    const int per_rack = spec.rack.trays * static_cast<int>(spec.tray.gpus.size());
    const auto [domains, per_domain] = even_domains(gpus, per_rack, static_cast<int>(spec.tray.gpus.size()));
    e->graph = std::make_unique<TopologyGraph>(spec, domains);
    e->placement = std::make_unique<RankPlacement>(*e->graph, domains, per_domain);
    e->comm = std::make_unique<AnalyticCommCost>(*e->graph, calibration_);
    e->gpu = &table_.lookup(spec.id, spec.tray.gpus.at(0).type);
    e->base = make_system_context(*e->graph, *e->gpu, table_.params(e->gpu->generation));
    e->sm_count = spec.gpu_type(spec.tray.gpus.at(0).type).sm_count;
    return *envs_.emplace(key, std::move(e)).first->second;
  }
  // The model a run trained (its preset, or the preset's proxy with fewer layers: model_of_run).
  const ModelSpec& model(const PublishedRun& r) {
    const std::string key = r.model + "#" + std::to_string(r.proxy_layers);
    auto it = models_cache_.find(key);
    if (it == models_cache_.end()) it = models_cache_.emplace(key, model_of_run(models_.load(r.model), r)).first;
    return it->second;
  }
  const ComputeTable& table() const { return table_; }
  const Calibration& calibration() const { return calibration_; }
  std::string generation(const PublishedRun& r) { return env(r.system, r.gpus).gpu->generation; }
  // The generation whose fitted parameters price the run (Blackwell Ultra: Blackwell's, compute-fit.json's
  // fallbacks).
  std::string fitted_generation(const PublishedRun& r) { return table_.fitted_generation(generation(r)); }

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
    const ModelSpec& m = model(r);
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

struct ProbePoint {
  std::string label;
  // The racksim system whose GPU ran the probe (its peaks, HBM bandwidth and SM count price the point):
  // hgx-h200 for an H200, hgx-h100 for an H100, hgx-b200 for a B200 (probe_gpu_of); the point fits the parameters
  // of that GPU's generation (kGenerations index, set by the Engine; only generations fitted on their own).
  std::string system = "hgx-h200";
  int generation = 0;
  GemmShape shape;
  double measured_s = 0;
  std::string dtype = "bf16";  // the GEMM's input type ("bf16", "fp8")
  // > 0: an attention point instead of a GEMM, forward + backward FLOPs of bf16 attention at head_dim 128
  // (the convention of ComputeModel::add_attention: backward 2.5 x forward)
  double attention_flops = 0;
  double hbm_bytes = 0;  // > 0: an elementwise point instead, the HBM bytes its kernels move (as counted by the probe)
  double weight = 1;  // relative to kProbeWeight: a family of many points (the grouped GEMMs) shares its weight
};
std::vector<ProbePoint> read_probes(const std::vector<std::string>& dirs);
// The system a probe file's GPU (its header's "device", as nvidia-smi names it) is priced on, and the short
// name its points' labels carry: "NVIDIA H100 80GB HBM3" -> {hgx-h100, H100}, "NVIDIA B200" -> {hgx-b200, B200}.
// The system is `named_system` where the directory was given as DIR=SYSTEM, else guess_probe_system's (an
// InputError for a GPU racksim does not describe or a PCIe/NVL card); the Engine refuses one whose generation
// borrows another's parameters (A100, Blackwell Ultra).
struct ProbeGpu {
  std::string system, name;
};
ProbeGpu probe_gpu_of(const std::string& device, const std::string& where, const std::string& named_system = "");
// A probe point as features on the probe's GPU, fixed for the whole fit (they do not depend on the
// parameters): its time at coefficients c is max(c[feature] x compute_x, c[kHbm] x memory_x) +
// c[kGemmLaunches] x launches, what ComputeModel gives for the kernel alone.
struct ProbeTerms {
  int feature = kHbm;
  double compute_x = 0, memory_x = 0, launches = 0;
};
ProbeTerms probe_terms(const ComputeModel& cm, const ProbePoint& p);
double probe_time_s(const Coefficients& c, const ProbeTerms& t);
std::vector<std::string> default_probe_dirs();

// The fit over the usable runs of a file.
struct Engine {
  Pricer pricer;
  ParamIndex ix = make_index();
  std::vector<ProbePoint> probes;
  std::vector<ProbeTerms> probe_features;  // probe_terms of each of `probes`, on its own system's GPU
  std::vector<const PublishedRun*> used;
  // Rows the loader kept that the step model cannot price (a recipe their GPU does not run, a layout their
  // system cannot hold), with the error: left out of `used` rather than ending the whole fit or validation.
  std::vector<std::pair<const PublishedRun*, std::string>> unpriceable;

  Engine(const TrainingFitOptions& o, const std::vector<PublishedRun>& runs);
  int gen_index(const PublishedRun& r);
  // Alternating fit on the runs `keep` accepts, from phi.
  // The runs' scatter (job-weighted RMS log error, the unit of their residuals) is re-estimated each round:
  // `row_sigma` gets its final value, `jobs` the number of distinct jobs fitted.
  Eigen::VectorXd fit(const std::function<bool(const PublishedRun&)>& keep, Eigen::VectorXd phi, int outer, int* iterations = nullptr,
                      double* row_sigma = nullptr, int* jobs = nullptr);
  RowPrediction predict(const PublishedRun& r, const ComputeParams& p);
};

GroupError group_error(const std::string& name, const std::vector<const RowPrediction*>& rows);
std::vector<GroupError> groups_of(const std::vector<RowPrediction>& rows, GroupError* overall);
std::string round_text(double v);
double r6(double v);

}  // namespace racksim::fit_detail
