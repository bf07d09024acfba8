// racksim validate: predict every measured record (published, probes, nccl-tests logs) with a
// calibration and with the vendor peaks; print the per-record errors and a summary, write
// <out-dir>/validation.md and validation.json (scripts/plot_validation.py draws the PNG from the JSON), and with
// the cross-validation cross_validation.json and heldout_errors.json (calibrate/heldout_errors.json's source).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "models/calibration/collective_fit.hpp"
#include "models/calibration/collective_models.hpp"
#include "models/calibration/heldout_table.hpp"
#include "models/calibration/nccl_tests_output.hpp"
#include "models/calibration/probe_data.hpp"
#include "models/calibration/public_collectives.hpp"
#include "models/calibration/published_data.hpp"
#include "models/calibration/validation.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/errors.hpp"

namespace racksim::cli {

namespace {
struct ValidateOptions {
  std::vector<std::string> data, probes, nccl_tests, public_files;
  bool cross_validate = true;
  std::string calibration = "default", out_dir = "out", model = "analytic", format = "text";
  bool no_probes = false;
};

// Every calibrate/data/<machine>-<date>/ directory holding probe JSON lines, sorted.
std::vector<std::string> shipped_probe_dirs() {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(racksim::calibration::default_published_path()).parent_path();
  std::vector<std::string> dirs;
  if (!fs::is_directory(data)) return dirs;
  for (const auto& e : fs::directory_iterator(data)) {
    if (!e.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(e.path()))
      if (f.path().extension() == ".jsonl") {
        dirs.push_back(e.path().string());
        break;
      }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}
}  // namespace

static void add_validate_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate", "predict measured records (published, probes, nccl-tests logs) with and "
                                             "without calibration; print the errors, write validation.md/.json");
  cmd->add_option("--data", opts->data,
                  "published-measurements JSON (repeatable; default: calibrate/data/published_measurements.json; "
                  "'none' for no published file, and then no default --public file either)");
  cmd->add_option("--probes", opts->probes,
                  "probe directory, optionally DIR=SYSTEM (repeatable; default: every calibrate/data/*/ with .jsonl)");
  cmd->add_flag("--no-probes", opts->no_probes, "do not read the shipped probe directories");
  cmd->add_option("--public", opts->public_files,
                  "public nccl-tests records JSON (repeatable; default: calibrate/data/public_collectives.json; 'none')");
  cmd->add_flag("!--no-cross-validation", opts->cross_validate,
                "skip the leave-one-system-out and leave-one-GPU-count-out refits of the collective model");
  cmd->add_option("--nccl-tests", opts->nccl_tests, "nccl-tests output, optionally FILE=SYSTEM[/ALGORITHM] (repeatable)");
  cmd->add_option("--calibration", opts->calibration, "calibration file, 'default' or 'none'");
  cmd->add_option("--out-dir", opts->out_dir, "directory for validation.md and validation.json");
  cmd->add_option("--model", opts->model, "collective model: analytic (fast) or engine (discrete-event)")
      ->check(CLI::IsMember({"analytic", "engine"}));
  add_format_option(*cmd, opts->format, "text", {"text", "json"});
  cmd->callback([&global, opts] {
    using namespace racksim::calibration;
    if (opts->out_dir.empty()) throw InputError("--out-dir", "", "'' (empty)", "a directory for validation.md and validation.json");
    // Opened before the work (a bad --out-dir fails at once), committed when both are written.
    AtomicFile json_file(opts->out_dir + "/validation.json", "--out-dir", true);
    AtomicFile md_file(opts->out_dir + "/validation.md", "--out-dir", true);
    MeasurementSet data;
    std::vector<std::string> published = opts->data;
    if (published.empty()) published.push_back(default_published_path());
    for (const auto& d : published)
      if (d != "none") data.append(load_measurement_records(d));
    std::vector<std::string> probes = opts->probes;
    if (probes.empty() && !opts->no_probes) probes = shipped_probe_dirs();
    for (const auto& p : probes) data.append(load_probe_directory(p));
    for (const auto& f : opts->nccl_tests) data.append(nccl_tests_measurements(f));
    std::vector<std::string> public_files = opts->public_files;
    // --data given (a file or 'none'): the caller chose the published data; the shipped public records
    // come in only by default or through --public.
    if (public_files.empty() && opts->data.empty() && std::filesystem::exists(default_public_collectives_path()))
      public_files.push_back(default_public_collectives_path());
    for (const auto& f : public_files)
      if (f != "none") data.append(load_measurement_records(f));
    const Calibration cal = load_calibration(opts->calibration);
    const Predictor predictor(global.topology_dir,
                              opts->model == "engine" ? engine_collective_model() : analytic_collective_model(),
                              opts->model);
    const ValidationReport report = validate_measurements(data, predictor, cal);
    const std::string json = validation_json(report);
    std::vector<CrossValidation> cvs;
    std::optional<AtomicFile> cv_file, heldout_file;
    if (opts->cross_validate && opts->model == "analytic") {
      cv_file.emplace(opts->out_dir + "/cross_validation.json", "--out-dir", true);
      heldout_file.emplace(opts->out_dir + "/heldout_errors.json", "--out-dir", true);
      cvs = cross_validate_collectives(data.measurements, predictor, cal);
      cv_file->write(cross_validation_json(cvs));
      // The leave-one-system-out errors per class of collective: calibrate/heldout_errors.json is this
      // file for the shipped data and calibration (sim/calib/heldout_errors.hpp).
      for (const auto& cv : cvs)
        if (cv.by == "system") heldout_file->write(heldout_table_to_json_text(heldout_table_of(cv)));
    }
    json_file.write(json);
    md_file.write(validation_markdown(report));
    json_file.commit();
    md_file.commit();
    if (cv_file) cv_file->commit();
    if (heldout_file) heldout_file->commit();
    if (opts->format == "json") {
      std::cout << json;
    } else {
      std::cout << validation_text(report);
      if (!cvs.empty()) std::cout << cross_validation_text(cvs);
      std::cout << "wrote " << opts->out_dir << "/validation.md and " << opts->out_dir
                << "/validation.json (plot: /usr/bin/python3 scripts/plot_validation.py " << opts->out_dir
                << "/validation.json)\n";
    }
  });
}

RACKSIM_REGISTER_COMMAND("validate", add_validate_command);

}  // namespace racksim::cli
