#include "analysis/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

namespace sluice::analysis {
namespace {

bool all_finite(const Eigen::VectorXd& v) { return v.allFinite(); }

}  // namespace

Eigen::MatrixXd forward_jacobian(const ResidualFn& f, const Eigen::VectorXd& x, const Eigen::VectorXd& r,
                                 double rel_step) {
  Eigen::MatrixXd j(r.size(), x.size());
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    Eigen::VectorXd xs = x;
    const double h = rel_step * std::max(1.0, std::fabs(x[k]));
    xs[k] += h;
    j.col(k) = (f(xs) - r) / h;
  }
  return j;
}

FitUncertainty fit_uncertainty(const Eigen::MatrixXd& jacobian, const Eigen::VectorXd& data_residuals) {
  constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double k_rank_tolerance = 1e-9;  // singular values below this x the largest: a direction J does not see
  const Eigen::Index n = jacobian.cols();
  FitUncertainty u;
  u.degrees_of_freedom = data_residuals.size() - n;
  u.covariance = Eigen::MatrixXd::Constant(n, n, k_nan);
  u.std_errors = Eigen::VectorXd::Constant(n, k_nan);
  if (u.degrees_of_freedom <= 0 || n == 0 || !jacobian.allFinite() || !data_residuals.allFinite()) {
    u.residual_variance = k_nan;
    u.t95 = k_nan;
    return u;
  }
  u.residual_variance = data_residuals.squaredNorm() / static_cast<double>(u.degrees_of_freedom);
  u.t95 = boost::math::quantile(boost::math::students_t(static_cast<double>(u.degrees_of_freedom)), 0.975);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(jacobian, Eigen::ComputeThinV);
  const Eigen::VectorXd& sigma = svd.singularValues();
  const Eigen::MatrixXd& v = svd.matrixV();
  const double largest = sigma.size() > 0 ? sigma[0] : 0.0;
  Eigen::MatrixXd inverse = Eigen::MatrixXd::Zero(n, n);
  std::vector<bool> undetermined(static_cast<std::size_t>(n), false);
  for (Eigen::Index i = 0; i < sigma.size(); ++i) {
    if (sigma[i] > k_rank_tolerance * largest && largest > 0) {
      inverse += v.col(i) * v.col(i).transpose() / (sigma[i] * sigma[i]);
      continue;
    }
    for (Eigen::Index k = 0; k < n; ++k) {
      if (std::fabs(v(k, i)) > k_rank_tolerance) undetermined[static_cast<std::size_t>(k)] = true;
    }
  }
  u.covariance = u.residual_variance * inverse;
  for (Eigen::Index k = 0; k < n; ++k) {
    if (undetermined[static_cast<std::size_t>(k)]) u.covariance(k, k) = std::numeric_limits<double>::infinity();
    u.std_errors[k] = std::sqrt(u.covariance(k, k));
  }
  return u;
}

std::string value_with_interval_text(double value, double log_std_error, double t95) {
  if (std::isinf(log_std_error)) return fmt::format("{:.5g} (not determined by the measurements)", value);
  if (!std::isfinite(log_std_error) || !std::isfinite(t95)) {
    return fmt::format("{:.5g} (no standard error: as many parameters as observations)", value);
  }
  constexpr double k_undetermined_factor = 100;  // a 95% interval wider than x100 either way tells nothing
  if (t95 * log_std_error > std::log(k_undetermined_factor)) {
    return fmt::format(
        "{:.5g} +- {:.2g}% (not determined by the measurements: the 95% interval spans more than "
        "x100 either way)",
        value, 100 * log_std_error);
  }
  return fmt::format("{:.5g} +- {:.2g}% (95%: {:.4g} .. {:.4g})", value, 100 * log_std_error,
                     value * std::exp(-t95 * log_std_error), value * std::exp(t95 * log_std_error));
}

Result<LmResult> levenberg_marquardt(const ResidualFn& residuals, const Eigen::VectorXd& x0, const LmOptions& options) {
  Eigen::VectorXd x = x0;
  Eigen::VectorXd r = residuals(x);
  if (r.size() == 0 || !all_finite(r)) {
    return error(StatusCode::invalid_argument, "levenberg_marquardt: residuals at the start are empty or not finite");
  }
  if (r.size() < x.size()) {
    return error(StatusCode::invalid_argument, "levenberg_marquardt: " + std::to_string(r.size()) + " residuals for " +
                                                   std::to_string(x.size()) + " parameters");
  }
  double cost = 0.5 * r.squaredNorm();
  double lambda = options.initial_lambda;
  double nu = 2;
  LmResult out;
  int it = 0;
  for (; it < options.max_iterations; ++it) {
    const Eigen::MatrixXd j = forward_jacobian(residuals, x, r, options.difference_step);
    const Eigen::VectorXd g = j.transpose() * r;
    if (g.lpNorm<Eigen::Infinity>() < options.gradient_tolerance) {
      out.converged = true;
      break;
    }
    const Eigen::MatrixXd a = j.transpose() * j;
    bool stepped = false;
    while (!stepped) {
      Eigen::MatrixXd damped = a;
      damped.diagonal() += lambda * a.diagonal().cwiseMax(1e-12);
      const Eigen::VectorXd step = damped.ldlt().solve(-g);
      if (!step.allFinite()) {
        lambda *= nu;
        nu *= 2;
        if (lambda > 1e30) break;
        continue;
      }
      if (step.norm() <= options.step_tolerance * (x.norm() + options.step_tolerance)) {
        out.converged = true;
        break;
      }
      const Eigen::VectorXd xn = x + step;
      const Eigen::VectorXd rn = residuals(xn);
      const double cn = all_finite(rn) ? 0.5 * rn.squaredNorm() : INFINITY;
      const double predicted = -(g.dot(step) + 0.5 * step.dot(a * step));
      const double rho = predicted > 0 ? (cost - cn) / predicted : -1;
      if (cn < cost && rho > 0) {
        x = xn;
        r = rn;
        cost = cn;
        lambda *= std::max(1.0 / 3.0, 1.0 - std::pow(2 * rho - 1, 3));
        nu = 2;
        stepped = true;
      } else {
        lambda *= nu;
        nu *= 2;
        if (lambda > 1e30) break;
      }
    }
    if (out.converged || !stepped) {
      out.converged = out.converged || !stepped;  // no step lowers the cost: a (local) minimum
      break;
    }
  }
  out.x = x;
  out.cost = cost;
  out.rms_residual = std::sqrt(r.squaredNorm() / static_cast<double>(r.size()));
  out.iterations = it;
  return out;
}

}  // namespace sluice::analysis
