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

}  // namespace
}  // namespace sluice::analysis
