// Fit report writers (Markdown and JSON) for fitter.hpp.
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/calibration/fitter.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::calibration {

namespace {
std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", 100 * x);
  return b;
}
std::string num(double x, int digits = 4) {
  if (!std::isfinite(x)) return "n/a";
  char b[48];
  std::snprintf(b, sizeof b, "%.*g", digits, x);
  return b;
}
// Six significant digits: readable, and stable across platforms for byte-identical output.
double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return std::isfinite(v) ? v : 0;
  const double mag = std::ceil(std::log10(std::fabs(v)));
  const double scale = std::pow(10.0, 6 - mag);
  return std::round(v * scale) / scale;
}
}  // namespace

std::string fit_report_markdown(const FitResult& r) {
  std::ostringstream o;
  o << "# Calibration fit: " << r.calibration.name << "\n\n";
  o << "Produced by: " << r.calibration.source << "\n\n";
  o << "## Parameters\n\n";
  o << "| entry | parameter | value | std. error | points | median abs error | worst | rms log residual |\n";
  o << "|---|---|---|---|---|---|---|---|\n";
  for (const auto& f : r.fits) {
    for (const auto& [name, value] : f.values) {
      // "fixed": the data cannot determine it (fixed_parameters says why); "n/a": fitted, no standard error.
      bool fixed = false;
      for (const auto& x : f.fixed_parameters) fixed = fixed || x.rfind(name + " ", 0) == 0 || x.rfind(name + "=", 0) == 0;
      std::string se = fixed ? "fixed" : "n/a";
      for (const auto& [n2, s] : f.std_errors)
        if (n2 == name) se = num(s, 3);
      o << "| " << f.key << " | " << name << " | " << num(value, 5) << " | " << se << " | " << f.points << " | "
        << pct(f.median_abs_error) << " | " << pct(f.worst_abs_error) << " | " << num(f.rms_log_residual, 3) << " |\n";
    }
  }
  o << "\n## Data and notes per entry\n\n";
  for (const auto& f : r.fits) {
    o << "### " << f.key << (f.is_link ? " (link kind)" : f.is_protocol ? " (protocol)" : " (algorithm)") << "\n\n";
    o << "* fitted to " << f.points << " points:";
    for (const auto& s : f.series) o << "\n  * " << s;
    o << "\n* sources:";
    for (const auto& s : f.sources) o << "\n  * " << s;
    o << "\n";
    for (const auto& s : f.fixed_parameters) o << "* fixed " << s << "\n";
    for (const auto& s : f.notes) o << "* " << s << "\n";
    o << "\n";
  }
  o << "## Held-out checks (fit without one system, or one machine, and predict it)\n\n";
  if (r.held_out.empty()) o << "None: no parameter set had training data from two machines.\n";
  else {
    o << "| entry | predicted machine | fitted on | points | median abs error | worst | < 64 MiB median (n) | >= 64 MiB median (n) | note |\n";
    o << "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& h : r.held_out)
      o << "| " << h.key << " | " << h.left_out << " | " << h.trained_on << " | " << h.points << " | "
        << pct(h.median_abs_error) << " | " << pct(h.worst_abs_error) << " | "
        << (h.points_small ? pct(h.median_abs_error_small) : std::string("-")) << " (" << h.points_small << ") | "
        << (h.points_large ? pct(h.median_abs_error_large) : std::string("-")) << " (" << h.points_large << ") | "
        << h.note << " |\n";
  }
  o << "\n## Collectives on data the fit never saw\n\n";
  o << "Each fold's points are predicted by a calibration fitted without them (links kept; per architecture and "
       "algorithm kappa and launch refitted). |predicted / measured - 1|, split at 64 MiB.\n\n";
  for (const auto& cv : r.cross_validation) {
    o << "### Leave one " << cv.by << " out\n\n";
    o << "| held out | points | < 64 MiB median | worst | >= 64 MiB median | worst |\n|---|---|---|---|---|---|\n";
    auto row = [&](const FoldError& e) {
      o << "| " << e.fold << " | " << e.points << " | " << (e.points_small ? pct(e.median_small) : std::string("-")) << " | "
        << (e.points_small ? pct(e.worst_small) : std::string("-")) << " | " << (e.points_large ? pct(e.median_large) : std::string("-"))
        << " | " << (e.points_large ? pct(e.worst_large) : std::string("-")) << " |\n";
    };
    for (const auto& f : cv.folds) row(f);
    row(cv.all);
    o << "\n";
  }
  o << "\n## Given but not fitted to\n\n";
  for (const auto& s : r.ignored) o << "* " << s << "\n";
  return o.str();
}

std::string fit_report_json(const FitResult& r) {
  nlohmann::json doc;
  doc["calibration"] = r.calibration.name;
  doc["produced_by"] = r.calibration.source;
  nlohmann::json fits = nlohmann::json::array();
  for (const auto& f : r.fits) {
    nlohmann::json j;
    j["key"] = f.key;
    j["kind"] = f.is_link ? "link" : f.is_protocol ? "protocol" : "algorithm";
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [n, v] : f.values) values[n] = round6(v);
    j["values"] = values;
    nlohmann::json se = nlohmann::json::object();
    for (const auto& [n, v] : f.std_errors) se[n] = std::isfinite(v) ? nlohmann::json(round6(v)) : nlohmann::json(nullptr);
    j["std_errors"] = se;
    j["free_parameters"] = f.free_parameters;
    j["fixed_parameters"] = f.fixed_parameters;
    j["series"] = f.series;
    j["sources"] = f.sources;
    j["points"] = f.points;
    j["median_abs_error"] = round6(f.median_abs_error);
    j["worst_abs_error"] = round6(f.worst_abs_error);
    j["rms_log_residual"] = round6(f.rms_log_residual);
    j["notes"] = f.notes;
    fits.push_back(j);
  }
  doc["fits"] = fits;
  nlohmann::json held = nlohmann::json::array();
  for (const auto& h : r.held_out)
    held.push_back({{"key", h.key},
                    {"left_out", h.left_out},
                    {"trained_on", h.trained_on},
                    {"points", h.points},
                    {"median_abs_error", round6(h.median_abs_error)},
                    {"worst_abs_error", round6(h.worst_abs_error)},
                    {"points_below_64MiB", h.points_small},
                    {"median_abs_error_below_64MiB", round6(h.median_abs_error_small)},
                    {"points_at_or_above_64MiB", h.points_large},
                    {"median_abs_error_at_or_above_64MiB", round6(h.median_abs_error_large)},
                    {"note", h.note}});
  doc["held_out"] = held;
  nlohmann::json cvs = nlohmann::json::array();
  auto fold_json = [](const FoldError& e) {
    return nlohmann::json{{"fold", e.fold}, {"points", e.points}, {"points_below_64MiB", e.points_small},
                          {"median_abs_error_below_64MiB", round6(e.median_small)}, {"worst_abs_error_below_64MiB", round6(e.worst_small)},
                          {"points_at_or_above_64MiB", e.points_large}, {"median_abs_error_at_or_above_64MiB", round6(e.median_large)},
                          {"worst_abs_error_at_or_above_64MiB", round6(e.worst_large)}};
  };
  for (const auto& cv : r.cross_validation) {
    nlohmann::json folds = nlohmann::json::array();
    for (const auto& f : cv.folds) folds.push_back(fold_json(f));
    cvs.push_back({{"leave_one_out_by", cv.by}, {"folds", folds}, {"all", fold_json(cv.all)}});
  }
  doc["cross_validation"] = cvs;
  doc["ignored"] = r.ignored;
  return dump_json(doc, 2) + "\n";
}

}  // namespace racksim::calibration
