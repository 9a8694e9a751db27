#include "analysis/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace sluice::analysis {
namespace {

bool all_finite(const Eigen::VectorXd& v) { return v.allFinite(); }

Eigen::MatrixXd jacobian(const ResidualFn& f, const Eigen::VectorXd& x, const Eigen::VectorXd& r, double rel_step) {
  Eigen::MatrixXd j(r.size(), x.size());
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    Eigen::VectorXd xs = x;
    const double h = rel_step * std::max(1.0, std::fabs(x[k]));
    xs[k] += h;
    j.col(k) = (f(xs) - r) / h;
  }
  return j;
}

}  // namespace

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
    const Eigen::MatrixXd j = jacobian(residuals, x, r, options.difference_step);
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
