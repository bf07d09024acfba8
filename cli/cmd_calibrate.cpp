// racksim calibrate fit: fit a calibration (sim/calib/calibration.hpp) to probe data, nccl-tests logs and
// published records (models/calibration/fitter.hpp). calibrate/default.json is made by
// scripts/make-default-calibration.sh, which calls this command on committed data.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "models/calibration/collective_models.hpp"
#include "models/calibration/fitter.hpp"
#include "models/calibration/nccl_tests_output.hpp"
#include "models/calibration/probe_data.hpp"
#include "models/calibration/public_collectives.hpp"
#include "models/calibration/published_data.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/errors.hpp"

namespace racksim::cli {

namespace {
struct FitCliOptions {
  std::vector<std::string> probes, nccl_tests, public_files;
  std::string published = "default";
  std::string out, report, name = "fitted";
  bool no_held_out = false;
};

}  // namespace

static void add_calibrate_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("calibrate", "fit calibrations to measurements");
  cmd->require_subcommand(1);
  auto opts = std::make_shared<FitCliOptions>();
  auto* fit = cmd->add_subcommand("fit", "fit link and algorithm parameters (Eigen least squares) to probe data, "
                                         "nccl-tests logs and published records; writes a calibration JSON");
  fit->add_option("--probes", opts->probes,
                  "probe directory written by calibrate/run_probes.sh, optionally DIR=SYSTEM (repeatable)");
  fit->add_option("--nccl-tests", opts->nccl_tests,
                  "nccl-tests output file, optionally FILE=SYSTEM or FILE=SYSTEM/ALGORITHM (repeatable)");
  fit->add_option("--published", opts->published,
                  "published measurements JSON ('default': calibrate/data/published_measurements.json; 'none')");
  fit->add_option("--public", opts->public_files,
                  "public nccl-tests records JSON (repeatable; e.g. calibrate/data/public_collectives.json)");
  fit->add_option("--out", opts->out, "calibration JSON to write (default: standard output)");
  fit->add_option("--report", opts->report, "fit report to write as Markdown; the same as JSON next to it (.json)");
  fit->add_option("--name", opts->name, "calibration name echoed into every result");
  fit->add_flag("--no-held-out", opts->no_held_out, "skip the leave-one-machine-out checks");
  fit->callback([&global, opts] {
    using namespace racksim::calibration;
    std::string report_json;
    if (!opts->report.empty()) {
      const auto dot = opts->report.rfind('.');
      report_json = (dot == std::string::npos ? opts->report : opts->report.substr(0, dot)) + ".json";
      if (report_json == opts->out || opts->report == opts->out)
        throw InputError("--report", "", "'" + opts->report + "'",
                         "a report name that is not the --out file, nor its .json twin (e.g. fit-report.md)");
    }
    if (opts->name.find_first_not_of(" \t") == std::string::npos)
      throw InputError("--name", "", "'" + opts->name + "'", "a non-empty calibration name (it is echoed into every result)");
    // Every output is opened before the fit and committed after all are written: a bad --report path
    // leaves no calibration behind, and a failed fit leaves nothing.
    std::optional<AtomicFile> out_file, report_md, report_js;
    if (!opts->out.empty()) out_file.emplace(opts->out, "--out", true);
    if (!opts->report.empty()) {
      report_md.emplace(opts->report, "--report", true);
      report_js.emplace(report_json, "--report", true);
    }
    MeasurementSet data;
    std::string command = "racksim calibrate fit";
    if (opts->published != "none") {
      const std::string path = opts->published == "default" ? default_published_path() : opts->published;
      data.append(load_published_measurements(path));
      command += " --published " + opts->published;
    }
    for (const auto& p : opts->probes) {
      data.append(load_probe_directory(p));
      command += " --probes " + p;
    }
    for (const auto& f : opts->nccl_tests) {
      data.append(nccl_tests_measurements(f));
      command += " --nccl-tests " + f;
    }
    for (const auto& f : opts->public_files) {
      data.append(load_public_collectives(f));
      command += " --public " + f;
    }
    if (data.measurements.empty())
      throw InputError("--probes/--nccl-tests/--published", "", "no measurements", "at least one data source with records");
    const Predictor predictor(global.topology_dir, analytic_collective_model(), "analytic");
    FitOptions fo;
    fo.name = opts->name;
    fo.source = command + " (racksim's analytic collective model; models/calibration/fitter.hpp)";
    fo.held_out = !opts->no_held_out;
    const FitResult result = fit_calibration(data.measurements, predictor, fo);
    const std::string text = calibration_to_json_text(result.calibration);
    if (out_file) out_file->write(text);
    if (report_md) {
      report_md->write(fit_report_markdown(result));
      report_js->write(fit_report_json(result));
    }
    for (auto* f : {&out_file, &report_md, &report_js})
      if (*f) (*f)->commit();
    if (!out_file) std::cout << text;
    std::ostream& log = opts->out.empty() ? std::cerr : std::cout;
    for (const auto& f : result.fits) {
      std::string values;
      for (const auto& [n, v] : f.values) values += fmt::format(" {}={:.4g}", n, v);
      log << fmt::format("{:<22} {:>4} points, median |error| {:5.1f} %, worst {:5.1f} %:{}\n", f.key, f.points,
                         100 * f.median_abs_error, 100 * f.worst_abs_error, values);
    }
    for (const auto& h : result.held_out)
      log << fmt::format("held out {:<18} predict {} from {}: median |error| {:.1f} % over {} points (worst {:.1f} %)\n",
                         h.key, h.left_out, h.trained_on, 100 * h.median_abs_error, h.points, 100 * h.worst_abs_error);
    if (!result.cross_validation.empty()) log << cross_validation_text(result.cross_validation);
    if (!opts->out.empty()) log << "wrote " << opts->out << "\n";
  });
}

RACKSIM_REGISTER_COMMAND("calibrate", add_calibrate_command);

}  // namespace racksim::cli
