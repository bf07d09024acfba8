#include "models/calibration/validation.hpp"
#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/calibration/collective_fit.hpp"
#include "models/calibration/fitter.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::calibration {

namespace {

using racksim::median;
double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return std::isfinite(v) ? v : 0;
  const double mag = std::ceil(std::log10(std::fabs(v)));
  const double scale = std::pow(10.0, 6 - mag);
  return std::round(v * scale) / scale;
}
std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * x);
  return b;
}
std::string apct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}
std::string human_bytes(double b) {
  const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (b >= 1024 && i < 4) {
    b /= 1024;
    ++i;
  }
  char s[32];
  std::snprintf(s, sizeof s, b == std::floor(b) ? "%.0f %s" : "%.3g %s", b, u[i]);
  return s;
}
std::string human_time(double s) {
  char b[32];
  if (s < 1e-3) std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  else if (s < 1) std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}

double bandwidth_GBps(const Measurement& m, double t) {
  if (!(t > 0)) return 0;
  if (m.kind == MeasurementKind::collective) return busbw_GBps(m, t);
  return m.bytes / t / units::kGB;
}

void summarise(const std::vector<ValidationRow>& rows, const std::string& group,
               const std::vector<const ValidationRow*>& members, const std::string& band, std::vector<SummaryRow>& out) {
  (void)rows;
  if (members.empty()) return;
  SummaryRow s;
  s.group = group;
  s.band = band;
  s.points = static_cast<int>(members.size());
  std::vector<double> a, u;
  for (const ValidationRow* r : members) {
    a.push_back(std::fabs(r->error));
    u.push_back(std::fabs(r->uncalibrated_error));
    if (std::fabs(r->error) >= s.worst_abs_error) {
      s.worst_abs_error = std::fabs(r->error);
      s.worst_id = r->id;
    }
    s.worst_abs_error_uncalibrated = std::max(s.worst_abs_error_uncalibrated, std::fabs(r->uncalibrated_error));
  }
  s.median_abs_error = median(a);
  s.median_abs_error_uncalibrated = median(u);
  out.push_back(std::move(s));
}

// A summary table, per system and size band, calibrated beside vendor peak (validate's text).
std::string summary_text(const std::string& title, const std::vector<SummaryRow>& rows) {
  std::string o = title + ": median |error| (worst), calibrated vs vendor peak\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-14s %-10s %6s %22s %22s\n", "system", "band", "points", "calibrated", "vendor peak");
  o += line;
  for (const auto& s : rows) {
    std::snprintf(line, sizeof line, "%-14s %-10s %6d %10s (%9s) %10s (%9s)\n", s.group.c_str(), s.band.c_str(), s.points,
                  apct(s.median_abs_error).c_str(), apct(s.worst_abs_error).c_str(), apct(s.median_abs_error_uncalibrated).c_str(),
                  apct(s.worst_abs_error_uncalibrated).c_str());
    o += line;
  }
  return o;
}

// The same as a Markdown table (validation.md).
std::string summary_markdown(const std::vector<SummaryRow>& rows) {
  std::ostringstream o;
  o << "| system | size band | points | median abs error | worst abs error (record) | median, vendor peak | worst, vendor peak |\n";
  o << "|---|---|---|---|---|---|---|\n";
  for (const auto& s : rows)
    o << "| " << s.group << " | " << s.band << " | " << s.points << " | " << apct(s.median_abs_error) << " | "
      << apct(s.worst_abs_error) << " (" << s.worst_id << ") | " << apct(s.median_abs_error_uncalibrated) << " | "
      << apct(s.worst_abs_error_uncalibrated) << " |\n";
  return o.str();
}

// The measurement series the calibration's link and memory fits name (FitSummary::data), or nothing where it
// records none (a hand-written file, 'none'): then fitter.hpp's rule alone says which records are training data.
std::set<std::string> fitted_series(const Calibration& cal) {
  std::set<std::string> out;
  auto add = [&](const LinkCalibration& l) { out.insert(l.fit.data.begin(), l.fit.data.end()); };
  for (const auto& [kind, l] : cal.links) add(l);
  for (const auto& [arch, links] : cal.arch_links)
    for (const auto& [kind, l] : links) add(l);
  for (const auto& [kind, l] : cal.memory) add(l);
  return out;
}

}  // namespace

ValidationReport validate_measurements(const MeasurementSet& data, const Predictor& predictor, const Calibration& cal) {
  ValidationReport rep;
  rep.model = predictor.model_name();
  rep.calibration = cal.name;
  rep.calibration_source = cal.source;
  rep.skipped = data.skipped;
  const Calibration none = Calibration::none();

  // A link or memory record is training data where the rule says so and, if the calibration names the series
  // its fits used, it is one of them: a probe run left out of the fit (calibrate/data/h100-sxm-1gpu-2026-12-07)
  // is held out, not "fit".
  const std::set<std::string> cal_series = fitted_series(cal);
  // Which link kinds have measurements of our own (decides which transfer records are training data).
  std::set<LinkKind> measured_kinds;
  for (const auto& m : data.measurements) {
    if (m.kind != MeasurementKind::transfer || m.confidence != "measured") continue;
    try {
      measured_kinds.insert(predictor.transfer_route(m).bottleneck_kind);
    } catch (const std::exception&) {
    }
  }
  for (const auto& m : data.measurements) {
    ValidationRow r;
    r.id = m.id;
    r.series = m.series;
    r.kind = to_string(m.kind);
    r.system = m.system;
    r.racks = m.racks;
    r.measured_on = m.measured_on;
    if (m.kind == MeasurementKind::collective)
      r.what = std::string(to_string(m.op)) + "/" + m.algorithm + ", " + std::to_string(m.gpus.size()) + " GPUs";
    else if (m.kind == MeasurementKind::transfer)
      r.what = m.src + "->" + m.dst + " " + m.engine;
    else
      r.what = "HBM " + m.memory_op;
    r.bytes = m.bytes;
    r.bytes_assumed = m.bytes_assumed;
    r.measured_time_s = m.time_s;
    r.time_derived = m.time_derived;
    r.band = size_band(m.bytes);
    r.confidence = m.confidence;
    r.source = m.source;
    r.note = m.note;
    bool measured_kind = false;
    try {
      if (m.kind == MeasurementKind::transfer) measured_kind = measured_kinds.count(predictor.transfer_route(m).bottleneck_kind) > 0;
      r.predicted_time_s = predictor.reported_time_s(m, cal);
      r.uncalibrated_time_s = predictor.reported_time_s(m, none);
    } catch (const std::exception& e) {
      rep.skipped.push_back({m.id, m.series + " (" + r.what + ")", std::string("prediction failed: ") + e.what()});
      continue;
    }
    r.training = m.kind == MeasurementKind::collective ? collective_point_fitted(m, predictor, cal)
                                                       : is_training_measurement(m, measured_kind) &&
                                                             (cal_series.empty() || cal_series.count(m.series) > 0);
    r.error = r.predicted_time_s / m.time_s - 1;
    r.uncalibrated_error = r.uncalibrated_time_s / m.time_s - 1;
    r.measured_GBps = m.reported_GBps > 0 ? m.reported_GBps : bandwidth_GBps(m, m.time_s);
    r.predicted_GBps = bandwidth_GBps(m, r.predicted_time_s);
    r.uncalibrated_GBps = bandwidth_GBps(m, r.uncalibrated_time_s);
    rep.rows.push_back(std::move(r));
  }

  // Summaries, groups in first-appearance order (deterministic: input order).
  std::vector<std::string> systems, series;
  for (const auto& r : rep.rows) {
    if (std::find(systems.begin(), systems.end(), r.system) == systems.end()) systems.push_back(r.system);
    if (std::find(series.begin(), series.end(), r.series) == series.end()) series.push_back(r.series);
  }
  // The records the fits use, alone: a median over them beside held-out records would be neither in-sample nor
  // held-out (HGX B200's below 1 MiB read 49 % with Together's sendrecv and GKE's anomalous run in it, 8 % without).
  for (const auto& sys : systems) {
    for (const std::string band : {"< 1 MiB", "1-64 MiB", ">= 64 MiB", "all"}) {
      std::vector<const ValidationRow*> members;
      for (const auto& r : rep.rows)
        if (r.system == sys && r.training && (band == "all" || r.band == band)) members.push_back(&r);
      summarise(rep.rows, sys, members, band, rep.by_system);
    }
  }
  for (const auto& s : series) {
    for (const std::string band : {"< 64 MiB", ">= 64 MiB", "all"}) {
      std::vector<const ValidationRow*> members;
      for (const auto& r : rep.rows) {
        if (r.series != s) continue;
        const bool large = r.bytes >= kLargeMessageBytes;
        if (band == "all" || (band == ">= 64 MiB") == large) members.push_back(&r);
      }
      summarise(rep.rows, s, members, band, rep.by_series);
    }
  }
  for (const auto& sys : systems) {
    for (const std::string band : {"< 64 MiB", ">= 64 MiB"}) {
      std::vector<const ValidationRow*> members;
      for (const auto& r : rep.rows)
        if (r.system == sys && r.kind == "collective" && !r.training && (r.bytes >= kLargeMessageBytes) == (band == ">= 64 MiB"))
          members.push_back(&r);
      summarise(rep.rows, sys, members, band, rep.never_fitted);
    }
  }
  for (const auto& sys : systems) {
    for (const std::string band : {"< 64 MiB", ">= 64 MiB"}) {
      std::vector<const ValidationRow*> members;
      for (const auto& r : rep.rows)
        if (r.system == sys && r.kind != "collective" && !r.training && (r.bytes >= kLargeMessageBytes) == (band == ">= 64 MiB"))
          members.push_back(&r);
      summarise(rep.rows, sys, members, band, rep.other_unfitted);
    }
  }
  return rep;
}

std::string validation_json(const ValidationReport& rep) {
  nlohmann::json doc;
  doc["model"] = rep.model;
  doc["calibration"] = rep.calibration;
  doc["calibration_source"] = rep.calibration_source;
  doc["error_definition"] = "predicted time / measured time - 1 (uncalibrated: calibration none, the vendor peaks)";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : rep.rows)
    rows.push_back({{"id", r.id},
                    {"series", r.series},
                    {"kind", r.kind},
                    {"system", r.system},
                    {"racks", r.racks},
                    {"measured_on", r.measured_on},
                    {"what", r.what},
                    {"bytes", r.bytes},
                    {"bytes_assumed", r.bytes_assumed},
                    {"band", r.band},
                    {"measured_time_us", round6(units::s_to_us(r.measured_time_s))},
                    {"time_derived", r.time_derived},
                    {"predicted_time_us", round6(units::s_to_us(r.predicted_time_s))},
                    {"uncalibrated_time_us", round6(units::s_to_us(r.uncalibrated_time_s))},
                    {"error", round6(r.error)},
                    {"uncalibrated_error", round6(r.uncalibrated_error)},
                    {"measured_GBps", round6(r.measured_GBps)},
                    {"predicted_GBps", round6(r.predicted_GBps)},
                    {"uncalibrated_GBps", round6(r.uncalibrated_GBps)},
                    {"training", r.training},
                    {"confidence", r.confidence},
                    {"source", r.source},
                    {"note", r.note}});
  doc["rows"] = rows;
  auto summary = [](const std::vector<SummaryRow>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& s : v)
      a.push_back({{"group", s.group},
                   {"band", s.band},
                   {"points", s.points},
                   {"median_abs_error", round6(s.median_abs_error)},
                   {"worst_abs_error", round6(s.worst_abs_error)},
                   {"worst_id", s.worst_id},
                   {"median_abs_error_uncalibrated", round6(s.median_abs_error_uncalibrated)},
                   {"worst_abs_error_uncalibrated", round6(s.worst_abs_error_uncalibrated)}});
    return a;
  };
  doc["by_system"] = summary(rep.by_system);
  doc["by_series"] = summary(rep.by_series);
  doc["never_fitted"] = summary(rep.never_fitted);
  doc["other_unfitted"] = summary(rep.other_unfitted);
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : rep.skipped) skipped.push_back({{"id", s.id}, {"what", s.what}, {"reason", s.reason}});
  doc["skipped"] = skipped;
  return dump_json(doc, 1) + "\n";
}

std::string validation_text(const ValidationReport& rep) {
  std::ostringstream o;
  char line[512];
  o << "racksim validate: model " << rep.model << ", calibration " << rep.calibration
    << " (error = predicted / measured - 1; 'peak' = calibration none)\n";
  std::snprintf(line, sizeof line, "%-14s %-32s %10s %12s %12s %8s %12s %8s %-4s %s\n", "system", "what", "size",
                "measured", "predicted", "error", "peak", "error", "fit", "record");
  o << line;
  for (const auto& r : rep.rows) {
    const std::string sys = r.system + (r.racks > 1 ? " x" + std::to_string(r.racks) : "");
    std::snprintf(line, sizeof line, "%-14s %-32s %10s %12s %12s %8s %12s %8s %-4s %s\n", sys.c_str(),
                  r.what.substr(0, 32).c_str(), (human_bytes(r.bytes) + (r.bytes_assumed ? "*" : "")).c_str(),
                  human_time(r.measured_time_s).c_str(), human_time(r.predicted_time_s).c_str(), pct(r.error).c_str(),
                  human_time(r.uncalibrated_time_s).c_str(), pct(r.uncalibrated_error).c_str(), r.training ? "fit" : "",
                  r.id.c_str());
    o << line;
  }
  o << "(* size assumed: the record gives a bandwidth only; 'fit': a record the calibration fit uses)\n\n";
  o << summary_text("Records the fits use (in-sample), by system and size band", rep.by_system);
  if (!rep.never_fitted.empty())
    o << "\n" << summary_text("Collective records no fit uses (validation only), by system", rep.never_fitted);
  if (!rep.other_unfitted.empty())
    o << "\n" << summary_text("Other records no fit uses (memory copies, transfers), by system", rep.other_unfitted);
  o << "\n" << rep.skipped.size() << " records not predicted (see validation.md for the reasons)\n";
  return o.str();
}

std::string validation_markdown(const ValidationReport& rep) {
  std::ostringstream o;
  o << "# racksim validation\n\n";
  o << "Model: **" << rep.model << "**. Calibration: **" << rep.calibration << "** (" << rep.calibration_source
    << "). Uncalibrated = calibration `none` (vendor peaks, nominal latencies).\n\n";
  o << "Error = predicted time / measured time - 1. A record that gives only a bandwidth is compared at the size it "
       "names, or at a stated assumed size (marked \\*). `fit` marks records the calibration fit uses; every other "
       "row is held out.\n\n";
  o << "## Records the fits use (in-sample), by system and size band\n\n";
  o << summary_markdown(rep.by_system);
  if (!rep.never_fitted.empty()) o << "\n## Collective records no fit uses (validation only)\n\n" << summary_markdown(rep.never_fitted);
  if (!rep.other_unfitted.empty())
    o << "\n## Other records no fit uses (memory copies, transfers)\n\n" << summary_markdown(rep.other_unfitted);
  o << "\n## Summary by measured series\n\n";
  o << "| series | size band | points | median abs error | worst | median, vendor peak | worst, vendor peak |\n";
  o << "|---|---|---|---|---|---|---|\n";
  for (const auto& s : rep.by_series)
    o << "| " << s.group << " | " << s.band << " | " << s.points << " | " << apct(s.median_abs_error) << " | "
      << apct(s.worst_abs_error) << " | " << apct(s.median_abs_error_uncalibrated) << " | "
      << apct(s.worst_abs_error_uncalibrated) << " |\n";
  o << "\n## Every record\n\n";
  o << "| id | system | what | size | measured | predicted | error | vendor peak | error | measured GB/s | predicted GB/s | role |\n";
  o << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  char b[64];
  for (const auto& r : rep.rows) {
    o << "| " << r.id << " | " << r.system << (r.racks > 1 ? " x" + std::to_string(r.racks) : "") << " | " << r.what
      << " | " << human_bytes(r.bytes) << (r.bytes_assumed ? "\\*" : "") << " | " << human_time(r.measured_time_s)
      << " | " << human_time(r.predicted_time_s) << " | " << pct(r.error) << " | " << human_time(r.uncalibrated_time_s)
      << " | " << pct(r.uncalibrated_error) << " | ";
    std::snprintf(b, sizeof b, "%.4g | %.4g", r.measured_GBps, r.predicted_GBps);
    o << b << " | " << (r.training ? "fit" : "held out") << " |\n";
  }
  o << "\n## Not predicted\n\n";
  o << "| id | record | reason |\n|---|---|---|\n";
  for (const auto& s : rep.skipped) o << "| " << s.id << " | " << s.what << " | " << s.reason << " |\n";
  o << "\nSources of every record: `validation.json` (field `source`).\n";
  return o.str();
}

}  // namespace racksim::calibration
