#pragma once
// `racksim validate`: predict every measurement twice, with a calibration and with the vendor peaks
// (calibration none), and report each error (predicted / measured - 1, on time) with summaries: median
// and worst |error| per system and size band, and per measured series below / at or above 64 MiB.
#include <string>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "models/calibration/predictor.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim::calibration {

struct ValidationRow {
  std::string id, series, kind, system;
  int racks = 1;
  std::string measured_on;
  std::string what;              // "all_reduce/nvls, 8 GPUs", "cpu0->gpu0 copy", "HBM read"
  double bytes = 0;
  bool bytes_assumed = false;
  double measured_time_s = 0;
  bool time_derived = false;
  double predicted_time_s = 0;   // with the calibration (as the source would report: + timer floor)
  double uncalibrated_time_s = 0;
  double error = 0, uncalibrated_error = 0;  // predicted / measured - 1
  double measured_GBps = 0, predicted_GBps = 0, uncalibrated_GBps = 0;  // busbw (collectives) or bytes / time
  std::string band;
  bool training = false;         // a record `racksim calibrate fit` fits to (fitter.hpp's rule)
  std::string confidence, source, note;
};

struct SummaryRow {
  std::string group;             // system id (by_system) or series (by_series)
  std::string band;              // a size band, or "all"
  int points = 0;
  double median_abs_error = 0, worst_abs_error = 0;
  double median_abs_error_uncalibrated = 0, worst_abs_error_uncalibrated = 0;
  std::string worst_id;
};

struct ValidationReport {
  std::string model;             // "analytic" | "engine"
  std::string calibration;       // name of the calibration
  std::string calibration_source;
  std::vector<ValidationRow> rows;
  std::vector<SkippedRecord> skipped;  // records no system expresses, and predictions that failed
  std::vector<SummaryRow> by_system;   // records the fits use (in-sample); bands "< 1 MiB", "1-64 MiB", ">= 64 MiB", "all"
  std::vector<SummaryRow> by_series;   // bands "< 64 MiB", ">= 64 MiB", "all"
  // Collective records no fit ever uses (validation only: low confidence, a placement or NICs the source
  // leaves open), per system and band "< 64 MiB", ">= 64 MiB": predicted by the shipped calibration, so
  // they are held out as much as leave-one-out's folds are.
  std::vector<SummaryRow> never_fitted;
  // The other records no fit uses (memory copies, point-to-point transfers), per system and band as never_fitted.
  std::vector<SummaryRow> other_unfitted;
};

ValidationReport validate_measurements(const MeasurementSet& data, const Predictor& predictor,
                                       const Calibration& calibrated);

// Deterministic JSON (read by scripts/plot_validation.py and tests/validation), Markdown for
// out/validation.md, and the console table.
std::string validation_json(const ValidationReport& report);
std::string validation_markdown(const ValidationReport& report);
std::string validation_text(const ValidationReport& report);

}  // namespace racksim::calibration
