// Levenberg-Marquardt nonlinear least squares on Eigen (Marquardt, "An
// Algorithm for Least-Squares Estimation of Nonlinear Parameters", SIAM J.
// Appl. Math. 11(2), 1963; damping update after Nielsen, "Damping Parameter
// in Marquardt's Method", IMM-REP-1999-05: lambda *= max(1/3, 1-(2rho-1)^3)
// on success, lambda *= nu, nu *= 2 on failure). The Jacobian is taken by
// forward differences. Minimises 0.5 * |r(x)|^2.
#pragma once

#include <functional>
#include <string>

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

// The Jacobian of f at x by forward differences (r = f(x)); parameter k moves
// by rel_step * max(1, |x_k|).
Eigen::MatrixXd forward_jacobian(const ResidualFn& f, const Eigen::VectorXd& x, const Eigen::VectorXd& r,
                                 double rel_step);

// How well a least-squares solution determines its parameters, from the
// Jacobian at the solution (the Gauss-Newton approximation of the Hessian;
// Seber and Wild, "Nonlinear Regression", Wiley 1989, section 2.1):
// covariance = s^2 (J^T J)^-1 with s^2 = |r|^2 / (m - n), m the data residuals
// and n the parameters. Rows of the Jacobian past the m data rows are
// regularisation (a prior): they enter J^T J but are not observations. A
// direction J does not see (a singular value below 1e-9 of the largest)
// leaves every parameter it involves undetermined: an infinite variance.
// With m <= n, s^2 and everything else are NaN.
struct FitUncertainty {
  Eigen::MatrixXd covariance;  // n x n
  Eigen::VectorXd std_errors;  // sqrt of the diagonal
  double residual_variance = 0;
  Eigen::Index degrees_of_freedom = 0;  // m - n
  // Half-width of a two-sided 95% interval in standard errors: Student's t
  // quantile 0.975 at the degrees of freedom (1.96 for many; NaN for none).
  double t95 = 0;
};
FitUncertainty fit_uncertainty(const Eigen::MatrixXd& jacobian, const Eigen::VectorXd& data_residuals);

// A value fitted in ln(value) with its uncertainty, e.g. "0.9512 +- 1.8%
// (95%: 0.916 .. 0.988)"; "(not determined by the measurements...)" for an
// infinite standard error or a 95% interval wider than x100 either way; "(no
// standard error: as many parameters as observations)" for NaN.
std::string value_with_interval_text(double value, double log_std_error, double t95);

}  // namespace sluice::analysis
