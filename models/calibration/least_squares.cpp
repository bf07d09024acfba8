#include "models/calibration/least_squares.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "sim/core/errors.hpp"

namespace racksim::calibration {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sum_sq(const Eigen::VectorXd& r) { return r.squaredNorm(); }

// Covariance-derived standard errors and correlations from a Jacobian J (n x p) and residual sum of
// squares. Directions the data do not determine (tiny singular values) give inf / NaN.
void uncertainty(const Eigen::MatrixXd& J, double rss, std::vector<double>& se, std::vector<std::vector<double>>& corr) {
  const long n = J.rows(), p = J.cols();
  se.assign(p, kInf);
  corr.assign(p, std::vector<double>(p, kNaN));
  if (n <= p || p == 0) return;
  // Column-normalise so the conditioning test does not depend on parameter units.
  Eigen::VectorXd norms = J.colwise().norm().transpose();
  for (long j = 0; j < p; ++j)
    if (norms(j) == 0) return;  // a parameter with no effect at all
  Eigen::MatrixXd Jn = J * norms.cwiseInverse().asDiagonal();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(Jn, Eigen::ComputeThinV);
  const auto& s = svd.singularValues();
  if (s(p - 1) < 1e-7 * s(0)) return;  // rank-deficient: undetermined combination of parameters
  const double sigma2 = rss / static_cast<double>(n - p);
  Eigen::MatrixXd cov_n = svd.matrixV() * s.cwiseAbs2().cwiseInverse().asDiagonal() * svd.matrixV().transpose();
  Eigen::MatrixXd cov = norms.cwiseInverse().asDiagonal() * cov_n * norms.cwiseInverse().asDiagonal() * sigma2;
  for (long i = 0; i < p; ++i) se[i] = std::sqrt(std::max(0.0, cov(i, i)));
  for (long i = 0; i < p; ++i)
    for (long j = 0; j < p; ++j)
      corr[i][j] = cov_n(i, j) / std::sqrt(cov_n(i, i) * cov_n(j, j));
}
}  // namespace

LinearFit weighted_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                                 const std::vector<double>& w) {
  const std::size_t n = rows.size();
  if (n == 0 || y.size() != n || w.size() != n) throw InputError("least squares: rows, targets and weights differ in count");
  const std::size_t p = rows[0].size();
  Eigen::MatrixXd A(n, p);
  Eigen::VectorXd b(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].size() != p) throw InputError("least squares: rows of different lengths");
    for (std::size_t j = 0; j < p; ++j) A(i, j) = w[i] * rows[i][j];
    b(i) = w[i] * y[i];
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
  const Eigen::VectorXd x = qr.solve(b);
  const Eigen::VectorXd r = A * x - b;
  LinearFit fit;
  fit.coefficients.assign(x.data(), x.data() + p);
  fit.points = static_cast<int>(n);
  fit.rank = static_cast<int>(qr.rank());
  fit.rms_weighted_residual = std::sqrt(sum_sq(r) / static_cast<double>(n));
  std::vector<std::vector<double>> corr;
  uncertainty(A, sum_sq(r), fit.std_errors, corr);
  return fit;
}

NonlinearFit levenberg_marquardt(const NonlinearProblem& pb, int max_iterations) {
  const std::size_t p = pb.initial.size();
  if (pb.lower.size() != p || pb.upper.size() != p || pb.scale.size() != p || pb.names.size() != p)
    throw InputError("levenberg_marquardt: parameter vectors differ in length");
  auto clamp = [&](Eigen::VectorXd x) {
    for (std::size_t j = 0; j < p; ++j) x(j) = std::min(pb.upper[j], std::max(pb.lower[j], x(j)));
    return x;
  };
  auto eval = [&](const Eigen::VectorXd& x) {
    const std::vector<double> r = pb.residuals(std::vector<double>(x.data(), x.data() + p));
    return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(r.data(), static_cast<long>(r.size())));
  };
  auto jacobian = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& r0) {
    Eigen::MatrixXd J(r0.size(), static_cast<long>(p));
    for (std::size_t j = 0; j < p; ++j) {
      double h = 1e-6 * std::max(std::fabs(x(j)), pb.scale[j]);
      Eigen::VectorXd xp = x;
      xp(j) = x(j) + h;
      if (xp(j) > pb.upper[j]) {  // one-sided the other way at the upper bound
        h = -h;
        xp(j) = x(j) + h;
      }
      J.col(static_cast<long>(j)) = (eval(xp) - r0) / h;
    }
    return J;
  };

  Eigen::VectorXd x = clamp(Eigen::Map<const Eigen::VectorXd>(pb.initial.data(), static_cast<long>(p)));
  Eigen::VectorXd r = eval(x);
  double cost = sum_sq(r);
  double lambda = 1e-3;
  NonlinearFit fit;
  Eigen::MatrixXd J = jacobian(x, r);
  for (int it = 0; it < max_iterations; ++it) {
    fit.iterations = it + 1;
    const Eigen::MatrixXd JtJ = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * r;
    Eigen::VectorXd diag = JtJ.diagonal();
    for (long j = 0; j < diag.size(); ++j) diag(j) = std::max(diag(j), 1e-12 / (pb.scale[j] * pb.scale[j]));
    bool improved = false;
    for (int tries = 0; tries < 30; ++tries) {
      Eigen::MatrixXd A = JtJ;
      A.diagonal() += lambda * diag;
      const Eigen::VectorXd step = A.ldlt().solve(-g);
      // Two candidates: the step projected onto the bounds, and (when it would cross one) the step cut to
      // half the distance to the nearest bound, preferred whenever it lowers the cost, so that a
      // parameter approaches a bound gradually instead of jumping into a region where the model no
      // longer depends on it (and the gradient cannot bring it back).
      Eigen::VectorXd xn = clamp(x + step);
      Eigen::VectorXd rn = eval(xn);
      double cn = sum_sq(rn);
      double room = 1;
      for (std::size_t j = 0; j < p; ++j) {
        if (step(j) < 0 && x(j) + step(j) < pb.lower[j]) room = std::min(room, (x(j) - pb.lower[j]) / -step(j));
        if (step(j) > 0 && x(j) + step(j) > pb.upper[j]) room = std::min(room, (pb.upper[j] - x(j)) / step(j));
      }
      if (room < 1 && room > 0) {
        const Eigen::VectorXd xc = clamp(x + 0.5 * room * step);
        const Eigen::VectorXd rc = eval(xc);
        const double cc = sum_sq(rc);
        if (std::isfinite(cc) && cc < cost) {  // the interior step is preferred whenever it helps
          xn = xc;
          rn = rc;
          cn = cc;
        }
      }
      if (std::isfinite(cn) && cn < cost) {
        const double rel = (cost - cn) / std::max(cost, 1e-300);
        double dx = 0;
        for (std::size_t j = 0; j < p; ++j) dx = std::max(dx, std::fabs(xn(j) - x(j)) / pb.scale[j]);
        x = xn;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 10, 1e-12);
        improved = true;
        if (rel < 1e-12 || dx < 1e-10) fit.converged = true;
        break;
      }
      lambda *= 10;
    }
    if (!improved) {
      fit.converged = true;  // no downhill step left at any damping: a (bounded) minimum
      break;
    }
    J = jacobian(x, r);
    if (fit.converged) break;
  }
  fit.values.assign(x.data(), x.data() + p);
  fit.rms_residual = std::sqrt(cost / static_cast<double>(std::max<long>(1, r.size())));
  fit.at_bound.resize(p);
  for (std::size_t j = 0; j < p; ++j)
    fit.at_bound[j] = x(j) <= pb.lower[j] + 1e-12 * pb.scale[j] || x(j) >= pb.upper[j] - 1e-12 * pb.scale[j];
  uncertainty(J, cost, fit.std_errors, fit.correlation);
  return fit;
}

}  // namespace racksim::calibration
