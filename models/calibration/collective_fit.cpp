#include "models/calibration/collective_fit.hpp"
#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "models/analytic/analytic_model.hpp"
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

Calibration links_only(const Calibration& base) {
  Calibration c = base;
  c.algorithms.clear();
  c.arch_algorithms.clear();
  return c;
}

}  // namespace

std::vector<CollectivePoint> collective_points(const std::vector<Measurement>& data, const Predictor& predictor,
                                               const Calibration& base, std::vector<SkippedRecord>* skipped) {
  const Calibration links = links_only(base);
  std::vector<CollectivePoint> out;
  for (const auto& m : data) {
    if (m.kind != MeasurementKind::collective) continue;
    try {
      const TopologyGraph& g = predictor.graph(m.system, m.racks);
      CollectiveRequest req;
      req.op = m.op;
      req.algorithm = m.algorithm;
      req.gpus = m.gpus;
      req.bytes = static_cast<std::uint64_t>(std::llround(m.bytes));
      req.protocol = m.protocol;
      req.channels = m.channels;
      req.nvls_enabled = m.nvls_enabled;
      const AnalyticEstimate e = analytic_collective(g, req, links);
      CollectivePoint p;
      p.m = &m;
      CollectiveRequest resolved = req;
      resolved.algorithm = e.algorithm;
      p.arch = request_architecture(g, resolved);
      p.key = std::string(to_string(m.op)) + "/" + e.algorithm;
      p.protocol = e.protocol;
      p.bandwidth_s = e.bandwidth_s;
      p.latency_s = std::max(0.0, e.time_s - e.bandwidth_s);
      out.push_back(p);
    } catch (const std::runtime_error& e) {  // InputError or SimulationError: this record cannot be expressed
      if (skipped) skipped->push_back({m.id, m.series, std::string("not expressible: ") + e.what()});
    }
  }
  return out;
}

double predict_time_s(const CollectivePoint& p, const Calibration& c) {
  const AlgorithmCalibration& a = c.algorithm(p.key, p.arch);
  const double kappa = a.efficiency_at(p.m->bytes);
  return a.launch_overhead_us * 1e-6 + p.latency_s + p.bandwidth_s / (kappa > 0 ? kappa : 1) + p.m->timer_floor_s;
}

std::vector<GroupFit> fit_collective_groups(const std::vector<const CollectivePoint*>& train) {
  std::map<std::pair<std::string, std::string>, std::vector<const CollectivePoint*>> groups;
  for (const CollectivePoint* p : train) groups[{p->arch, p->key}].push_back(p);
  std::vector<GroupFit> out;
  for (const auto& group : groups) {
    const auto& id = group.first;
    const auto& pts = group.second;  // a plain reference: clang 14 cannot capture structured bindings in lambdas
    GroupFit f;
    f.arch = id.first;
    f.key = id.second;
    f.points = static_cast<int>(pts.size());
    std::set<double> sizes;
    for (const auto* p : pts) sizes.insert(p->m->bytes);
    // A parameter is fitted only from data that can determine it: kappa needs a point whose model time is
    // mostly bandwidth, L a point that is mostly latency (else a group of small messages alone would set
    // kappa from noise in the latency, and predict large messages 20x off). Undetermined: kappa 1 (the
    // physical model), L 0.
    bool bandwidth_seen = false, latency_seen = false;
    for (const auto* p : pts) {
      const double share = p->bandwidth_s / std::max(1e-30, p->bandwidth_s + p->latency_s);
      bandwidth_seen = bandwidth_seen || share >= 0.5;
      latency_seen = latency_seen || share < 0.5;
    }
    // Minimise sum ((L + c_i + b_i u - y_i) / y_i)^2 over L >= 0 and u = 1 / kappa > 0.
    auto solve_u = [&](double L) {
      double num = 0, den = 0;
      for (const auto* p : pts) {
        const double y = p->m->time_s - p->m->timer_floor_s, w = 1 / (y * y);
        num += w * p->bandwidth_s * (y - L - p->latency_s);
        den += w * p->bandwidth_s * p->bandwidth_s;
      }
      return den > 0 ? num / den : 1.0;
    };
    auto solve_L = [&](double u) {
      double num = 0, den = 0;
      for (const auto* p : pts) {
        const double y = p->m->time_s - p->m->timer_floor_s, w = 1 / (y * y);
        num += w * (y - p->latency_s - u * p->bandwidth_s);
        den += w;
      }
      return den > 0 ? std::max(0.0, num / den) : 0.0;
    };
    double L = 0, u = 1;
    if (!bandwidth_seen) {
      f.kappa_fixed = true;
      L = solve_L(1.0);
    } else if (sizes.size() < 2 || !latency_seen) {
      f.launch_fixed = true;
      u = solve_u(0);
    } else {
      u = solve_u(0);
      double s_w = 0, s_wb = 0, s_wbb = 0, s_wr = 0, s_wbr = 0;
      for (const auto* p : pts) {
        const double y = p->m->time_s - p->m->timer_floor_s, w = 1 / (y * y), r = y - p->latency_s;
        s_w += w;
        s_wb += w * p->bandwidth_s;
        s_wbb += w * p->bandwidth_s * p->bandwidth_s;
        s_wr += w * r;
        s_wbr += w * p->bandwidth_s * r;
      }
      const double det = s_w * s_wbb - s_wb * s_wb;
      if (std::fabs(det) > 1e-30 * s_w * s_wbb) {
        L = (s_wr * s_wbb - s_wb * s_wbr) / det;
        u = (s_w * s_wbr - s_wb * s_wr) / det;
      }
      if (L < 0) {
        L = 0;
        u = solve_u(0);
      }
    }
    if (!(u > 0)) u = 1;
    f.bandwidth_efficiency = sig4(std::clamp(1 / u, 0.05, 2.0));
    f.launch_overhead_us = sig4(std::min(L * 1e6, 1e5));
    std::vector<double> errs;
    double ss = 0;
    std::set<std::string> seen_s, seen_src;
    for (const auto* p : pts) {
      const double pred = f.launch_overhead_us * 1e-6 + p->latency_s + p->bandwidth_s / f.bandwidth_efficiency + p->m->timer_floor_s;
      errs.push_back(std::fabs(pred / p->m->time_s - 1));
      ss += std::pow(std::log(pred / p->m->time_s), 2);
      if (seen_s.insert(p->m->series).second) f.series.push_back(p->m->series);
      if (seen_src.insert(p->m->source).second) f.sources.push_back(p->m->source);
    }
    f.median_abs_error = median(errs);
    f.worst_abs_error = *std::max_element(errs.begin(), errs.end());
    f.rms_log_residual = std::sqrt(ss / errs.size());
    out.push_back(std::move(f));
  }
  return out;
}

void apply_collective_fits(Calibration& c, const std::vector<GroupFit>& fits) {
  for (const auto& f : fits) {
    AlgorithmCalibration a;
    a.bandwidth_efficiency = f.bandwidth_efficiency;
    a.launch_overhead_us = f.launch_overhead_us;
    char head[256];
    std::snprintf(head, sizeof head,
                  "racksim calibrate fit (kappa and launch over racksim's physical model with NCCL's structure): %d point(s) "
                  "of %zu series; median |error| %.1f %%, worst %.1f %%%s; series: ",
                  f.points, f.series.size(), 100 * f.median_abs_error, 100 * f.worst_abs_error,
                  f.kappa_fixed    ? "; bandwidth_efficiency fixed at 1 (no point is mostly bandwidth)"
                  : f.launch_fixed ? "; launch_overhead_us fixed at 0 (one message size, or no point is mostly latency)"
                                   : "");
    a.source = head;
    for (std::size_t i = 0; i < f.series.size(); ++i) a.source += (i ? "; " : "") + f.series[i];
    a.fit.points = f.points;
    a.fit.median_abs_error = f.median_abs_error;
    a.fit.worst_abs_error = f.worst_abs_error;
    a.fit.rms_log_residual = f.rms_log_residual;
    a.fit.data = f.sources;
    c.arch_algorithms[f.arch][f.key] = a;
  }
}

FoldError errors_of(const std::vector<const CollectivePoint*>& points, const Calibration& c, const std::string& name) {
  FoldError e;
  e.fold = name;
  std::vector<double> small, large;
  for (const auto* p : points) {
    const double err = std::fabs(predict_time_s(*p, c) / p->m->time_s - 1);
    (p->m->bytes < kLargeMessageBytes ? small : large).push_back(err);
  }
  e.points = static_cast<int>(points.size());
  e.points_small = static_cast<int>(small.size());
  e.points_large = static_cast<int>(large.size());
  e.median_small = median(small);
  e.median_large = median(large);
  e.worst_small = small.empty() ? 0 : *std::max_element(small.begin(), small.end());
  e.worst_large = large.empty() ? 0 : *std::max_element(large.begin(), large.end());
  return e;
}

CrossValidation cross_validate(const std::vector<CollectivePoint>& points, const std::vector<bool>& trainable,
                               const Calibration& base, const std::string& by,
                               const std::function<std::string(const CollectivePoint&)>& fold) {
  CrossValidation cv;
  cv.by = by;
  std::vector<std::string> folds;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string f = fold(points[i]);
    if (trainable[i] && std::find(folds.begin(), folds.end(), f) == folds.end()) folds.push_back(f);
  }
  std::sort(folds.begin(), folds.end());
  std::vector<const CollectivePoint*> all_held;
  std::vector<Calibration> fold_cals;
  std::vector<std::pair<const CollectivePoint*, int>> held_with_fold;
  for (std::size_t k = 0; k < folds.size(); ++k) {
    // Held out: the fold's records that could have been fitted to (records of low confidence, or that the
    // rules keep out of fits, are never predicted here: racksim validate lists them with their errors).
    std::vector<const CollectivePoint*> train, held;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!trainable[i]) continue;
      if (fold(points[i]) == folds[k]) held.push_back(&points[i]);
      else train.push_back(&points[i]);
    }
    Calibration c = links_only(base);
    apply_collective_fits(c, fit_collective_groups(train));
    cv.folds.push_back(errors_of(held, c, folds[k]));
    fold_cals.push_back(c);
    for (const auto* p : held) held_with_fold.emplace_back(p, static_cast<int>(k));
  }
  // Pool every held-out prediction (each under its own fold's calibration).
  std::vector<double> small, large;
  for (const auto& [p, k] : held_with_fold) {
    const double err = std::fabs(predict_time_s(*p, fold_cals[k]) / p->m->time_s - 1);
    (p->m->bytes < kLargeMessageBytes ? small : large).push_back(err);
  }
  cv.all.fold = "all folds";
  cv.all.points = static_cast<int>(small.size() + large.size());
  cv.all.points_small = static_cast<int>(small.size());
  cv.all.points_large = static_cast<int>(large.size());
  cv.all.median_small = median(small);
  cv.all.median_large = median(large);
  cv.all.worst_small = small.empty() ? 0 : *std::max_element(small.begin(), small.end());
  cv.all.worst_large = large.empty() ? 0 : *std::max_element(large.begin(), large.end());
  return cv;
}

}  // namespace racksim::calibration

#include <nlohmann/json.hpp>

namespace racksim::calibration {

bool is_training_measurement(const Measurement& m, bool kind_has_measured_data, std::string* why);

namespace {
std::string pct1(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}
double r6(double v) { return std::round(v * 1e6) / 1e6; }
}  // namespace

std::vector<CrossValidation> cross_validate_collectives(const std::vector<Measurement>& data, const Predictor& predictor,
                                                        const Calibration& calibration) {
  const std::vector<CollectivePoint> points = collective_points(data, predictor, calibration);
  std::vector<bool> trainable;
  for (const auto& p : points) trainable.push_back(is_training_measurement(*p.m, false, nullptr));
  return {cross_validate(points, trainable, calibration, "system", [](const CollectivePoint& p) { return "system " + p.m->system; }),
          cross_validate(points, trainable, calibration, "GPU count",
                         [](const CollectivePoint& p) { return std::to_string(p.m->gpus.size()) + " GPUs"; })};
}

std::string cross_validation_text(const std::vector<CrossValidation>& cvs) {
  std::string out = "collectives predicted by a fit that never saw them (|predicted/measured - 1|):\n";
  char line[256];
  for (const auto& cv : cvs) {
    out += "  leave one " + cv.by + " out:\n";
    std::snprintf(line, sizeof line, "    %-22s %6s  %16s %8s  %16s %8s\n", "held out", "points", "<64MiB median", "worst",
                  ">=64MiB median", "worst");
    out += line;
    auto row = [&](const FoldError& e) {
      std::snprintf(line, sizeof line, "    %-22s %6d  %16s %8s  %16s %8s\n", e.fold.c_str(), e.points,
                    e.points_small ? pct1(e.median_small).c_str() : "-", e.points_small ? pct1(e.worst_small).c_str() : "-",
                    e.points_large ? pct1(e.median_large).c_str() : "-", e.points_large ? pct1(e.worst_large).c_str() : "-");
      out += line;
    };
    for (const auto& f : cv.folds) row(f);
    row(cv.all);
  }
  return out;
}

std::string cross_validation_json(const std::vector<CrossValidation>& cvs) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  auto fold_json = [](const FoldError& e) {
    return nlohmann::ordered_json{{"fold", e.fold},
                                  {"points", e.points},
                                  {"points_below_64MiB", e.points_small},
                                  {"median_abs_error_below_64MiB", r6(e.median_small)},
                                  {"worst_abs_error_below_64MiB", r6(e.worst_small)},
                                  {"points_at_or_above_64MiB", e.points_large},
                                  {"median_abs_error_at_or_above_64MiB", r6(e.median_large)},
                                  {"worst_abs_error_at_or_above_64MiB", r6(e.worst_large)}};
  };
  for (const auto& cv : cvs) {
    nlohmann::ordered_json folds = nlohmann::ordered_json::array();
    for (const auto& f : cv.folds) folds.push_back(fold_json(f));
    a.push_back({{"leave_one_out_by", cv.by}, {"folds", folds}, {"all", fold_json(cv.all)}});
  }
  return a.dump(2) + "\n";
}

}  // namespace racksim::calibration
