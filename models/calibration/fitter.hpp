#pragma once
// `racksim calibrate fit`: from measurements to a Calibration (sim/calib/calibration.hpp), each
// parameter with the data it came from and the residual, and the error on data it was not fitted to.
//
// Links (per LinkKind, from transfer measurements grouped by the kind of their route's bottleneck hop):
//     t - timer floor - nominal route latency = hops x extra_latency + bytes / (efficiency x nominal bottleneck)
// (hops: the route's hops of that kind; extra_latency is paid per hop wherever a calibration is applied)
// weighted linear least squares on relative error; bandwidth-only records constrain the efficiency only.
// Algorithms (per "op/algo", from collective measurements naming one algorithm): Levenberg-Marquardt on
// log(predicted / measured) through the collective model itself, with the link calibration just fitted,
// free parameters bandwidth_efficiency, launch_overhead_us, half_efficiency_bytes, step_overhead_us.
// A parameter the data cannot determine (|correlation| > 0.99 with another, or a standard error larger
// than its own value, or no effect) is fixed at its identity value and the fit repeated; the report
// says which and why (one GPU count makes step and launch overheads indistinguishable, an affine
// model makes half_efficiency_bytes a constant like launch). No parameter is fitted to one record.
//
// Training data: measurements of confidence "measured" (this repository's probes and logs) when a kind
// has any, else published records of confidence high or medium; records of confidence low, and
// collectives whose algorithm is "auto", are never fitted to (they are validation only).
// Held-out check: for every parameter set whose training data cover two or more racksim systems, each
// system in turn is left out, the fit repeated on the rest, and the left-out system predicted (fit Hopper
// NVLS on H100, predict H200); with one system but several machines (measured_on), machine by machine.
#include <string>
#include <vector>

#include "models/calibration/collective_fit.hpp"
#include "models/calibration/measurement.hpp"
#include "models/calibration/predictor.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim::calibration {

struct ParameterFit {
  std::string key;                    // "pcie" or "all_reduce/nvls"
  bool is_link = false;
  bool is_protocol = false;           // a protocol's network efficiency ("blackwell:LL128 (network)")
  std::vector<std::string> free_parameters;
  std::vector<std::string> fixed_parameters;  // "name = value: why"
  std::vector<std::pair<std::string, double>> values;      // every parameter of the entry, as fitted
  std::vector<std::pair<std::string, double>> std_errors;  // free parameters only
  std::vector<std::string> series;    // the measurement series it was fitted to
  std::vector<std::string> sources;   // their sources (deduplicated)
  int points = 0;
  double rms_log_residual = 0;        // sqrt(mean(log(pred/meas)^2)) over the training points
  double median_abs_error = 0, worst_abs_error = 0;  // |pred/meas - 1| over the training points
  std::vector<std::string> notes;
};

struct HeldOutResult {
  std::string key;
  std::string left_out;               // the system ("system hgx-h200") or machine (measured_on) predicted
  std::string trained_on;             // the machines fitted to, "; "-separated
  int points = 0;
  double median_abs_error = 0, worst_abs_error = 0;
  int points_small = 0, points_large = 0;  // below / at or above 64 MiB
  double median_abs_error_small = 0, median_abs_error_large = 0;
  std::string note;                   // e.g. why it could not be done
};

struct FitResult {
  Calibration calibration;
  std::vector<CollectivePoint> points;             // every collective measurement the model expresses
  std::vector<CrossValidation> cross_validation;   // leave-one-system-out, leave-one-GPU-count-out
  std::vector<ParameterFit> fits;
  std::vector<HeldOutResult> held_out;
  std::vector<std::string> ignored;   // measurements given but not fitted to, with the reason (one line per series)
};

struct FitOptions {
  std::string name = "fitted";
  std::string source;                 // the command line or script that produced it
  bool held_out = true;               // run the leave-one-machine-out checks
};

// True when `m` may be fitted to (the rule above); `why` says why not otherwise.
bool is_training_measurement(const Measurement& m, bool kind_has_measured_data, std::string* why = nullptr);

FitResult fit_calibration(const std::vector<Measurement>& data, const Predictor& predictor, const FitOptions& options);

// Fit report as Markdown (calibrate/fit-report.md) and as deterministic JSON.
std::string fit_report_markdown(const FitResult& result);
std::string fit_report_json(const FitResult& result);

}  // namespace racksim::calibration
