// Least squares: known parameters recovered from synthetic data, and undetermined ones flagged.
#include <gtest/gtest.h>

#include <cmath>

#include "models/calibration/least_squares.hpp"

using namespace racksim::calibration;

TEST(LeastSquares, WeightedLinearRecoversAlphaAndBeta) {
  // t = 3 us + S / 50 GB/s, sizes 4 KiB .. 1 GiB, relative weights: exact data, exact answer.
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  for (double s = 4096; s <= 1073741824.0; s *= 4) {
    rows.push_back({1.0, s});
    const double t = 3e-6 + s / 50e9;
    y.push_back(t);
    w.push_back(1 / t);
  }
  const LinearFit f = weighted_least_squares(rows, y, w);
  EXPECT_EQ(f.rank, 2);
  EXPECT_NEAR(f.coefficients[0], 3e-6, 1e-15);
  EXPECT_NEAR(1 / f.coefficients[1], 50e9, 1e-3);
  EXPECT_LT(f.rms_weighted_residual, 1e-12);
}

TEST(LeastSquares, WeightedLinearWithNoiseGivesStandardErrorsThatCoverTheTruth) {
  // +-1 % alternating "noise": the estimate stays within a few standard errors of the truth.
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  int i = 0;
  for (double s = 65536; s <= 1073741824.0; s *= 2, ++i) {
    rows.push_back({1.0, s});
    const double t = (10e-6 + s / 400e9) * (i % 2 ? 1.01 : 0.99);
    y.push_back(t);
    w.push_back(1 / t);
  }
  const LinearFit f = weighted_least_squares(rows, y, w);
  EXPECT_NEAR(f.rms_weighted_residual, 0.01, 0.002);
  EXPECT_LT(std::fabs(f.coefficients[0] - 10e-6), 4 * f.std_errors[0]);
  EXPECT_LT(std::fabs(f.coefficients[1] - 1 / 400e9), 4 * f.std_errors[1]);
}

TEST(LeastSquares, LevenbergMarquardtRecoversANonlinearModel) {
  // t(S) = a + S / (B * S / (S + h)) ... written as a + S/B + h * S / (B * (S + c)) would be affine;
  // use a genuinely nonlinear curve: t(S) = a + S / (B * (1 - exp(-S / h))).
  const double a = 12e-6, B = 300e9, h = 2e6;
  std::vector<double> sizes;
  for (double s = 1024; s <= 8589934592.0; s *= 2) sizes.push_back(s);
  auto model = [&](double aa, double bb, double hh, double s) { return aa + s / (bb * (1 - std::exp(-s / hh))); };
  NonlinearProblem pb;
  pb.names = {"a", "B", "h"};
  // A local method: from h = 1e5 the descent ends in the flat h -> 0 basin (the affine fit); from 5e5 it
  // must find the truth.
  pb.initial = {5e-6, 100e9, 5e5};
  pb.lower = {0, 1e9, 1};
  pb.upper = {1e-3, 1e13, 1e10};
  pb.scale = {1e-5, 1e11, 1e6};
  pb.residuals = [&](const std::vector<double>& x) {
    std::vector<double> r;
    for (double s : sizes) r.push_back(std::log(model(x[0], x[1], x[2], s) / model(a, B, h, s)));
    return r;
  };
  const NonlinearFit f = levenberg_marquardt(pb);
  EXPECT_TRUE(f.converged);
  EXPECT_NEAR(f.values[0] / a, 1, 1e-4);
  EXPECT_NEAR(f.values[1] / B, 1, 1e-4);
  EXPECT_NEAR(f.values[2] / h, 1, 1e-4);
  EXPECT_LT(f.rms_residual, 1e-8);
}

TEST(LeastSquares, LevenbergMarquardtFlagsParametersTheDataCannotSeparate) {
  // t = a + b + S / B: a and b enter only as a sum, so they must come out fully correlated.
  std::vector<double> sizes;
  for (double s = 1024; s <= 1e9; s *= 4) sizes.push_back(s);
  NonlinearProblem pb;
  pb.names = {"a", "b", "B"};
  pb.initial = {1e-6, 1e-6, 50e9};
  pb.lower = {0, 0, 1e9};
  pb.upper = {1e-3, 1e-3, 1e12};
  pb.scale = {1e-6, 1e-6, 1e10};
  pb.residuals = [&](const std::vector<double>& x) {
    std::vector<double> r;
    for (double s : sizes) r.push_back(std::log((x[0] + x[1] + s / x[2]) / (5e-6 + s / 80e9)));
    return r;
  };
  const NonlinearFit f = levenberg_marquardt(pb);
  EXPECT_NEAR(f.values[0] + f.values[1], 5e-6, 1e-9);
  EXPECT_NEAR(f.values[2] / 80e9, 1, 1e-4);
  // Rank-deficient: standard errors infinite (or the correlation of a and b is +-1).
  const bool undetermined = !std::isfinite(f.std_errors[0]) || std::fabs(f.correlation[0][1]) > 0.99;
  EXPECT_TRUE(undetermined);
}
