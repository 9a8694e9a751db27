#include "analysis/least_squares.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace sluice::analysis {
namespace {

TEST(LevenbergMarquardt, RecoversExponentialDecayParameters) {
  // y = a * exp(-b t), a = 3, b = 0.7, exact data.
  std::vector<double> t, y;
  for (int i = 0; i < 12; ++i) {
    t.push_back(0.5 * i);
    y.push_back(3 * std::exp(-0.7 * 0.5 * i));
  }
  const ResidualFn f = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(static_cast<Eigen::Index>(t.size()));
    for (std::size_t i = 0; i < t.size(); ++i) r[static_cast<Eigen::Index>(i)] = x[0] * std::exp(-x[1] * t[i]) - y[i];
    return r;
  };
  Eigen::VectorXd x0(2);
  x0 << 1, 0.1;
  const LmResult r = *levenberg_marquardt(f, x0);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.x[0], 3.0, 1e-6);
  EXPECT_NEAR(r.x[1], 0.7, 1e-6);
  EXPECT_LT(r.rms_residual, 1e-8);
}

LmOptions rosenbrock_options() {
  LmOptions o;
  o.max_iterations = 500;
  return o;
}

TEST(LevenbergMarquardt, SolvesRosenbrockFromTheClassicStart) {
  const ResidualFn f = [](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(2);
    r << 10 * (x[1] - x[0] * x[0]), 1 - x[0];
    return r;
  };
  Eigen::VectorXd x0(2);
  x0 << -1.2, 1;
  const LmResult r = *levenberg_marquardt(f, x0, rosenbrock_options());
  EXPECT_NEAR(r.x[0], 1.0, 1e-5);
  EXPECT_NEAR(r.x[1], 1.0, 1e-5);
}

TEST(LevenbergMarquardt, RejectsUnderdeterminedOrNonFiniteProblems) {
  Eigen::VectorXd x0(2);
  x0 << 1, 1;
  const ResidualFn one = [](const Eigen::VectorXd& x) { return Eigen::VectorXd::Constant(1, x[0]); };
  EXPECT_EQ(levenberg_marquardt(one, x0).status().code(), StatusCode::invalid_argument);
  const ResidualFn nan = [](const Eigen::VectorXd&) { return Eigen::VectorXd::Constant(3, NAN); };
  EXPECT_EQ(levenberg_marquardt(nan, x0).status().code(), StatusCode::invalid_argument);
}

// A straight line y = a + b x fitted to points with known scatter: the
// covariance is the textbook s^2 (X^T X)^-1 of linear least squares.
TEST(FitUncertainty, MatchesOrdinaryLeastSquaresOnAStraightLine) {
  const std::vector<double> xs = {0, 1, 2, 3, 4, 5};
  const std::vector<double> noise = {0.1, -0.2, 0.05, 0.15, -0.1, 0.0};
  Eigen::MatrixXd j(6, 2);
  Eigen::VectorXd r(6);
  for (Eigen::Index i = 0; i < 6; ++i) {
    j(i, 0) = 1;
    j(i, 1) = xs[static_cast<std::size_t>(i)];
    r[i] = noise[static_cast<std::size_t>(i)];
  }
  const FitUncertainty u = fit_uncertainty(j, r);
  EXPECT_EQ(u.degrees_of_freedom, 4);
  const double s2 = r.squaredNorm() / 4;
  EXPECT_DOUBLE_EQ(u.residual_variance, s2);
  const Eigen::MatrixXd expected = s2 * (j.transpose() * j).inverse();
  EXPECT_NEAR(u.covariance(0, 0), expected(0, 0), 1e-12);
  EXPECT_NEAR(u.covariance(0, 1), expected(0, 1), 1e-12);
  EXPECT_NEAR(u.covariance(1, 1), expected(1, 1), 1e-12);
  EXPECT_NEAR(u.std_errors[1], std::sqrt(expected(1, 1)), 1e-12);
  EXPECT_NEAR(u.t95, 2.776, 0.001) << "Student's t, 0.975 quantile, 4 degrees of freedom";
}

TEST(FitUncertainty, AParameterTheDataDoNotSeeIsUndeterminedAndTooFewPointsGiveNaN) {
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(4, 2);
  j.col(0).setOnes();  // the second parameter moves no residual
  const Eigen::VectorXd r = Eigen::VectorXd::Constant(4, 0.1);
  const FitUncertainty u = fit_uncertainty(j, r);
  EXPECT_TRUE(std::isfinite(u.std_errors[0]));
  EXPECT_TRUE(std::isinf(u.std_errors[1]));
  EXPECT_NE(value_with_interval_text(3, u.std_errors[1], u.t95).find("not determined"), std::string::npos);
  const FitUncertainty none = fit_uncertainty(Eigen::MatrixXd::Ones(2, 2), Eigen::VectorXd::Zero(2));
  EXPECT_TRUE(std::isnan(none.std_errors[0]));
  EXPECT_NE(value_with_interval_text(3, none.std_errors[0], none.t95).find("no standard error"), std::string::npos);
  EXPECT_NE(value_with_interval_text(2.0, 0.05, 2.0).find("2 +- 5% (95%: 1.81 .. 2.21)"), std::string::npos)
      << value_with_interval_text(2.0, 0.05, 2.0);
  EXPECT_NE(value_with_interval_text(2.0, 3.0, 2.0).find("not determined"), std::string::npos)
      << "a 95% interval of x400 either way";
}

}  // namespace
}  // namespace sluice::analysis
