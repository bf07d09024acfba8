#include "models/planner/training_fit_engine.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/calibration/probe_data.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/suggest.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/statistics.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim::fit_detail {

std::pair<int, int> even_domains(int gpus, int domain_gpus, int tray_gpus) {
  if (gpus <= domain_gpus) return {1, gpus};
  for (int d = (gpus + domain_gpus - 1) / domain_gpus; d <= gpus; ++d)
    if (gpus % d == 0 && (gpus / d) % tray_gpus == 0) return {d, gpus / d};
  return {(gpus + domain_gpus - 1) / domain_gpus, domain_gpus};  // no even split of whole trays: fill in order
}

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------------
const char* const kFieldNames[kFieldCount] = {"gemm_efficiency.bf16", "gemm_efficiency.fp8", "gemm_efficiency.fp4", "grouped_gemm_factor",
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
// The scatter of a job's runs about the step model, in log units, where the fit starts; the fit then sets it
// to its own job-weighted RMS residual (Engine::fit). Each run's residual is divided by it, so a prior of
// sigma s weighs as much as (s / scatter)^-2 jobs; with the runs at unit scatter instead (before session 7)
// every prior weighed ~60 times too much against the runs, and Blackwell stayed near Hopper against its own
// rows (leave-one-system-out: B200 from the Hopper fit +22 % mean error, 14 runs beyond 25 %).
constexpr double kStartRowSigma = 0.15;
// Below this the scatter is not believed (a fit with as many parameters as jobs would reach 0).
constexpr double kMinRowSigma = 0.03;
constexpr double kFp8TieSigma = 0.7;     // fp8 efficiency near bf16's (logit units)
constexpr double kFp4TieSigma = 0.7;     // fp4 near fp8's
constexpr double kGenerationTie = 0.7;   // Blackwell near Hopper, every shared field
// A probe point measures one kernel (a GEMM, attention) alone, where a training run mixes every part of the step: each weighs as
// much as kProbeWeight^2 jobs (assumption), so the GEMM and attention efficiencies follow the probe and the runs'
// other costs go to the parameters that describe them.
constexpr double kProbeWeight = 3;
// The 120 grouped-GEMM points (torch._grouped_mm: 8-32 experts, 512-4096 tokens each, five expert shapes, up
// and down projections) weigh as 12 single points together (assumption: one family, like the attention's 12).
constexpr double kGroupedProbeShare = 0.316228;  // sqrt(12 / 120)

const std::vector<std::string> kGenerations{"hopper", "blackwell"};

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
// One observation of the fit: features and a measured time.
struct Observation {
  int generation = 0;
  double weight = 1;  // 1 / sqrt(runs of its job): a job counts once however many releases and scales repeat it
  Work work;
  double measured_s = 0;
  std::string label;
};

// Calls `record` on each JSON line of a probe file. A line whose keys are missing, mistyped or whose time is not
// a positive number is an InputError naming the file and its line (nlohmann's own error named neither).
template <class OnRecord>
void for_each_probe_record(const fs::path& file, OnRecord record) {
  std::ifstream f(file);
  std::string line;
  int line_no = 0;
  while (std::getline(f, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", file.string(), line_no);
    const nlohmann::json j = parse_json_text(line, where);
    try {
      if (j.contains("time_us") && !(j.at("time_us").get<double>() > 0))
        throw InputError(where, "/time_us", one_line(j.at("time_us").dump()), "a time > 0 us");
      record(j);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(where, "", one_line(e.what()), "a probe record as calibrate/probes/ writes it (numbers where it writes numbers)");
    }
  }
}

ProbeGpu probe_gpu_of(const std::string& device, const std::string& where, const std::string& named_system) {
  // The label's name: the model as nvidia-smi gives it, "NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA A100-SXM4-80GB" ->
  // "A100".
  std::string name = device.rfind("NVIDIA ", 0) == 0 ? device.substr(7) : device;
  name = name.substr(0, std::min(name.size(), name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")));
  if (name.empty()) name = "GPU";
  // The system: the one named (DIR=SYSTEM), else the collective probes' guess (guess_probe_system: the same names,
  // the same refusal of PCIe and NVL cards) as for a machine of several GPUs, so an H200 is the HGX part: a kernel
  // probe depends only on the GPU, and hgx-h200's is the 700 W SXM module the lent machines carry.
  return {named_system.empty() ? calibration::guess_probe_system(device, 8, where, "/device") : named_system, name};
}

namespace {
// The GPU a probe file ran on, from its header line (every probe writes one first, with "device").
ProbeGpu probe_gpu_of_file(const fs::path& file, const std::string& named_system) {
  std::string device;
  bool header = false;
  for_each_probe_record(file, [&](const nlohmann::json& j) {
    if (!header && j.value("record", "") == "header") header = true, device = j.value("device", "");
  });
  return probe_gpu_of(device, file.string() + ":1", named_system);
}
}  // namespace

// Points of calibrate/probes/compute_torch.py:
//  * FP8 GEMMs (torch._scaled_mm, per-tensor scales, fp32 accumulation without fast accumulation): the
//    squares of 4096 and 8192 (2048 is launch-bound: 0.21 of the peak there);
//  * attention forward + backward through cuDNN's fused kernel (the kernel Transformer Engine runs on
//    Hopper), causal, bf16, head_dim 128 (the width of every fitted model but GPT-OSS; other widths go
//    through attention_head_dim_weight, itself from this probe). PyTorch's flash backend is
//    FlashAttention-2, which Megatron's recipes do not run on Hopper: left out.
void read_compute_torch_probes(const fs::path& file, std::vector<ProbePoint>& out, const std::string& named_system) {
  const std::string run = file.parent_path().filename().string();
  const ProbeGpu gpu = probe_gpu_of_file(file, named_system);
  auto point = [&](std::string label) {
    ProbePoint p;
    p.label = gpu.name + " " + label + " (" + run + ")";
    p.system = gpu.system;
    return p;
  };
  for_each_probe_record(file, [&](const nlohmann::json& j) {
    if (j.value("record", "") == "attention" && j.value("backend", "") == "cudnn" && j.value("mode", "") == "fwd_bwd" &&
        j.value("dtype", "") == "bf16" && j.value("causal", false) && j.value("head_dim", 0) == 128) {
      ProbePoint p = point(fmt::format("attention fwd+bwd b{} s{} h{}/{} d128", j.at("batch").get<int>(), j.at("seq").get<int>(),
                                       j.at("heads").get<int>(), j.at("kv_heads").get<int>()));
      p.attention_flops = j.at("flop").get<double>();
      p.measured_s = j.at("time_us").get<double>() * 1e-6;
      out.push_back(p);
      return;
    }
    if (j.value("record", "") == "elementwise" && j.value("tokens", 0) >= 8192) {
      ProbePoint p = point(fmt::format("elementwise {} {}x{}", j.at("op").get<std::string>(), j.at("tokens").get<int>(), j.at("hidden").get<int>()));
      p.hbm_bytes = j.at("bytes").get<double>();
      p.measured_s = j.at("time_us").get<double>() * 1e-6;
      out.push_back(p);
      return;
    }
    if (j.value("record", "") == "grouped_gemm" && j.value("impl", "") == "torch._grouped_mm" && j.value("dtype", "") == "bf16") {
      const double g = j.at("experts").get<double>(), tokens = j.at("tokens_per_expert").get<double>();
      ProbePoint p = point(fmt::format("grouped GEMM {}x[{}x{}x{}]", static_cast<int>(g), static_cast<int>(tokens), j.at("n").get<int>(),
                                       j.at("k").get<int>()));
      p.shape = GemmShape{tokens, j.at("n").get<double>(), j.at("k").get<double>(), g, true};
      p.measured_s = j.at("time_us").get<double>() * 1e-6;
      p.weight = kGroupedProbeShare;
      out.push_back(p);
      return;
    }
    if (j.value("record", "") != "gemm" || j.value("dtype", "") != "fp8_e4m3" || j.value("shape", "") != "square" ||
        j.value("fast_accum", true))
      return;
    const double n = j.at("m").get<double>();
    if (n < 4096 || n > 8192) return;
    ProbePoint p = point(fmt::format("fp8 GEMM {0}x{0}x{0}", static_cast<int>(n)));
    p.shape = GemmShape{n, j.at("n").get<double>(), j.at("k").get<double>(), 1, false};
    p.measured_s = j.at("time_us").get<double>() * 1e-6;
    p.dtype = "fp8";
    out.push_back(p);
  });
}

std::vector<ProbePoint> read_probes(const std::vector<std::string>& dirs) {
  std::vector<ProbePoint> out;
  std::vector<fs::path> seen;  // a directory named twice would count its points twice
  for (const auto& spec : dirs) {
    // DIR or DIR=SYSTEM, as racksim validate --probes reads them (load_probe_directory)
    const std::size_t eq = spec.rfind('=');
    const std::string dir = eq == std::string::npos ? spec : spec.substr(0, eq);
    const std::string named_system = eq == std::string::npos ? "" : spec.substr(eq + 1);
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(fs::path(dir), ec);
    if (!ec && std::find(seen.begin(), seen.end(), canonical) != seen.end())
      throw InputError(dir, "", "(named twice)", "each probe directory once (its points would weigh twice in the fit)");
    seen.push_back(canonical);
    const fs::path fp8 = fs::path(dir) / "compute_torch.jsonl";
    if (fs::exists(fp8)) read_compute_torch_probes(fp8, out, named_system);
    const fs::path file = fs::path(dir) / "gemm_bf16.jsonl";
    std::ifstream f(file);
    if (!f && fs::exists(fp8)) continue;
    if (!f) throw InputError(file.string(), "", "(missing)", "a GEMM probe file (calibrate/probes/gemm_bf16.cu or compute_torch.py output)");
    const ProbeGpu gpu = probe_gpu_of_file(file, named_system);
    for_each_probe_record(file, [&](const nlohmann::json& j) {
      if (j.value("record", "") != "gemm") return;
      const double n = j.at("m").get<double>();
      // 2048 to 8192: smaller squares are launch-bound, 16384 ran power-limited (the probe's SUMMARY.md)
      if (n < 2048 || n > 8192) return;
      ProbePoint p;
      p.label = fmt::format("{0} bf16 GEMM {1}x{1}x{1} ({2})", gpu.name, static_cast<int>(n), fs::path(dir).filename().string());
      p.system = gpu.system;
      p.shape = GemmShape{n, j.at("n").get<double>(), j.at("k").get<double>(), 1, false};
      p.measured_s = j.at("time_us").get<double>() * 1e-6;
      out.push_back(p);
    });
  }
  return out;
}

ProbeTerms probe_terms(const ComputeModel& cm, const ProbePoint& p) {
  ProbeTerms t;
  Work w;
  if (p.attention_flops > 0) {
    cm.add_attention(w, p.attention_flops);
    t.feature = kAttention, t.compute_x = w.x[kAttention];
  } else if (p.hbm_bytes > 0) {
    cm.add_hbm(w, p.hbm_bytes);
    t.feature = kHbm, t.compute_x = w.x[kHbm];
  } else {
    const ComputeModel::GemmTerms g = cm.gemm_terms(p.shape, p.dtype);
    t.feature = g.feature, t.compute_x = g.compute_x, t.memory_x = g.memory_x, t.launches = 1;
  }
  return t;
}

double probe_time_s(const Coefficients& c, const ProbeTerms& t) {
  return std::max(c[static_cast<std::size_t>(t.feature)] * t.compute_x, c[kHbm] * t.memory_x) + c[kGemmLaunches] * t.launches;
}

std::vector<std::string> default_probe_dirs() {
  const fs::path data = fs::path(RACKSIM_TOPOLOGY_DIR).parent_path() / "calibrate" / "data";
  return {(data / "h200-pcie-1gpu-2026-11-29").string(), (data / "h200-nvswitch-2gpu-2026-11-29").string(),
          (data / "h200-sxm-1gpu-2026-12-02").string(), (data / "h100-sxm-1gpu-2026-12-07").string()};
}

struct FitProblem {
  const ParamIndex& ix;
  double row_sigma = kStartRowSigma;
  std::vector<Observation> obs;
  const std::vector<ProbePoint>* probes = nullptr;  // with their features (Engine::probe_features)
  const std::vector<ProbeTerms>* probe_features = nullptr;
};

double log_error(const Coefficients& c, const Observation& o) {
  double t = 0;
  for (int k = 0; k < kFeatureCount; ++k) t += c[static_cast<std::size_t>(k)] * o.work.x[static_cast<std::size_t>(k)];
  return std::log(std::max(t, 1e-12) / o.measured_s);
}

// The job-weighted RMS of the runs' log errors at phi: the scatter the next round divides by.
double row_scatter(const FitProblem& pb, const Eigen::VectorXd& phi) {
  std::vector<Coefficients> coeff;
  for (int g = 0; g < 2; ++g) coeff.push_back(coefficients_of(params_of(pb.ix, phi, g)));
  double num = 0, den = 0;
  for (const auto& o : pb.obs) {
    const double e = log_error(coeff[static_cast<std::size_t>(o.generation)], o);
    num += o.weight * o.weight * e * e;
    den += o.weight * o.weight;
  }
  return den > 0 ? std::max(kMinRowSigma, std::sqrt(num / den)) : kStartRowSigma;
}

Eigen::VectorXd residuals(const FitProblem& pb, const Eigen::VectorXd& phi) {
  std::vector<Coefficients> coeff;
  for (int g = 0; g < 2; ++g) coeff.push_back(coefficients_of(params_of(pb.ix, phi, g)));
  std::vector<double> r;
  for (const auto& o : pb.obs) r.push_back(o.weight * log_error(coeff[static_cast<std::size_t>(o.generation)], o) / pb.row_sigma);
  if (pb.probes) {  // each on its own GPU, with its generation's parameters
    for (std::size_t i = 0; i < pb.probes->size(); ++i) {
      const ProbePoint& p = (*pb.probes)[i];
      r.push_back(kProbeWeight * p.weight *
                  std::log(probe_time_s(coeff[static_cast<std::size_t>(p.generation)], (*pb.probe_features)[i]) / p.measured_s) / pb.row_sigma);
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
  return fmt::format("step {:.2f} s: compute {:.2f} (overhead {:.2f}, recompute {:.2f}), bubble {:.2f}, exposed comm {:.2f} [exposed/total:{}], SM contention {:.2f}, optimizer {:.2f}",
                     e.step_s, e.compute_s, e.overhead_s, e.recompute_s, e.bubble_s, e.comm_exposed_s, comm, e.contention_s, e.optimizer_s);
}

Engine::Engine(const TrainingFitOptions& o, const std::vector<PublishedRun>& runs) : pricer(o) {
  probes = read_probes(o.probe_dirs.empty() ? default_probe_dirs() : o.probe_dirs);
  // Each point on its own GPU (peaks, HBM bandwidth, SMs), fitting its own generation's parameters; any parameters
  // price the features: they do not depend on them.
  const ComputeParams any = params_of(ix, start_vector(ix), 0);
  for (auto& p : probes) {
    const Pricer::Env& e = pricer.tray_env(p.system);
    const auto g = std::find(kGenerations.begin(), kGenerations.end(), e.gpu->generation);
    if (g == kGenerations.end())
      throw InputError(p.label, "", "a GPU of generation '" + e.gpu->generation + "' (" + p.system + ")",
                       "a GPU of a generation the fit has parameters of its own for (" + comma_list(kGenerations) +
                           "): the others borrow theirs, so their kernels would fit another generation's");
    p.generation = static_cast<int>(g - kGenerations.begin());
    probe_features.push_back(probe_terms(ComputeModel(*e.gpu, any, e.base.hbm_Bps, e.sm_count), p));
  }
  for (const auto& r : runs) {
    if (!r.excluded.empty()) continue;
    try {
      (void)pricer.price(r, params_of(ix, start_vector(ix), gen_index(r)));
    } catch (const InputError& e) {
      unpriceable.emplace_back(&r, e.what());
      continue;
    }
    used.push_back(&r);
  }
}

int Engine::gen_index(const PublishedRun& r) {
  const std::string g = pricer.fitted_generation(r);
  for (std::size_t i = 0; i < kGenerations.size(); ++i)
    if (kGenerations[i] == g) return static_cast<int>(i);
  throw InputError("--fit", "", "a run on generation " + g, "hopper or blackwell runs");
}

Eigen::VectorXd Engine::fit(const std::function<bool(const PublishedRun&)>& keep, Eigen::VectorXd phi, int outer, int* iterations,
                            double* row_sigma, int* jobs) {
  // A job: the same model, system, recipe and layout but for DP (scale) and release.
  std::map<std::string, int> runs_of_job;
  auto job_of = [](const PublishedRun& r) {
    const ParallelLayout& l = r.layout;
    return fmt::format("{}|{}|{}|tp{} cp{} pp{} ep{} etp{} vp{} mb{}", r.system, r.model, r.precision, l.tp, l.cp, l.pp, l.ep, l.etp,
                       l.virtual_stages, l.micro_batch);
  };
  for (const PublishedRun* r : used)
    if (keep(*r)) ++runs_of_job[job_of(*r)];
  double sigma = kStartRowSigma;
  int it = 0;
  for (; it < outer; ++it) {
    FitProblem pb{ix, sigma, {}, probes.empty() ? nullptr : &probes, &probe_features};
    for (const PublishedRun* r : used) {
      if (!keep(*r)) continue;
      const int g = gen_index(*r);
      const Pricer::Priced p = pricer.price(*r, params_of(ix, phi, g));
      pb.obs.push_back({g, 1 / std::sqrt(static_cast<double>(runs_of_job[job_of(*r)])), p.estimate.work, r->step_s(), r->label});
    }
    const Eigen::VectorXd next = solve(pb, phi);
    const double change = (next - phi).cwiseAbs().maxCoeff();
    const double next_sigma = row_scatter(pb, next);
    const double sigma_change = std::fabs(next_sigma / sigma - 1);
    phi = next;
    sigma = next_sigma;
    if (change < 1e-4 && sigma_change < 1e-3) {
      ++it;
      break;
    }
  }
  if (iterations) *iterations = it;
  if (row_sigma) *row_sigma = sigma;
  if (jobs) *jobs = static_cast<int>(runs_of_job.size());
  return phi;
}

RowPrediction Engine::predict(const PublishedRun& r, const ComputeParams& p) {
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

Eigen::VectorXd phi_of(const ParamIndex& ix, const std::map<std::string, ComputeParams>& params) {
  Eigen::VectorXd phi(static_cast<long>(ix.slots.size()));
  for (std::size_t i = 0; i < ix.slots.size(); ++i) {
    const auto [g, f] = ix.slots[i];
    const ComputeParams& p = params.at(kGenerations[static_cast<std::size_t>(g)]);
    const double values[kFieldCount] = {p.gemm_efficiency.at("bf16"),
                                        p.gemm_efficiency.count("fp8") ? p.gemm_efficiency.at("fp8") : 0.7,
                                        p.gemm_efficiency.count("fp4") ? p.gemm_efficiency.at("fp4") : 0.7,
                                        p.grouped_gemm_factor, p.attention_efficiency, p.ssm_efficiency, p.hbm_efficiency,
                                        p.gemm_overhead_s * 1e6, p.block_overhead_s * 1e6, p.moe_block_overhead_s * 1e6,
                                        p.pp_transfer_overhead_s * 1e6, p.tp_exposed, p.ep_exposed_overlapped};
    phi[static_cast<long>(i)] = to_phi(f, std::clamp(values[f], 1e-6, is_fraction(f) ? 1 - 1e-6 : 1e9));
  }
  return phi;
}

std::vector<std::string> prior_descriptions() {
  std::vector<std::string> out;
  for (const auto& p : kPriors)
    out.push_back(fmt::format("{} ~ {} (sigma {} in {} units): {}", kFieldNames[p.field], p.value, p.sigma,
                              is_fraction(p.field) ? "logit" : "log", p.why));
  out.push_back(fmt::format("gemm_efficiency.fp8 ~ gemm_efficiency.bf16 of the same generation (sigma {} logit)", kFp8TieSigma));
  out.push_back(fmt::format("gemm_efficiency.fp4 ~ gemm_efficiency.fp8 (sigma {} logit)", kFp4TieSigma));
  out.push_back(fmt::format("every Blackwell parameter ~ the Hopper one (sigma {} in its units): what the Blackwell rows do not constrain stays at Hopper's", kGenerationTie));
  out.push_back(fmt::format("each kernel probe point (GEMM, attention, elementwise; each run's 120 grouped GEMMs together as 12 points) weighs as much as {:.0f} jobs of training runs (assumption: it measures one kernel alone)", kProbeWeight * kProbeWeight));
  out.push_back("runs: each job (model, system, recipe and layout but for DP) counts once, its runs (releases, scales) weighted 1 / "
                "runs of the job; residuals in units of the fit's own job-weighted RMS log error (estimated each round, so the priors "
                "weigh against the scatter the runs really show)");
  return out;
}

}  // namespace racksim::fit_detail
