#include "models/calibration/fitter.hpp"
#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "models/calibration/collective_fit.hpp"
#include "models/calibration/least_squares.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim::calibration {

namespace {

using racksim::median;

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", 100 * x);
  return b;
}
std::string num(double x, int digits = 4) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*g", digits, x);
  return b;
}

// Fitted values are stored to 4 significant digits: far below their uncertainty, and the calibration
// file stays readable and identical across platforms.
double sig4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 4 - std::ceil(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

struct Errors {
  double rms_log = 0, median_abs = 0, worst_abs = 0;
  int n = 0, n_small = 0, n_large = 0;
  double median_small = 0, median_large = 0;
};

Errors errors_of(const std::vector<const Measurement*>& pts, const Predictor& p, const Calibration& c) {
  Errors e;
  std::vector<double> abs_all, small, large;
  double ss = 0;
  for (const Measurement* m : pts) {
    const double pred = p.reported_time_s(*m, c);
    const double err = pred / m->time_s - 1;
    ss += std::pow(std::log(pred / m->time_s), 2);
    abs_all.push_back(std::fabs(err));
    (m->bytes < kLargeMessageBytes ? small : large).push_back(std::fabs(err));
  }
  e.n = static_cast<int>(pts.size());
  if (e.n == 0) return e;
  e.rms_log = std::sqrt(ss / e.n);
  e.median_abs = median(abs_all);
  e.worst_abs = *std::max_element(abs_all.begin(), abs_all.end());
  e.n_small = static_cast<int>(small.size());
  e.n_large = static_cast<int>(large.size());
  e.median_small = median(small);
  e.median_large = median(large);
  return e;
}

std::vector<std::string> series_of(const std::vector<const Measurement*>& pts, std::vector<std::string>* sources) {
  std::vector<std::string> out;
  std::set<std::string> seen, seen_src;
  for (const Measurement* m : pts) {
    if (seen.insert(m->series).second) out.push_back(m->series);
    if (sources && seen_src.insert(m->source).second) sources->push_back(m->source);
  }
  return out;
}

std::string summary_source(const std::string& head, const ParameterFit& f) {
  std::string s = head + ": " + std::to_string(f.points) + " points of " + std::to_string(f.series.size()) +
                  " series (";
  for (std::size_t i = 0; i < f.series.size(); ++i) s += (i ? "; " : "") + f.series[i];
  s += "); median |error| " + pct(f.median_abs_error) + ", worst " + pct(f.worst_abs_error) +
       ", rms log residual " + num(f.rms_log_residual, 3);
  if (!f.fixed_parameters.empty()) {
    s += "; fixed: ";
    for (std::size_t i = 0; i < f.fixed_parameters.size(); ++i) s += (i ? "; " : "") + f.fixed_parameters[i];
  }
  return s;
}

// ---- links -----------------------------------------------------------------------------------------

struct LinkPoint {
  const Measurement* m;
  TransferRoute route;
};

LinkCalibration fit_link(const std::vector<LinkPoint>& pts, ParameterFit& report) {
  bool any_sized = false;
  for (const auto& p : pts) any_sized = any_sized || !p.m->bytes_assumed;
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  for (const auto& p : pts) {
    const double x = p.m->bytes / p.route.bottleneck_Bps;  // seconds at the vendor peak
    // extra_latency is added per hop of its kind (predictor, analytic model and engine alike): a GPU ->
    // NVSwitch -> GPU route pays it twice (issue 7)
    double hops_of_kind = 0;
    for (const auto& h : p.route.hops) hops_of_kind += h.kind == p.route.bottleneck_kind ? 1.0 : 0.0;
    if (any_sized) {
      rows.push_back({p.m->bytes_assumed ? 0.0 : hops_of_kind, x});
      y.push_back(p.m->bytes_assumed ? p.m->time_s : p.m->time_s - p.m->timer_floor_s - p.route.latency_s);
    } else {
      rows.push_back({x});
      y.push_back(p.m->time_s);
    }
    w.push_back(1 / p.m->time_s);
  }
  const LinearFit fit = weighted_least_squares(rows, y, w);
  LinkCalibration lc;
  const double inv_eff = fit.coefficients.back();
  lc.bandwidth_efficiency = inv_eff > 0 ? 1 / inv_eff : 1;
  report.free_parameters.push_back("bandwidth_efficiency");
  if (lc.bandwidth_efficiency > 1) {
    report.notes.push_back("fitted efficiency " + num(lc.bandwidth_efficiency) +
                           " is above the vendor peak: capped at 1 (the topology's bandwidth is too low)");
    lc.bandwidth_efficiency = 1;
  }
  const double se_inv = fit.std_errors.back();
  report.std_errors.push_back({"bandwidth_efficiency", std::isfinite(se_inv) ? se_inv / (inv_eff * inv_eff) : se_inv});
  if (any_sized) {
    const double alpha_us = units::s_to_us(fit.coefficients[0]);
    report.free_parameters.push_back("extra_latency_us");
    report.std_errors.push_back({"extra_latency_us", units::s_to_us(fit.std_errors[0])});
    if (alpha_us < 0) {
      report.notes.push_back("fitted extra latency " + num(alpha_us) +
                             " us is negative (the nominal latency already exceeds what was measured): kept 0");
    }
    lc.extra_latency_us = std::max(0.0, alpha_us);
  } else {
    report.fixed_parameters.push_back("extra_latency_us = 0: bandwidth-only records (no size sweep) say nothing about latency");
  }
  lc.bandwidth_efficiency = sig4(lc.bandwidth_efficiency);
  lc.extra_latency_us = sig4(lc.extra_latency_us);
  report.values = {{"bandwidth_efficiency", lc.bandwidth_efficiency}, {"extra_latency_us", lc.extra_latency_us}};
  return lc;
}

// Link kinds the data did not reach stay at identity, said so in their source. Algorithms without data
// are left out: a lookup then borrows another architecture's entry (and says so in the result) or uses
// racksim's model unfitted.
void complete_calibration(Calibration& c) {
  for (LinkKind k : {LinkKind::nvlink, LinkKind::c2c, LinkKind::pcie, LinkKind::cpu_cpu, LinkKind::nic, LinkKind::ib})
    if (!c.links.count(k))
      c.links[k] = LinkCalibration{1.0, 0.0,
                                   "not fitted: no measurement had this link kind as its bottleneck (identity: "
                                   "vendor peak, nominal latency)",
                                   {}};
}

// A collective fit's quality in the report's entry.
void copy_quality(ParameterFit& f, const FitQuality& q) {
  f.series = q.series;
  f.sources = q.sources;
  f.points = q.points;
  f.median_abs_error = q.median_abs_error;
  f.worst_abs_error = q.worst_abs_error;
  f.rms_log_residual = q.rms_log_residual;
}

// Held-out folds: one racksim system left out at a time (H100 -> H200, GB200 -> H100) when the data
// cover two or more systems, else one machine (measured_on) at a time.
std::size_t distinct_systems(const std::vector<const Measurement*>& pts) {
  std::set<std::string> s;
  for (const Measurement* m : pts) s.insert(m->system);
  return s.size();
}
std::string fold_of(const Measurement& m, bool by_system) { return by_system ? "system " + m.system : m.measured_on; }

}  // namespace

// The HBM fit's name in the report; its values go to the calibration's "memory" entry "hbm".
constexpr const char* kHbmFitKey = "hbm (memory)";

bool is_training_measurement(const Measurement& m, bool kind_has_measured_data, std::string* why) {
  auto no = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (m.confidence == "low") return no("confidence low: validation only");
  if (!m.placement_known) return no("the source leaves the ranks' nodes or NICs open: validation only");
  if (!m.network_stand_in.empty()) return no(m.network_stand_in);
  if (!m.unmodelled_effect.empty()) return no(m.unmodelled_effect);
  if (m.kind == MeasurementKind::memory) return no("HBM streaming: fitted as the memory entry, not a link");
  if (m.kind == MeasurementKind::collective && m.gpus.size() == 1)
    return no("one rank: a copy within the GPU priced by the memory entry, no algorithm term to fit: validation only");
  if (m.kind == MeasurementKind::transfer && m.engine == "copy both ways")
    return no("bidirectional P2P copies: below ~16 MiB the probe's two cross-GPU event waits (~15 us on the "
              "H200 pair of issue 7) dominate, which the transfer model does not represent: validation only");
  if (kind_has_measured_data && m.confidence != "measured")
    return no("this kind has measurements of our own: published records are validation only");
  return true;
}

FitResult fit_calibration(const std::vector<Measurement>& data, const Predictor& predictor, const FitOptions& options) {
  FitResult res;
  res.calibration.name = options.name;
  res.calibration.source = options.source.empty() ? "racksim calibrate fit" : options.source;
  std::map<std::string, std::string> ignored;  // series -> reason
  auto ignore = [&](const Measurement& m, const std::string& reason) {
    ignored.emplace(m.series + " [" + m.system + "]", reason);
  };

  // ---- links, grouped by bottleneck kind ----
  std::map<LinkKind, std::vector<LinkPoint>> by_kind;
  for (const auto& m : data) {
    if (m.kind != MeasurementKind::transfer) continue;
    try {
      by_kind[predictor.transfer_route(m).bottleneck_kind].push_back({&m, predictor.transfer_route(m)});
    } catch (const InputError& e) {
      ignore(m, std::string("not expressible: ") + e.what());
    }
  }
  // NVLink for collectives: NCCL's own per-link figures (topo.h:18-21: SM80 20.0, SM90 20.6 and SM100 40.1 GB/s
  // per 25 / 25 / 50 GB/s link), per architecture. Copy-engine P2P probes (cudaMemcpyPeer) reach more than the SM
  // loops NCCL runs, so they validate the route but do not set the collective links. Ampere's NVLink 3 runs at
  // SM80's figure (sm86's 12 GB/s is for NVLink bridges on boards racksim does not ship).
  res.calibration.arch_links["ampere"][LinkKind::nvlink] =
      LinkCalibration{sig4(20.0 / 25.0), 0.0, "NCCL 2.28 src/graph/topo.h:18: SM80_NVLINK_BW 20.0 GB/s per 25 GB/s NVLink 3 link", {}};
  res.calibration.arch_links["hopper"][LinkKind::nvlink] =
      LinkCalibration{sig4(20.6 / 25.0), 0.0, "NCCL 2.28 src/graph/topo.h:19: SM90_NVLINK_BW 20.6 GB/s per 25 GB/s NVLink 4 link", {}};
  res.calibration.arch_links["blackwell"][LinkKind::nvlink] =
      LinkCalibration{sig4(40.1 / 50.0), 0.0, "NCCL 2.28 src/graph/topo.h:21: SM100_NVLINK_BW 40.1 GB/s per 50 GB/s NVLink 5 link", {}};
  // The NIC port: what NVIDIA says a ConnectX-7 at NDR 400 Gb/s delivers to NCCL, 48-49 GB/s of its 50 (packet
  // headers and the transport's own messages). No collective record isolates a NIC (its rate enters with an
  // algorithm's kappa), so this figure is taken, not fitted, and applied to every NIC port; a transfer probe
  // whose bottleneck is a NIC replaces it below.
  res.calibration.links[LinkKind::nic] = LinkCalibration{
      sig4(48.5 / 50.0), 0.0,
      "NVIDIA (AddyLaddy), NVIDIA/nccl-tests issue #267, 2025-01-23: 'CX-7 NICs at NDR rate (400Gbps) should achieve "
      "up to 48-49GB/s per NIC': 48.5 GB/s of 50",
      {}};
  for (auto& [kind, all] : by_kind) {
    if (kind == LinkKind::nvlink) {
      for (const auto& p : all)
        ignore(*p.m, "NVLink copies validate the route; collectives use NCCL's per-link NVLink bandwidth (topo.h:19-21)");
      continue;
    }
    bool measured = false;
    for (const auto& p : all) measured = measured || p.m->confidence == "measured";
    std::vector<LinkPoint> train;
    for (const auto& p : all) {
      std::string why;
      if (is_training_measurement(*p.m, measured, &why)) train.push_back(p);
      else ignore(*p.m, why);
    }
    if (train.empty()) continue;
    ParameterFit f;
    f.key = to_string(kind);
    f.is_link = true;
    LinkCalibration lc = fit_link(train, f);
    std::vector<const Measurement*> tp;
    for (const auto& p : train) tp.push_back(p.m);
    f.series = series_of(tp, &f.sources);
    res.calibration.links[kind] = lc;
    const Errors e = errors_of(tp, predictor, res.calibration);
    f.points = e.n;
    f.rms_log_residual = e.rms_log;
    f.median_abs_error = e.median_abs;
    f.worst_abs_error = e.worst_abs;
    res.calibration.links[kind].source = summary_source("racksim calibrate fit (bandwidth x efficiency, latency + extra)", f);
    res.fits.push_back(std::move(f));
    // Held-out: leave one machine out (links fitted on the rest; the full fit stays in the calibration).
    std::vector<const Measurement*> train_m;
    for (const auto& p : train) train_m.push_back(p.m);
    const bool by_system = distinct_systems(train_m) >= 2;
    std::set<std::string> machines;
    for (const auto& p : train) machines.insert(fold_of(*p.m, by_system));
    if (options.held_out && machines.size() >= 2) {
      for (const auto& left : machines) {
        std::vector<LinkPoint> rest;
        std::vector<const Measurement*> out;
        std::string trained;
        std::set<std::string> trained_set;
        for (const auto& p : train) {
          if (fold_of(*p.m, by_system) == left) out.push_back(p.m);
          else {
            rest.push_back(p);
            if (trained_set.insert(p.m->measured_on).second) trained += (trained.empty() ? "" : "; ") + p.m->measured_on;
          }
        }
        ParameterFit scratch;
        Calibration cv = res.calibration;
        cv.links[kind] = fit_link(rest, scratch);
        const Errors e2 = errors_of(out, predictor, cv);
        res.held_out.push_back({to_string(kind), left, trained, e2.n, e2.median_abs, e2.worst_abs, e2.n_small,
                                e2.n_large, e2.median_small, e2.median_large, ""});
      }
    }
  }

  // ---- HBM: device memory ("memory": {"hbm"}), what a collective on one rank copies through ----
  {
    std::vector<const Measurement*> mem;
    for (const auto& m : data)
      if (m.kind == MeasurementKind::memory && m.confidence == "measured" && !m.bytes_assumed) mem.push_back(&m);
    if (mem.size() >= 3) {
      std::vector<std::vector<double>> rows;
      std::vector<double> y, w;
      for (const Measurement* m : mem) {
        rows.push_back({1.0, m->bytes / predictor.hbm_bandwidth_Bps(*m)});
        y.push_back(m->time_s - m->timer_floor_s);
        w.push_back(1 / m->time_s);
      }
      const LinearFit lf = weighted_least_squares(rows, y, w);
      ParameterFit f;
      f.key = kHbmFitKey;
      f.is_link = true;
      f.free_parameters = {"bandwidth_efficiency", "latency_us"};
      const double eff = lf.coefficients[1] > 0 ? 1 / lf.coefficients[1] : 0;
      f.values = {{"bandwidth_efficiency", sig4(eff)}, {"latency_us", sig4(units::s_to_us(lf.coefficients[0]))}};
      f.std_errors = {{"bandwidth_efficiency", lf.std_errors[1] * eff * eff}, {"latency_us", units::s_to_us(lf.std_errors[0])}};
      f.series = series_of(mem, &f.sources);
      std::vector<double> abs_err;
      double ss = 0;
      for (const Measurement* m : mem) {
        const double pred = m->timer_floor_s + lf.coefficients[0] + m->bytes / (eff * predictor.hbm_bandwidth_Bps(*m));
        abs_err.push_back(std::fabs(pred / m->time_s - 1));
        ss += std::pow(std::log(pred / m->time_s), 2);
      }
      f.points = static_cast<int>(mem.size());
      f.median_abs_error = median(abs_err);
      f.worst_abs_error = *std::max_element(abs_err.begin(), abs_err.end());
      f.rms_log_residual = std::sqrt(ss / f.points);
      f.notes.push_back("time = latency + bytes / (efficiency x the topology's HBM bandwidth), SM streams and copy-engine "
                        "D2D traffic together; one entry for every GPU (the probes are Hopper's); used by collectives on "
                        "one rank (a copy within the GPU), while the memory and offload models use the topology's figure");
      LinkCalibration hbm{sig4(eff), std::max(0.0, sig4(units::s_to_us(lf.coefficients[0]))), "", {}};
      hbm.source = summary_source("racksim calibrate fit (HBM bandwidth x efficiency, latency)", f);
      res.calibration.memory["hbm"] = hbm;
      res.fits.push_back(std::move(f));
    }
  }

  // ---- collectives: kappa and launch per architecture and algorithm (collective_fit.hpp) ----
  std::vector<SkippedRecord> not_expressible;
  res.points = collective_points(data, predictor, res.calibration, &not_expressible);
  for (const auto& s : not_expressible) ignored.emplace(s.what, s.reason);
  std::vector<bool> trainable;
  std::vector<const CollectivePoint*> train;
  for (const auto& p : res.points) {
    std::string why;
    const bool ok = is_training_measurement(*p.m, false, &why);
    trainable.push_back(ok);
    if (ok) train.push_back(&p);
    else ignore(*p.m, why);
  }
  const CollectiveFit collective_fit = fit_collectives(train);
  const std::vector<GroupFit>& groups = collective_fit.groups;
  apply_collective_fit(res.calibration, collective_fit);
  for (const auto& pf : collective_fit.protocols) {
    ParameterFit f;
    f.key = pf.arch + ":" + pf.protocol + " (network)";
    f.is_protocol = true;
    f.free_parameters.push_back("network_efficiency");
    f.values = {{"network_efficiency", pf.network_efficiency}};
    f.notes.push_back("fitted on the points of " + pf.protocol + " across NVLink domains whose NICs can bind; the algorithm "
                      "groups are fitted again with it");
    copy_quality(f, pf);
    res.fits.push_back(std::move(f));
  }
  for (const auto& g : groups) {
    ParameterFit f;
    f.key = g.arch + ":" + g.key;
    if (!g.kappa_fixed) f.free_parameters.push_back("bandwidth_efficiency");
    else f.fixed_parameters.push_back("bandwidth_efficiency = 1: no point is mostly bandwidth");
    if (!g.launch_fixed) f.free_parameters.push_back("launch_overhead_us");
    else if (g.launch_pooled)
      f.fixed_parameters.push_back("launch_overhead_us = the median of " + g.arch + "'s fitted groups: one message size, or no point is mostly latency");
    else f.fixed_parameters.push_back("launch_overhead_us = 0: one message size, or no point is mostly latency");
    if (!g.borrowed_from.empty()) {
      f.notes.push_back("no " + g.arch + " data: kappa, ramp and the launch across domains borrowed from " + g.borrowed_from + "'s fit");
      f.fixed_parameters = {"bandwidth_efficiency: " + g.borrowed_from + "'s"};
      f.free_parameters.clear();
    }
    if (g.scale_out_launch_fitted)
      f.free_parameters.push_back(g.scale_out_hop_overhead_us >= 0 ? "scale_out_hop_overhead_us" : "scale_out_launch_us_per_8_gpus");
    f.values = {{"bandwidth_efficiency", g.bandwidth_efficiency}, {"launch_overhead_us", g.launch_overhead_us}};
    if (g.scale_out_launch_fitted)
      f.values.push_back(g.scale_out_hop_overhead_us >= 0 ? std::make_pair(std::string("scale_out_hop_overhead_us"), g.scale_out_hop_overhead_us)
                                                          : std::make_pair(std::string("scale_out_launch_us_per_8_gpus"), g.scale_out_launch_us_per_8_gpus));
    if (g.launch_us_per_8_gpus > 0) {
      f.free_parameters.push_back("launch_us_per_8_gpus");
      f.values.push_back({"launch_us_per_8_gpus", g.launch_us_per_8_gpus});
      f.notes.push_back("launch_us_per_8_gpus: the in-domain launch's part per 8 GPUs of the domain, fitted with launch_overhead_us where the points come from several GPU counts in one domain");
    }
    if (g.p2p_pipeline_GBps > 0) {
      f.free_parameters.push_back("p2p_pipeline_GBps");
      f.values.push_back({"p2p_pipeline_GBps", g.p2p_pipeline_GBps});
      f.notes.push_back("p2p_pipeline_GBps: one rate fitted on every architecture's all-to-all points together");
    }
    if (g.qp_line_fraction > 0) {
      f.free_parameters.push_back("qp_line_fraction");
      f.values.push_back({"qp_line_fraction", g.qp_line_fraction});
      f.notes.push_back("qp_line_fraction: one rate per verbs queue pair fitted on every architecture's ring, tree and NVLS-tree points together (absolute misfit)");
    }
    if (g.ring_copy_GBps > 0) {
      f.free_parameters.push_back("ring_copy_GBps");
      f.values.push_back({"ring_copy_GBps", g.ring_copy_GBps});
      f.notes.push_back("ring_copy_GBps: the rate of a ring loop's local copy, fitted on every architecture's ring points in one NVLink domain together (absolute misfit, at >= 1 GiB)");
    }
    copy_quality(f, g);
    res.fits.push_back(std::move(f));
  }
  if (options.held_out) {
    res.cross_validation.push_back(cross_validate(res.points, trainable, res.calibration, "system",
                                                  [](const CollectivePoint& p) { return "system " + p.m->system; }));
    res.cross_validation.push_back(cross_validate(res.points, trainable, res.calibration, "GPU count",
                                                  [](const CollectivePoint& p) { return std::to_string(p.m->gpus.size()) + " GPUs"; }));
  }
  // Record each fit in its calibration entry (points, errors, data, fixed parameters, held-out errors).
  for (const auto& f : res.fits) {
    FitSummary fs;
    fs.points = f.points;
    fs.median_abs_error = sig4(f.median_abs_error);
    fs.worst_abs_error = sig4(f.worst_abs_error);
    fs.rms_log_residual = sig4(f.rms_log_residual);
    fs.data = f.series;
    for (const auto& x : f.fixed_parameters) fs.notes.push_back("fixed " + x);
    for (const auto& x : f.notes) fs.notes.push_back(x);
    for (const auto& h : res.held_out)
      if (h.key == f.key)
        fs.notes.push_back("held out: " + h.left_out + " predicted from " + h.trained_on + ": median |error| " +
                           pct(h.median_abs_error) + ", worst " + pct(h.worst_abs_error) + " over " +
                           std::to_string(h.points) + " points" + (h.note.empty() ? "" : " (" + h.note + ")"));
    if (f.is_link) {
      const auto kind = link_kind_from_string(f.key);
      if (kind) res.calibration.links[*kind].fit = fs;
      if (f.key == kHbmFitKey) res.calibration.memory["hbm"].fit = fs;
    }
  }
  complete_calibration(res.calibration);
  for (const auto& [series, reason] : ignored) res.ignored.push_back(series + ": " + reason);
  return res;
}

}  // namespace racksim::calibration
