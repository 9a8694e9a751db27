// Levenberg-Marquardt nonlinear least squares on Eigen (Marquardt, "An
// Algorithm for Least-Squares Estimation of Nonlinear Parameters", SIAM J.
// Appl. Math. 11(2), 1963; damping update after Nielsen, "Damping Parameter
// in Marquardt's Method", IMM-REP-1999-05: lambda *= max(1/3, 1-(2rho-1)^3)
// on success, lambda *= nu, nu *= 2 on failure). The Jacobian is taken by
// forward differences. Minimises 0.5 * |r(x)|^2.
#pragma once

#include <functional>

#include <Eigen/Dense>

#include "core/common/status.hpp"

namespace sluice::analysis {

using ResidualFn = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

struct LmOptions {
  int max_iterations = 200;
  double initial_lambda = 1e-3;
  double gradient_tolerance = 1e-12;  // stop when |J^T r|_inf below this
  double step_tolerance = 1e-12;      // stop when the step is below this relative to |x|
  double difference_step = 1e-7;      // relative forward-difference step for the Jacobian
};

struct LmResult {
  Eigen::VectorXd x;
  double cost = 0;          // 0.5 * |r(x)|^2 at the result
  double rms_residual = 0;  // sqrt(|r|^2 / m)
  int iterations = 0;
  bool converged = false;
};

// invalid_argument: r(x0) is empty or not finite, or has fewer rows than x0
// has parameters (underdetermined).
Result<LmResult> levenberg_marquardt(const ResidualFn& residuals, const Eigen::VectorXd& x0,
                                     const LmOptions& options = {});

}  // namespace sluice::analysis
