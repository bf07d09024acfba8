#include "models/calibration/collective_fit.hpp"
#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "models/analytic/analytic_model.hpp"
#include "models/calibration/fitter.hpp"
#include "models/collectives/exec_terms.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::calibration {

namespace {

using racksim::median;

double sig4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 4 - std::ceil(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

// The kappa at which a point's sensitivity to kappa is measured (collective_points).
constexpr double kSensitivityKappa = 0.9;
// The network efficiency at which a point's transfers across NICs are priced alone (network_bound_s).
constexpr double kSensitivityNetworkEfficiency = 0.5;

}  // namespace

Calibration links_only(const Calibration& base) {
  Calibration c = base;
  c.algorithms.clear();
  c.arch_algorithms.clear();
  c.protocols.clear();
  c.arch_protocols.clear();
  return c;
}

std::vector<CollectivePoint> collective_points(const std::vector<Measurement>& data, const Predictor& predictor,
                                               const Calibration& base, std::vector<SkippedRecord>* skipped) {
  const Calibration links = links_only(base);
  std::vector<CollectivePoint> out;
  for (const auto& m : data) {
    if (m.kind != MeasurementKind::collective) continue;
    try {
      const TopologyGraph& g = predictor.graph(m);
      const CollectiveRequest req = collective_request(m);
      const AnalyticEstimate e = analytic_collective(g, req, links);
      // How much of the bandwidth time scales with 1 / kappa: transfers across a NIC do not take kappa
      // (FlowTerms::kappa), so where they bind the time does not move with it. Priced again at kappa 0.9
      // (the fitted values' range) and taken as linear in 1 / kappa between the two.
      std::set<int> domains;
      for (int gpu : m.gpus) domains.insert(g.vertices()[g.gpu_vertex(gpu)].domain);
      // The request as the model resolved it, priced again under the probes below.
      CollectiveRequest resolved = req;
      resolved.algorithm = e.algorithm;
      resolved.protocol = e.protocol;
      double sensitive_s = e.bandwidth_s;
      if (domains.size() > 1) {
        Calibration probe = links;
        AlgorithmCalibration a;
        a.bandwidth_efficiency = kSensitivityKappa;
        probe.algorithms[std::string(to_string(m.op)) + "/" + e.algorithm] = a;
        const AnalyticEstimate e9 = analytic_collective(g, resolved, probe);
        sensitive_s = std::clamp((e9.bandwidth_s - e.bandwidth_s) / (1 / kSensitivityKappa - 1), 0.0, e.bandwidth_s);
      }
      CollectivePoint p;
      p.m = &m;
      p.arch = request_architecture(g, resolved);
      p.key = std::string(to_string(m.op)) + "/" + e.algorithm;
      p.protocol = e.protocol;
      p.bandwidth_s = sensitive_s;
      p.bandwidth_exempt_s = e.bandwidth_s - sensitive_s;
      p.latency_s = std::max(0.0, e.time_s - e.bandwidth_s);
      p.domains = std::max<int>(1, static_cast<int>(domains.size()));
      p.ramp_gpus = ramp_gpus(g, req);
      p.scale_out_units = scale_out_launch_units(p.key, static_cast<int>(m.gpus.size()), p.domains);
      p.domain_gpus = p.domains > 1 ? 0 : static_cast<int>(m.gpus.size());
      // Inside one domain the pipelines' time adds to the bandwidth part; across domains it adds to the NVLink
      // part only, under the NICs in every all-to-all record (B300 x2, GB300 over two racks): taken as none.
      p.p2p_pipeline_bytes = p.domains > 1 ? 0 : p2p_pipeline_bytes(g, resolved);
      p.qp_line_s = e.qp_line_s;
      p.ring_sending_steps = p.domains > 1 ? 0 : ring_sending_steps(p.key, static_cast<int>(m.gpus.size()));
      p.ring_links_Bps = ring_links_Bps(m.bytes, p.ring_sending_steps, static_cast<int>(m.gpus.size()), e.bandwidth_s);
      if (domains.size() > 1 && e.protocol != "Simple") {
        // The NICs' own time: priced again with the protocol's network efficiency at 0.5, where the NICs
        // bind their time doubles (collective_fit.hpp).
        Calibration probe = links;
        probe.protocols[e.protocol].network_efficiency = kSensitivityNetworkEfficiency;
        const double t_half = analytic_collective(g, resolved, probe).bandwidth_s;
        if (t_half > e.bandwidth_s * (1 + 1e-9)) p.network_bound_s = t_half * kSensitivityNetworkEfficiency;
      }
      if (m.nics_assumed && !(e.bandwidth_s < kAssumedNicsMaxBandwidthShare * e.time_s)) continue;
      out.push_back(p);
    } catch (const std::runtime_error& e) {  // InputError or SimulationError: this record cannot be expressed
      if (skipped) skipped->push_back({m.id, m.series, std::string("not expressible: ") + e.what()});
    }
  }
  return out;
}

bool collective_point_fitted(const Measurement& m, const Predictor& predictor, const Calibration& base) {
  if (m.kind != MeasurementKind::collective || !is_training_measurement(m, false)) return false;
  if (!m.nics_assumed) return true;
  return !collective_points({m}, predictor, base).empty();
}

namespace {
// The protocol's network efficiency that applies to a point: across domains only (exec_terms).
double network_efficiency_of(const CollectivePoint& p, const Calibration& c) {
  if (p.domains <= 1) return 1;
  const double eta = c.protocol(p.protocol, p.arch).network_efficiency;
  return eta > 0 ? eta : 1;
}

// The bandwidth part of a point's time under `c`: the NIC-bound part at the NIC's rate and the rest at kappa;
// where the protocol's network efficiency eta < 1, at least the NICs' own time at eta.
double bandwidth_part_s(const CollectivePoint& p, double kappa, double eta) {
  const double t = p.bandwidth_exempt_s + p.bandwidth_s / (kappa > 0 ? kappa : 1);
  return eta < 1 ? std::max(t, p.network_bound_s / eta) : t;
}

// The time a point's p2p pipelines add at `rate_GBps` (exec_terms: bytes per pipeline / rate; 0: none).
double p2p_s(const CollectivePoint& p, double rate_GBps) {
  return rate_GBps > 0 && p.p2p_pipeline_bytes > 0 ? p.p2p_pipeline_bytes / (rate_GBps * 1e9) : 0;
}

// The floor a point's queue pairs put on its bandwidth part at `fraction` of the line rate each (exec_terms;
// 0: none).
double qp_floor_s(const CollectivePoint& p, double fraction) {
  return fraction > 0 && p.qp_line_s > 0 ? p.qp_line_s / fraction : 0;
}

// predict_time_s with the protocol's network efficiency `eta` in place of c's.
double predict_time_at(const CollectivePoint& p, const Calibration& c, double eta) {
  const AlgorithmCalibration& a = c.algorithm(p.key, p.arch);
  double kappa = a.efficiency_at(p.m->bytes, p.ramp_gpus);
  kappa *= ring_copy_rate(p.ring_sending_steps, p.ring_links_Bps, a.ring_copy_GBps);  // exec_terms: the ring's local copy
  return a.launch_us(p.domains > 1, p.scale_out_units, p.domain_gpus) * 1e-6 + p.latency_s +
         std::max(bandwidth_part_s(p, kappa, eta), qp_floor_s(p, a.qp_line_fraction)) + p2p_s(p, a.p2p_pipeline_GBps) +
         p.m->timer_floor_s;
}
}  // namespace

double predict_time_s(const CollectivePoint& p, const Calibration& c) {
  return predict_time_at(p, c, network_efficiency_of(p, c));
}

namespace {
// A fit's errors over its points (|predicted / measured - 1|, and the RMS of the log ratio) under
// `predicted(point)`, and the series and sources the points came from, in order of first appearance.
template <class Predict>
void record_quality(FitQuality& f, const std::vector<const CollectivePoint*>& pts, Predict predicted) {
  std::vector<double> errs;
  double ss = 0;
  std::set<std::string> seen_s, seen_src;
  for (const auto* p : pts) {
    const double pred = predicted(*p);
    errs.push_back(std::fabs(pred / p->m->time_s - 1));
    ss += std::pow(std::log(pred / p->m->time_s), 2);
    if (seen_s.insert(p->m->series).second) f.series.push_back(p->m->series);
    if (seen_src.insert(p->m->source).second) f.sources.push_back(p->m->source);
  }
  f.median_abs_error = median(errs);
  f.worst_abs_error = *std::max_element(errs.begin(), errs.end());
  f.rms_log_residual = std::sqrt(ss / errs.size());
}

// The series a fit used, "; "-separated (the tail of an entry's source), and its summary in the entry.
std::string series_list(const FitQuality& f) {
  std::string out;
  for (std::size_t i = 0; i < f.series.size(); ++i) out += (i ? "; " : "") + f.series[i];
  return out;
}
FitSummary summary_of(const FitQuality& f) {
  FitSummary s;
  s.points = f.points;
  s.median_abs_error = f.median_abs_error;
  s.worst_abs_error = f.worst_abs_error;
  s.rms_log_residual = f.rms_log_residual;
  s.data = f.sources;
  return s;
}
}  // namespace

// One group's fit (below). `held_launch_in_s`: the in-domain L where the group's own data cannot determine
// it (its architecture's pooled value in the second pass, 0 in the first). `held_ramp_bytes_per_gpu` >= 0:
// NVLS's ramp taken from the architecture's NVLS fit rather than searched (NVLS-tree, below).
static GroupFit fit_group(const std::string& arch, const std::string& key, const std::vector<const CollectivePoint*>& pts,
                   double held_launch_in_s, double held_ramp_bytes_per_gpu, double p2p_pipeline_GBps) {
  GroupFit f;
  f.arch = arch;
  f.key = key;
  bool has_p2p = false;
  for (const auto* p : pts) has_p2p = has_p2p || p->p2p_pipeline_bytes > 0;
  f.p2p_pipeline_GBps = has_p2p ? p2p_pipeline_GBps : 0;
  // The pipelines' time at the rate: known, like the model's latency.
  auto fixed_s = [&](const CollectivePoint& p) { return p.latency_s + p.bandwidth_exempt_s + p2p_s(p, f.p2p_pipeline_GBps); };
  f.points = static_cast<int>(pts.size());
  // A parameter is fitted only from data that can determine it: kappa needs a point whose model time is
  // mostly bandwidth, an L a point that is mostly latency, of more than one size (else a group of small
  // messages alone would set kappa from noise in the latency, and predict large messages 20x off).
  // Undetermined: kappa 1 (the physical model), L 0 (the scale-out L: the in-domain one).
  std::set<double> sizes_in, sizes_out;
  bool bandwidth_seen = false, latency_in = false, latency_out = false;
  std::map<std::string, int> series_points;
  for (const auto* p : pts) {
    // Mostly kappa's: the part of the time that scales with 1 / kappa is at least half of it. Mostly latency:
    // the latency is more than half (a point bound by its NICs, bandwidth_exempt_s, is neither).
    const double total = std::max(1e-30, p->bandwidth_s + p->bandwidth_exempt_s + p->latency_s);
    bandwidth_seen = bandwidth_seen || p->bandwidth_s / total >= 0.5;
    (p->domains > 1 ? latency_out : latency_in) = (p->domains > 1 ? latency_out : latency_in) || p->latency_s / total > 0.5;
    (p->domains > 1 ? sizes_out : sizes_in).insert(p->m->bytes);
    ++series_points[p->m->series];
  }
  // A latency point anywhere in the group says the model's fixed part is visible in this algorithm's data
  // (all_to_all's model latency is ~0, so its in-domain sweeps alone never show one); each L then needs
  // more than one size of its own, one of them below 64 MiB (a fixed cost is seen where it matters: a
  // sweep of large messages alone would turn its bandwidth deficit into a launch cost).
  // Inside one domain the L is a few us to a few tens: it shows only at a point whose modelled time is short,
  // below 50 us, where a few us are 5 % of it (a sweep that starts at 32 MiB, ~70-100 us on NVLink, turns its
  // ramp to full bandwidth into a launch: with the 2-GPU H200 sweeps held out, xxrjun's 32 MiB-24 GiB H100
  // all-gathers set Hopper's ring all-gather L to ~20 us once GKE's two-node sweeps put a latency point in the
  // group, 2.4x the 2-GPU runs' small sizes).
  const bool latency_seen = latency_in || latency_out;
  constexpr double kLaunchVisibleModelS = 50e-6;
  bool short_in = false;
  for (const auto* p : pts)
    short_in = short_in || (p->domains <= 1 && p->bandwidth_s + p->bandwidth_exempt_s + p->latency_s < kLaunchVisibleModelS);
  const bool fit_L_in = latency_seen && sizes_in.size() >= 2 && short_in;
  // NVLS inside one domain: the launch's part that grows with the multicast group's GPUs (calibration.hpp),
  // determinable where the group's points below 64 MiB come from two GPU counts or more (OCI's GB300 on 8 and
  // 64 GPUs); else the one in-domain L covers every count.
  std::set<int> gpu_counts_in;
  for (const auto* p : pts)
    if (p->domains <= 1 && p->m->bytes < kLargeMessageBytes) gpu_counts_in.insert(p->domain_gpus);
  const bool nvls_key = key.size() > 5 && key.compare(key.size() - 5, 5, "/nvls") == 0;
  const bool fit_L_gpu = fit_L_in && nvls_key && gpu_counts_in.size() >= 2;
  const bool fit_L_out = latency_seen && sizes_out.size() >= 2 && *sizes_out.begin() < kLargeMessageBytes;
  f.kappa_fixed = !bandwidth_seen;
  f.launch_fixed = !fit_L_in;
  f.scale_out_launch_fitted = fit_L_out;
  // Weighted least squares on relative error, t = L_in [one domain] + L_out [several] + latency + u bandwidth
  // with u = 1 / kappa, in which
  //  * every series weighs as one observation (its points share its system's deviations: a 31-size sweep
  //    is not 31 independent looks at kappa), each point 1 / (points of its series);
  //  * kappa is pulled toward 1, the physical model (racksim's links at NCCL's per-link figures, NCCL's
  //    caps and latencies), with the weight of one series: partial pooling, so a group moves away from the
  //    physics as far as several series agree, and one system's fabric or its ramp to full bandwidth is not
  //    carried to the others. Held out, this halves the error at >= 64 MiB against a free kappa
  //    (docs/calibration.md section 4).
  //  * the extra latency is fitted apart inside one NVLink domain and across domains (network proxies and
  //    RDMA round trips that NCCL's hwLat NET terms miss), so a 2-GPU NVLink point does not pay for a
  //    multi-node tree, nor the reverse.
  constexpr double kKappaPriorSeries = 1.0;
  constexpr double kLatencyPriorSeries = 1.0;
  // The bandwidth part of a point's time with NVLS's ramp of `ramp` bytes per GPU (calibration.hpp).
  auto ramped = [](const CollectivePoint& p, double ramp) {
    if (ramp <= 0) return p.bandwidth_s;
    const double k = ramp * std::max(1.0, p.ramp_gpus), S = p.m->bytes;
    return p.bandwidth_s * (S + 2 * k) / (S + k);
  };
  struct Solution {
    double theta[4] = {0, 0, 1, 0};  // L_in, L_out, u = 1 / kappa, L_in per 8 GPUs of the domain
    double objective = 0;
  };
  // A point's regressors: the in-domain L, the L across domains (per unit), the bandwidth part, and the in-domain
  // L's part per 8 GPUs of the domain.
  auto regressors = [&](const CollectivePoint& p, double ramp, double x[4]) {
    x[0] = p.domains > 1 ? 0.0 : 1.0;
    x[1] = p.domains > 1 ? p.scale_out_units : 0.0;
    x[2] = ramped(p, ramp);
    x[3] = p.domains > 1 ? 0.0 : p.domain_gpus / 8.0;
  };
  auto solve = [&](double ramp) {
  Solution sol;
  double* theta = sol.theta;
  double M[4][4] = {}, v[4] = {};
  for (const auto* p : pts) {
    const double y = p->m->time_s - p->m->timer_floor_s;
    const double w = 1.0 / (y * y * series_points[p->m->series]);
    double x[4];
    regressors(*p, ramp, x);
    const double r = y - fixed_s(*p);
    for (int i = 0; i < 4; ++i) {
      v[i] += w * x[i] * r;
      for (int j = 0; j < 4; ++j) M[i][j] += w * x[i] * x[j];
    }
  }
  M[2][2] += kKappaPriorSeries;
  v[2] += kKappaPriorSeries * 1.0;
  // The extra latency across domains likewise, toward 0 (NCCL's own latency model and the wire's are
  // right), with the information of its average series: one cluster's network stack (a RoCE fabric's or a
  // cloud's proxy path) moves its group's latency only as far as other series agree, and a system held out
  // does not inherit it whole. The in-domain L stays free: a kernel launch and NVLink's flags are the
  // GPU's and NCCL's, the same on every machine of an architecture.
  double latency_prior = 0;
  {
    std::set<std::string> series_out;
    for (const auto* p : pts)
      if (p->domains > 1) series_out.insert(p->m->series);
    if (!series_out.empty()) latency_prior = kLatencyPriorSeries * M[1][1] / static_cast<double>(series_out.size());
    M[1][1] += latency_prior;
  }
  // Parameters held: L's not determinable (0), kappa without a bandwidth point (u = 1); L's that come out
  // negative are held at 0 and the rest solved again (active set).
  bool held[4] = {!fit_L_in, !fit_L_out, f.kappa_fixed, !fit_L_gpu};
  double held_value[4] = {held_launch_in_s, 0.0, 1.0, 0.0};
  for (int iter = 0; iter < 6; ++iter) {
    int idx[4], n = 0;
    for (int i = 0; i < 4; ++i)
      if (!held[i]) idx[n++] = i;
    double A[4][5] = {};
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) A[a][b] = M[idx[a]][idx[b]];
      double rhs = v[idx[a]];
      for (int k = 0; k < 4; ++k)
        if (held[k]) rhs -= M[idx[a]][k] * held_value[k];
      A[a][n] = rhs;
    }
    // Gauss-Jordan with partial pivoting on the n x n system.
    bool ok = true;
    for (int c = 0; c < n && ok; ++c) {
      int piv = c;
      for (int r2 = c + 1; r2 < n; ++r2)
        if (std::fabs(A[r2][c]) > std::fabs(A[piv][c])) piv = r2;
      if (!(std::fabs(A[piv][c]) > 0)) { ok = false; break; }
      for (int k = 0; k <= n; ++k) std::swap(A[c][k], A[piv][k]);
      for (int r2 = 0; r2 < n; ++r2) {
        if (r2 == c) continue;
        const double fct = A[r2][c] / A[c][c];
        for (int k = c; k <= n; ++k) A[r2][k] -= fct * A[c][k];
      }
    }
    for (int i = 0; i < 4; ++i) theta[i] = held[i] ? held_value[i] : theta[i];
    for (int a = 0; a < n && ok; ++a) theta[idx[a]] = A[a][n] / A[a][a];
    bool again = false;
    for (int i : {0, 1, 3})
      if (!held[i] && theta[i] < 0) {
        held[i] = true;
        theta[i] = 0;
        again = true;
      }
    if (!again) break;
  }
  // The weighted squared misfit with the priors, to compare ramps.
  for (const auto* p : pts) {
    const double y = p->m->time_s - p->m->timer_floor_s;
    const double w = 1.0 / (y * y * series_points[p->m->series]);
    double x[4];
    regressors(*p, ramp, x);
    const double e = y - fixed_s(*p) - (x[0] * theta[0] + x[1] * theta[1] + x[2] * theta[2] + x[3] * theta[3]);
    sol.objective += w * e * e;
  }
  sol.objective += kKappaPriorSeries * (theta[2] - 1) * (theta[2] - 1) + latency_prior * theta[1] * theta[1];
  return sol;
  };
  // NVLS's ramp (NVLS and NVLS-tree only: the switch's pipeline; rings and trees reach their bandwidth
  // at once, docs/calibration.md): chosen from a grid by the same misfit, where the group has a sweep
  // through the ramp (a series with 3 sizes from 16 MiB to 4 GiB); otherwise none.
  double ramp = held_ramp_bytes_per_gpu > 0 ? held_ramp_bytes_per_gpu : 0;
  Solution best = solve(ramp);
  if (held_ramp_bytes_per_gpu < 0 && nvls_key) {
    std::map<std::string, int> in_ramp;
    int through = 0;
    for (const auto* p : pts)
      if (p->m->bytes >= 16.0 * (1 << 20) && p->m->bytes <= 4.0 * (1 << 30) && ++in_ramp[p->m->series] == 3) ++through;
    if (through > 0)
      for (double mb : {0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0}) {
        const Solution s2 = solve(mb * 1e6);
        if (s2.objective < best.objective) {
          best = s2;
          ramp = mb * 1e6;
        }
      }
  }
  const double* theta = best.theta;
  f.ramp_bytes_per_gpu = ramp;
  double u = theta[2];
  if (!(u > 0)) u = 1;
  f.bandwidth_efficiency = sig4(std::clamp(1 / u, 0.05, 2.0));
  f.launch_overhead_us = sig4(std::min(theta[0] * 1e6, 1e5));
  f.launch_us_per_8_gpus = fit_L_gpu ? sig4(std::min(theta[3] * 1e6, 1e5)) : 0;
  if (hop_scaled_launch(key)) {
    f.scale_out_hop_overhead_us = fit_L_out ? sig4(std::min(theta[1] * 1e6, 1e5)) : -1;
  } else {
    f.scale_out_launch_us_per_8_gpus = fit_L_out ? sig4(std::min(theta[1] * 1e6, 1e5)) : -1;
  }
  AlgorithmCalibration launch;  // the fitted launch terms, priced by the calibration's own law (launch_us)
  launch.launch_overhead_us = f.launch_overhead_us;
  launch.launch_us_per_8_gpus = f.launch_us_per_8_gpus;
  launch.scale_out_launch_us_per_8_gpus = f.scale_out_launch_us_per_8_gpus;
  launch.scale_out_hop_overhead_us = f.scale_out_hop_overhead_us;
  record_quality(f, pts, [&](const CollectivePoint& p) {
    return launch.launch_us(p.domains > 1, p.scale_out_units, p.domain_gpus) * 1e-6 + fixed_s(p) + ramped(p, ramp) / f.bandwidth_efficiency +
           p.m->timer_floor_s;
  });
  return f;
}

std::vector<GroupFit> fit_collective_groups(const std::vector<const CollectivePoint*>& train, double p2p_pipeline_GBps) {
  std::map<std::pair<std::string, std::string>, std::vector<const CollectivePoint*>> groups;
  for (const CollectivePoint* p : train) groups[{p->arch, p->key}].push_back(p);
  // NVLS-tree's NVLS phases are NVLS inside each domain: the same switch pipeline, so the same ramp per GPU of
  // the domain as the architecture's NVLS all-reduce (none where it has no NVLS fit). Searched on its own data,
  // the grid took 12 MB per GPU from the NVL72 two-rack runs, whose mid sizes also pay the network's fixed
  // costs, and held out it charged an 8-GPU B200 node's 64 MiB 1.8x (docs/calibration.md section 3).
  auto held_ramp = [&](const std::string& arch, const std::string& key, const std::vector<GroupFit>& fitted) {
    if (key != "all_reduce/nvls_tree") return -1.0;
    for (const auto& g : fitted)
      if (g.arch == arch && g.key == "all_reduce/nvls") return g.ramp_bytes_per_gpu;
    return 0.0;
  };
  std::vector<GroupFit> out;
  for (const auto& [id, pts] : groups)
    out.push_back(fit_group(id.first, id.second, pts, 0.0, held_ramp(id.first, id.second, out), p2p_pipeline_GBps));
  // The in-domain L is a kernel launch and NVLink's flags: the GPU's and NCCL's, shared by the algorithms of
  // an architecture (Hopper's six fitted groups: 1.2-3.4 us). A group whose own data cannot determine it
  // (no small message of its own) takes its architecture's pooled value, the median of the groups that
  // could, rather than 0.
  std::map<std::string, std::vector<double>> fitted_launch_us;
  for (const auto& f : out)
    if (!f.launch_fixed) fitted_launch_us[f.arch].push_back(f.launch_overhead_us);
  std::map<std::string, double> pooled_launch_us;
  for (const auto& [arch, launches] : fitted_launch_us) pooled_launch_us[arch] = median(launches);
  for (auto& f : out) {
    const auto pool = pooled_launch_us.find(f.arch);
    if (!f.launch_fixed || pool == pooled_launch_us.end() || pool->second <= 0) continue;
    f = fit_group(f.arch, f.key, groups.at({f.arch, f.key}), pool->second * 1e-6, held_ramp(f.arch, f.key, out), p2p_pipeline_GBps);
    f.launch_pooled = true;
  }
  // An algorithm an architecture has no data for borrows another architecture's fit (its bandwidth terms:
  // kappa and ramp), as Calibration::algorithm would, but keeps its own pooled in-domain L: an 8-GPU Hopper
  // NVLS without data is not charged a 72-GPU Blackwell rack's 27 us. Nor does it take the other's launch
  // across domains: that is what one cluster's network costs beyond NCCL's NET terms, and NCCL's terms stand
  // without data. Borrowed, Blackwell's NVLS-tree 80 us (OCI's two GB300 racks) made NCCL #1244's two H20
  // nodes 9x slow held out, where the H20s show Hopper needs none (docs/calibration.md section 4).
  std::vector<GroupFit> borrowed;
  for (const auto& [arch, pooled_us] : pooled_launch_us) {
    std::set<std::string> own, seen;
    for (const auto& f : out)
      if (f.arch == arch) own.insert(f.key);
    // The other architectures from the last, as Calibration::algorithm looks them up.
    for (auto f = out.rbegin(); f != out.rend(); ++f) {
      if (f->arch == arch || own.count(f->key) || !seen.insert(f->key).second) continue;
      GroupFit b = *f;
      b.borrowed_from = f->arch;
      b.arch = arch;
      b.launch_overhead_us = pooled_us;
      b.launch_us_per_8_gpus = 0;  // the in-domain launch is all the architecture's own pooled figure
      b.scale_out_launch_us_per_8_gpus = -1;
      b.scale_out_hop_overhead_us = -1;
      b.launch_pooled = true;
      b.points = 0;
      b.median_abs_error = b.worst_abs_error = b.rms_log_residual = 0;
      borrowed.push_back(std::move(b));
    }
  }
  out.insert(out.end(), borrowed.begin(), borrowed.end());
  return out;
}

namespace {

// The candidate with the least objective, the first of equals (a later one must be better by more than rounding);
// the search of the fit's one-dimensional rates (the p2p pipeline rate, a verbs queue pair's rate).
template <class Objective>
double grid_argmin(const std::vector<double>& candidates, Objective objective) {
  double best = -1, best_value = candidates.front();
  for (double v : candidates) {
    const double o = objective(v);
    if (best < 0 || o < best * (1 - 1e-12)) {
      best = o;
      best_value = v;
    }
  }
  return best_value;
}

// The points of `pts` weighted as NCCL runs were: every series one observation, each point 1 / (its series'
// points); the misfit of a candidate calibration is the sum of loss(predicted / measured - 1) so weighted.
template <class Loss>
double series_weighted_misfit(const std::vector<const CollectivePoint*>& pts, const Calibration& c, Loss loss) {
  std::map<std::string, int> series_points;
  for (const auto* p : pts) ++series_points[p->m->series];
  double misfit = 0;
  for (const auto* p : pts) misfit += loss(predict_time_s(*p, c) / p->m->time_s - 1) / series_points[p->m->series];
  return misfit;
}

// One (architecture, protocol)'s network efficiency on the residuals of `c` (its groups, this protocol at
// identity): the efficiency from 0.30 to 1.00 in steps of 0.01 with the least weighted squared relative
// misfit (each series one observation, as for the groups' kappa) plus a prior (1 / eta - 1)^2 of one series'
// weight, toward NCCL's own protocol model.
ProtocolFit fit_protocol(const std::string& arch, const std::string& protocol, const std::vector<const CollectivePoint*>& pts,
                         const Calibration& c) {
  constexpr double kPriorSeries = 1.0;
  ProtocolFit f;
  f.arch = arch;
  f.protocol = protocol;
  f.points = static_cast<int>(pts.size());
  std::map<std::string, int> series_points;
  for (const auto* p : pts) ++series_points[p->m->series];
  double best = -1, best_eta = 1;
  for (int step = 100; step >= 30; --step) {
    const double eta = step / 100.0;
    double objective = kPriorSeries * (1 / eta - 1) * (1 / eta - 1);
    for (const auto* p : pts) {
      const double r = predict_time_at(*p, c, eta) / p->m->time_s - 1;
      objective += r * r / series_points[p->m->series];
    }
    if (best < 0 || objective < best) {
      best = objective;
      best_eta = eta;
    }
  }
  f.network_efficiency = best_eta;
  record_quality(f, pts, [&](const CollectivePoint& p) { return predict_time_at(p, c, f.network_efficiency); });
  return f;
}

// The p2p pipeline rate (AlgorithmCalibration::p2p_pipeline_GBps) that lets the groups of the points with p2p
// pipelines meet them best: each candidate of kP2pPipelineGridGBps and none (NCCL's own model: the links
// alone), the groups fitted at it, the weighted squared relative misfit of their points (each series one
// observation, as for kappa). One rate for every architecture: a pipeline is one CTA's copy loop and its
// handshake per chunk, and H100 and GB300 sweeps alone each put it at 80-100 GB/s (docs/calibration.md).
double fit_p2p_pipeline_GBps(const std::vector<const CollectivePoint*>& train) {
  std::vector<const CollectivePoint*> pts;
  std::set<std::pair<std::string, std::string>> groups;
  for (const CollectivePoint* p : train)
    if (p->p2p_pipeline_bytes > 0) groups.insert({p->arch, p->key});
  for (const CollectivePoint* p : train)
    if (groups.count({p->arch, p->key})) pts.push_back(p);
  if (pts.empty()) return 0;
  std::vector<double> candidates = {0.0};
  candidates.insert(candidates.end(), kP2pPipelineGridGBps.begin(), kP2pPipelineGridGBps.end());
  return grid_argmin(candidates, [&](double rate) {
    Calibration c;
    apply_collective_fits(c, fit_collective_groups(pts, rate));
    return series_weighted_misfit(pts, c, [](double r) { return r * r; });
  });
}

// The points with the queue pairs' floor at `fraction` of the line rate taken as known: where the floor is above a point's
// bandwidth part at kappa 1, that floor is its bandwidth part, exempt from kappa (as a NIC-bound point's under
// its protocol's efficiency, below).
std::vector<CollectivePoint> with_qp_floor(const std::vector<const CollectivePoint*>& train, double fraction) {
  std::vector<CollectivePoint> out;
  out.reserve(train.size());
  for (const CollectivePoint* p : train) {
    out.push_back(*p);
    const double floor = qp_floor_s(*p, fraction);
    if (floor > p->bandwidth_exempt_s + p->bandwidth_s) {
      out.back().bandwidth_exempt_s = floor;
      out.back().bandwidth_s = 0;
      out.back().network_bound_s = 0;
    }
  }
  return out;
}

std::vector<const CollectivePoint*> pointers_to(const std::vector<CollectivePoint>& points) {
  std::vector<const CollectivePoint*> out;
  out.reserve(points.size());
  for (const auto& p : points) out.push_back(&p);
  return out;
}

// The calibration a global parameter's grid value gives: the groups fitted on `points` (the parameter folded in),
// with `set` applied to the entries of the keys it belongs to (`applies`), so that predicting the raw points
// applies it once.
template <class Applies, class Set>
Calibration groups_fitted_with(const std::vector<CollectivePoint>& points, double p2p_pipeline_GBps, Applies applies, Set set) {
  Calibration c;
  apply_collective_fits(c, fit_collective_groups(pointers_to(points), p2p_pipeline_GBps));
  for (auto& [arch, algos] : c.arch_algorithms)
    for (auto& [key, a] : algos)
      if (applies(key)) set(a);
  return c;
}

// The fraction of its NIC's line rate a verbs queue pair moves (AlgorithmCalibration::qp_line_fraction) that
// lets the groups of the algorithms it can bind (rings, trees, NVLS-trees) meet their points best: none, or
// 0.15-1 about 3 % apart, the groups fitted at each with the binding points' floor known, the weighted absolute
// relative misfit of their points (each series one observation, as for kappa and the p2p rate). One fraction for
// every architecture: the NIC and NCCL's transport are the same on both. Absolute, not squared, as for the
// credit cycle it replaced (session 28): one cluster whose every algorithm runs below the others' cannot set it
// alone.
double fit_qp_line_fraction(const std::vector<const CollectivePoint*>& train, double p2p_pipeline_GBps) {
  std::vector<const CollectivePoint*> pts;
  bool any = false;
  for (const CollectivePoint* p : train)
    if (qp_bound_key(p->key)) {
      pts.push_back(p);
      any = any || p->qp_line_s > 0;
    }
  if (!any) return 0;
  std::vector<double> candidates = {0.0};
  for (double f = kQpLineFractionGridMin; f <= kQpLineFractionGridMax * (1 + 1e-9); f *= kQpLineFractionGridStep)
    candidates.push_back(sig4(f));
  return grid_argmin(candidates, [&](double fraction) {
    const Calibration c = groups_fitted_with(with_qp_floor(pts, fraction), p2p_pipeline_GBps, qp_bound_key,
                                             [&](AlgorithmCalibration& a) { a.qp_line_fraction = fraction; });
    return series_weighted_misfit(pts, c, [](double r) { return std::fabs(r); });
  });
}

// The points with a ring's local copy folded into their bandwidth part, (s + B / copy rate) / s, so that a
// group's kappa is fitted over it; ring_sending_steps cleared, as the part now holds it.
std::vector<CollectivePoint> with_ring_copy(const std::vector<const CollectivePoint*>& train, double copy_GBps) {
  std::vector<CollectivePoint> out;
  out.reserve(train.size());
  for (const CollectivePoint* p : train) {
    out.push_back(*p);
    if (p->ring_sending_steps > 0 && copy_GBps > 0) {
      out.back().bandwidth_s /= ring_copy_rate(p->ring_sending_steps, p->ring_links_Bps, copy_GBps);
      out.back().ring_sending_steps = 0;
    }
  }
  return out;
}

// The rate of a ring loop's local copy (AlgorithmCalibration::ring_copy_GBps) that lets the ring groups meet
// their points best: none, or 300-20 000 GB/s 5 % apart, the groups fitted at each with the copy folded in, the
// weighted absolute relative misfit of the ring points at >= 1 GiB (each series one observation): a per-byte
// cost, judged where nothing else of a ring's time is left (on every size a copy counted in steps took twice
// the value by trading the 2-GPU sweeps' slow ramp at 64-256 MiB against their large sizes). Only rings of more
// than one size in one domain tell it from kappa (2, 4 and 8 H100s and H200s; 2, 4 and 8 B200s, a 72-GPU rack).
// One rate for every architecture: NCCL's ring kernels are the same code, and the copy is the SMs' work, not the
// links'.
double fit_ring_copy_GBps(const std::vector<const CollectivePoint*>& train, double p2p_pipeline_GBps) {
  std::vector<const CollectivePoint*> pts;
  std::map<std::string, std::set<int>> steps_by_arch;
  for (const CollectivePoint* p : train)
    if (ring_sending_steps(p->key, 2) > 0) {
      pts.push_back(p);
      if (p->ring_sending_steps > 0) steps_by_arch[p->arch].insert(p->ring_sending_steps);
    }
  bool any = false;
  for (const auto& [arch, steps] : steps_by_arch) any = any || steps.size() >= 2;
  if (!any) return 0;
  std::vector<const CollectivePoint*> large;
  for (const CollectivePoint* p : pts)
    if (p->m->bytes >= kRingCopyVisibleBytes) large.push_back(p);
  std::vector<double> candidates = {0.0};
  for (double r = kRingCopyGridMinGBps; r <= kRingCopyGridMaxGBps * (1 + 1e-9); r *= kRingCopyGridStep)
    candidates.push_back(sig4(r));
  return grid_argmin(candidates, [&](double copy_GBps) {
    const Calibration c = groups_fitted_with(
        with_ring_copy(pts, copy_GBps), p2p_pipeline_GBps, [](const std::string& key) { return ring_sending_steps(key, 2) > 0; },
        [&](AlgorithmCalibration& a) { a.ring_copy_GBps = copy_GBps; });
    return series_weighted_misfit(large, c, [](double r) { return std::fabs(r); });
  });
}

}  // namespace

CollectiveFit fit_collectives(const std::vector<const CollectivePoint*>& train_points) {
  CollectiveFit fit;
  fit.p2p_pipeline_GBps = fit_p2p_pipeline_GBps(train_points);
  fit.qp_line_fraction = fit_qp_line_fraction(train_points, fit.p2p_pipeline_GBps);
  // From here the queue pairs' floor is known where it binds, and then a ring loop's copy work inside a domain.
  const std::vector<CollectivePoint> floored = with_qp_floor(train_points, fit.qp_line_fraction);
  fit.ring_copy_GBps = fit_ring_copy_GBps(pointers_to(floored), fit.p2p_pipeline_GBps);
  const std::vector<CollectivePoint> folded = with_ring_copy(pointers_to(floored), fit.ring_copy_GBps);
  const std::vector<const CollectivePoint*> train = pointers_to(folded);
  auto set_qp_rate = [&](std::vector<GroupFit>& groups) {
    for (auto& g : groups) {
      if (qp_bound_key(g.key)) g.qp_line_fraction = fit.qp_line_fraction;
      if (ring_sending_steps(g.key, 2) > 0) g.ring_copy_GBps = fit.ring_copy_GBps;
    }
  };
  fit.groups = fit_collective_groups(train, fit.p2p_pipeline_GBps);
  set_qp_rate(fit.groups);
  std::map<std::pair<std::string, std::string>, std::vector<const CollectivePoint*>> by_protocol;
  for (const CollectivePoint* p : train)
    if (p->domains > 1 && p->protocol != "Simple" && p->network_bound_s > 0) by_protocol[{p->arch, p->protocol}].push_back(p);
  if (by_protocol.empty()) return fit;
  Calibration groups_only;
  apply_collective_fits(groups_only, fit.groups);
  for (const auto& [id, pts] : by_protocol) fit.protocols.push_back(fit_protocol(id.first, id.second, pts, groups_only));
  // The groups again: a point whose NICs bind at the fitted efficiency (its NICs' time at eta above the rest
  // under the first groups' kappa) has that time as its bandwidth part, which kappa does not scale.
  Calibration with_protocols = groups_only;
  apply_collective_fit(with_protocols, {{}, fit.protocols});
  std::vector<CollectivePoint> scaled;
  scaled.reserve(train.size());
  for (const CollectivePoint* p : train) {
    scaled.push_back(*p);
    const double eta = network_efficiency_of(*p, with_protocols);
    const double kappa = groups_only.algorithm(p->key, p->arch).efficiency_at(p->m->bytes, p->ramp_gpus);
    if (eta < 1 && p->network_bound_s / eta > bandwidth_part_s(*p, kappa, 1)) {
      scaled.back().bandwidth_exempt_s = p->network_bound_s / eta;
      scaled.back().bandwidth_s = 0;
      scaled.back().network_bound_s = 0;
    }
  }
  fit.groups = fit_collective_groups(pointers_to(scaled), fit.p2p_pipeline_GBps);
  set_qp_rate(fit.groups);
  return fit;
}

void apply_collective_fit(Calibration& c, const CollectiveFit& fit) {
  apply_collective_fits(c, fit.groups);
  for (const auto& f : fit.protocols) {
    ProtocolCalibration pc;
    pc.network_efficiency = f.network_efficiency;
    char head[256];
    std::snprintf(head, sizeof head,
                  "racksim calibrate fit (the rate of %s through a NIC against NCCL's protocol model, pulled toward 1 "
                  "with the weight of one series): %d point(s) of %zu series; median |error| %.1f %%, worst %.1f %%; series: ",
                  f.protocol.c_str(), f.points, f.series.size(), 100 * f.median_abs_error, 100 * f.worst_abs_error);
    pc.source = head + series_list(f);
    pc.fit = summary_of(f);
    c.arch_protocols[f.arch][f.protocol] = pc;
  }
}

void apply_collective_fits(Calibration& c, const std::vector<GroupFit>& fits) {
  for (const auto& f : fits) {
    AlgorithmCalibration a;
    a.bandwidth_efficiency = f.bandwidth_efficiency;
    a.launch_overhead_us = f.launch_overhead_us;
    a.launch_us_per_8_gpus = f.launch_us_per_8_gpus;
    a.scale_out_launch_us_per_8_gpus = f.scale_out_launch_us_per_8_gpus;
    a.scale_out_hop_overhead_us = f.scale_out_hop_overhead_us;
    a.ramp_bytes_per_gpu = f.ramp_bytes_per_gpu;
    a.p2p_pipeline_GBps = f.p2p_pipeline_GBps;
    a.qp_line_fraction = f.qp_line_fraction;
    a.ring_copy_GBps = f.ring_copy_GBps;
    a.borrowed_from = f.borrowed_from;
    if (!f.borrowed_from.empty()) {
      a.source = "racksim calibrate fit: no " + f.arch + " data for " + f.key + "; kappa and ramp of " + f.borrowed_from +
                 "'s fit (" + std::to_string(f.series.size()) + " series), the in-domain launch_overhead_us the median of " +
                 f.arch + "'s fitted groups, no launch across domains beyond NCCL's terms";
      c.arch_algorithms[f.arch][f.key] = a;
      continue;
    }
    char head[512];
    std::snprintf(head, sizeof head,
                  "racksim calibrate fit (kappa, pulled toward 1 with the weight of one series, and launch, in one NVLink "
                  "domain and across domains, over racksim's physical model with NCCL's structure): %d point(s) "
                  "of %zu series; median |error| %.1f %%, worst %.1f %%%s; series: ",
                  f.points, f.series.size(), 100 * f.median_abs_error, 100 * f.worst_abs_error,
                  f.kappa_fixed    ? "; bandwidth_efficiency fixed at 1 (no point is mostly bandwidth)"
                  : f.launch_pooled ? "; launch_overhead_us is the median of this architecture's fitted groups (one "
                                      "message size, or no point is mostly latency)"
                  : f.launch_fixed ? "; launch_overhead_us fixed at 0 (one message size, or no point is mostly latency)"
                                   : "");
    a.source = head;
    if (f.p2p_pipeline_GBps > 0)
      a.source += fmt::format("p2p_pipeline_GBps fitted on every architecture's all-to-all points together ({:g} GB/s); ",
                              f.p2p_pipeline_GBps);
    if (f.qp_line_fraction > 0)
      a.source += fmt::format("qp_line_fraction fitted on every architecture's ring, tree and NVLS-tree points together ({:g} of a NIC's line rate); ",
                              f.qp_line_fraction);
    if (f.ring_copy_GBps > 0)
      a.source += fmt::format("ring_copy_GBps fitted on every architecture's ring points in one NVLink domain together (a loop's "
                              "local copy at {:g} GB/s); ", f.ring_copy_GBps);
    if (f.launch_us_per_8_gpus > 0)
      a.source += fmt::format("launch_us_per_8_gpus fitted with launch_overhead_us on points of several GPU counts in one NVLink "
                              "domain (the in-domain launch {:g} + {:g} us per 8 GPUs); ", f.launch_overhead_us, f.launch_us_per_8_gpus);
    a.source += series_list(f);
    a.fit = summary_of(f);
    c.arch_algorithms[f.arch][f.key] = a;
  }
}

}  // namespace racksim::calibration
