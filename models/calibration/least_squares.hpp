#pragma once
// Least squares for the calibration fit (Eigen stays in the .cpp):
//  * weighted linear least squares (a column-pivoting QR), used for the link fits
//    time - nominal latency = alpha + bytes / (efficiency x peak), linear in (alpha, 1 / efficiency);
//  * a bounded Levenberg-Marquardt for models that are only available as a function (the analytic
//    collective model), with a finite-difference Jacobian, standard errors and parameter correlations
//    so that the caller can tell which parameters the data actually determine.
#include <functional>
#include <string>
#include <vector>

namespace racksim::calibration {

struct LinearFit {
  std::vector<double> coefficients;
  std::vector<double> std_errors;   // from the weighted residual variance (inf when n <= p)
  double rms_weighted_residual = 0; // sqrt(mean((w_i (A_i x - y_i))^2)): relative error when w_i = 1 / y_i
  int points = 0;
  int rank = 0;                     // numerical rank of the weighted design matrix
};

// Minimises sum_i (w_i (rows_i . x - y_i))^2. All rows must have the same length; InputError otherwise.
LinearFit weighted_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                                 const std::vector<double>& w);

struct NonlinearProblem {
  std::vector<std::string> names;
  std::vector<double> initial;
  std::vector<double> lower, upper;  // bounds (the solution is projected onto them)
  std::vector<double> scale;         // typical magnitude of each parameter (steps and damping use x / scale)
  // Residuals at a parameter vector; every call must return the same number of them.
  std::function<std::vector<double>(const std::vector<double>&)> residuals;
};

struct NonlinearFit {
  std::vector<double> values;
  std::vector<double> std_errors;                // inf where the data do not determine the parameter
  std::vector<std::vector<double>> correlation;  // NaN entries where undetermined
  std::vector<bool> at_bound;
  double rms_residual = 0;
  int iterations = 0;
  bool converged = false;
};

// Levenberg-Marquardt (Marquardt's diagonal scaling), bounded by projection. Deterministic.
NonlinearFit levenberg_marquardt(const NonlinearProblem& problem, int max_iterations = 200);

}  // namespace racksim::calibration
