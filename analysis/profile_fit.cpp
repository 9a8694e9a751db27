#include "analysis/profile_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "analysis/least_squares.hpp"
#include "analysis/stats.hpp"

namespace sluice::analysis {
namespace {

// sim/sim_profile.hpp's sanity bounds (k_min_factor, k_max_factor,
// k_max_profile_latency_ns); ns and byte fields start at 1, not 0, because
// the fit works on their logarithm.
constexpr double k_factor_min = 1e-3;
constexpr double k_factor_max = 1e3;
constexpr double k_ns_min = 1;
constexpr double k_ns_max = 1e9;
constexpr double k_overhead_bytes_max = 1 << 20;
// Relative error charged to every observation of a failed candidate (1000%).
constexpr double k_failed_point_residual = 10;
constexpr double k_rate_min = 1e3;  // bytes/s: a checksum slower than this is a unit mistake
constexpr double k_rate_max = 1e15;
// Disk request rates (disk.read/write_request_bytes_per_s): below 1 MB/s a
// 1 MiB request takes over a second (RPC timeouts, not a drive); above
// 1 TB/s it takes a microsecond, no longer visible beside a drive's latency.
constexpr double k_request_rate_min = 1e6;
constexpr double k_request_rate_max = 1e12;

const PhaseRecord* find_phase(const RunRecord& run, const std::string& phase) {
  for (const PhaseRecord& p : run.phases) {
    if (p.phase == phase) return &p;
  }
  return nullptr;
}

std::string point_text(const RunRecord& run, std::size_t index) {
  return fmt::format("point {} ({})", index + 1, point_key(run));
}

// ln(predicted / measured) of each point and phase of `predicted`, the
// metric of paired_rel_errors; NaN where a prediction failed.
Eigen::VectorXd log_ratios(const Result<std::vector<RunRecord>>& predicted, const std::vector<RunRecord>& reference,
                           const std::vector<std::string>& phases, const std::string& metric, Eigen::Index rows) {
  Eigen::VectorXd out = Eigen::VectorXd::Constant(rows, std::numeric_limits<double>::quiet_NaN());
  if (!predicted.ok()) return out;
  Result<std::vector<double>> errs = paired_rel_errors(*predicted, reference, phases, metric);
  if (!errs.ok() || static_cast<Eigen::Index>(errs->size()) != rows) return out;
  for (Eigen::Index i = 0; i < rows; ++i) out[i] = std::log1p((*errs)[static_cast<std::size_t>(i)]);
  return out;
}

Eigen::VectorXd log_values(const std::vector<double>& values) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(values.size()));
  for (std::size_t k = 0; k < values.size(); ++k) x[static_cast<Eigen::Index>(k)] = std::log(values[k]);
  return x;
}

std::vector<double> exp_values(const Eigen::VectorXd& x) {
  std::vector<double> v(static_cast<std::size_t>(x.size()));
  for (Eigen::Index k = 0; k < x.size(); ++k) v[static_cast<std::size_t>(k)] = std::exp(x[k]);
  return v;
}

// ln(prediction / reference) of each point and phase as a function of the
// parameters' ln(values): one simulator call per evaluation, counted in
// `calls` when given.
ResidualFn log_ratio_fn(const nlohmann::json& base, const std::vector<ProfileParam>& params, const PredictFn& predict,
                        const std::vector<RunRecord>& reference, const std::vector<std::string>& phases,
                        const std::string& metric, Eigen::Index rows, std::size_t* calls) {
  return [&base, &params, &predict, &reference, &phases, &metric, rows, calls](const Eigen::VectorXd& x) {
    Result<nlohmann::json> profile = apply_profile_params(base, params, exp_values(x));
    if (calls != nullptr) ++*calls;
    return log_ratios(profile.ok() ? predict(*profile) : Result<std::vector<RunRecord>>(profile.status()), reference,
                      phases, metric, rows);
  };
}

// The fitted profile's own errors (one more simulator call, so the numbers
// describe exactly the profile that is written), then the uncertainty of the
// fitted values: the Jacobian of the ln-ratio residuals at the fitted values
// (one simulator call per parameter) and fit_uncertainty (least_squares.hpp).
// Neither the soft-L1 loss nor the prior enters: the standard errors say what
// the measurements determine, so a parameter only the prior holds is "not
// determined".
Status score_fitted(ProfileFit& fit, const nlohmann::json& base, const std::vector<ProfileParam>& params,
                    const std::vector<RunRecord>& measured, const PredictFn& predict,
                    const ProfileFitOptions& options) {
  Result<std::vector<RunRecord>> final_predicted = predict(fit.profile);
  ++fit.evaluations;
  if (!final_predicted.ok()) return final_predicted.status();
  Result<std::vector<double>> final_errs =
      paired_rel_errors(*final_predicted, measured, options.phases, options.metric);
  if (!final_errs.ok()) return final_errs.status();
  fit.rel_errors = *final_errs;
  double sq = 0;
  for (double e : fit.rel_errors) {
    sq += e * e;
    fit.max_rel_residual = std::max(fit.max_rel_residual, std::fabs(e));
  }
  fit.rms_rel_residual = std::sqrt(sq / static_cast<double>(fit.rel_errors.size()));

  const Eigen::Index rows = static_cast<Eigen::Index>(fit.rel_errors.size());
  const Eigen::Index n = static_cast<Eigen::Index>(params.size());
  const ResidualFn residuals =
      log_ratio_fn(base, params, predict, measured, options.phases, options.metric, rows, &fit.evaluations);
  const Eigen::VectorXd r_fit = log_ratios(final_predicted, measured, options.phases, options.metric, rows);
  const FitUncertainty u =
      fit_uncertainty(forward_jacobian(residuals, log_values(fit.values), r_fit, options.log_step), r_fit);
  fit.log_std_errors.assign(u.std_errors.data(), u.std_errors.data() + n);
  fit.log_covariance.assign(u.covariance.data(), u.covariance.data() + n * n);  // column-major
  fit.residual_variance = u.residual_variance;
  fit.t95 = u.t95;
  return ok_status();
}

}  // namespace

const std::vector<ProfileParam>& profile_params() {
  static const std::vector<ProfileParam> k_params = {
      {"network.bandwidth_factor", "/link_classes/network/bandwidth_factor", false, k_factor_min, k_factor_max},
      {"network.latency_factor", "/link_classes/network/latency_factor", false, k_factor_min, k_factor_max},
      {"network.message_overhead_bytes", "/network/message_overhead_bytes", true, 1, k_overhead_bytes_max},
      {"cpu.storage_request", "/cpu/cost_ns_per_unit/storage_request", true, k_ns_min, k_ns_max},
      {"cpu.client_request", "/cpu/cost_ns_per_unit/client_request", true, k_ns_min, k_ns_max},
      {"disk.read_latency_ns", "/disk/read_latency_ns", true, k_ns_min, k_ns_max},
      {"disk.write_latency_ns", "/disk/write_latency_ns", true, k_ns_min, k_ns_max},
      {"disk.request_occupancy_ns", "/disk/request_occupancy_ns", true, k_ns_min, k_ns_max},
      {"disk.batch_occupancy_ns", "/disk/batch_occupancy_ns", true, k_ns_min, k_ns_max},
      // A drive measured with fio at several block sizes and queue depths
      // (issue 22, F4): its rate at depth, and what a lone request reaches.
      {"disk.read_bandwidth_factor", "/disk/read_bandwidth_factor", false, k_factor_min, k_factor_max},
      {"disk.write_bandwidth_factor", "/disk/write_bandwidth_factor", false, k_factor_min, k_factor_max},
      {"disk.read_request_bytes_per_s", "/disk/read_request_bytes_per_s", false, k_request_rate_min,
       k_request_rate_max},
      {"disk.write_request_bytes_per_s", "/disk/write_request_bytes_per_s", false, k_request_rate_min,
       k_request_rate_max},
      {"memory.memory_op_bytes_per_s", "/memory/memory_op_bytes_per_s", false, k_rate_min, k_rate_max},
      // The host-memory/PCIe model of a bounce into a GPU (issue 8's GPU
      // calibration from bench_gpu's chunk-size sweep): the PCIe and host
      // memory link classes, and the read() copy of a staged byte.
      {"pcie.bandwidth_factor", "/link_classes/pcie/bandwidth_factor", false, k_factor_min, k_factor_max},
      {"pcie.latency_factor", "/link_classes/pcie/latency_factor", false, k_factor_min, k_factor_max},
      {"memory.bandwidth_factor", "/link_classes/memory/bandwidth_factor", false, k_factor_min, k_factor_max},
      {"staging.cpu_copy_bytes_per_s", "/staging/cpu_copy_bytes_per_s", false, k_rate_min, k_rate_max},
  };
  return k_params;
}

Result<ProfileParam> find_profile_param(const std::string& name) {
  std::string known;
  for (const ProfileParam& p : profile_params()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  return error(StatusCode::invalid_argument, "profile fit: no parameter \"" + name + "\" (known: " + known + ")");
}

Result<std::vector<ProfileParam>> find_profile_params(const std::vector<std::string>& names) {
  std::vector<ProfileParam> params;
  for (const std::string& name : names) {
    Result<ProfileParam> p = find_profile_param(name);
    if (!p.ok()) return p.status();
    params.push_back(*p);
  }
  return params;
}

Result<nlohmann::json> apply_profile_params(const nlohmann::json& base, const std::vector<ProfileParam>& params,
                                            const std::vector<double>& values) {
  if (!base.is_object() || base.value("format", std::string{}) != "sluice-sim-profile") {
    return error(StatusCode::invalid_argument, "profile fit: the base is not a sluice-sim-profile document");
  }
  if (params.size() != values.size()) {
    return error(StatusCode::invalid_argument, "profile fit: " + std::to_string(values.size()) + " values for " +
                                                   std::to_string(params.size()) + " parameters");
  }
  nlohmann::json p = base;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const nlohmann::json::json_pointer ptr(params[i].pointer);
    if (!p.contains(ptr) || !p[ptr].is_number()) {
      return error(StatusCode::invalid_argument, "profile fit: the base profile has no number at " + params[i].pointer);
    }
    if (!std::isfinite(values[i])) {
      return error(StatusCode::invalid_argument, "profile fit: " + params[i].name + " is not finite");
    }
    const double v = std::clamp(values[i], params[i].min_value, params[i].max_value);
    if (params[i].integer) {
      p[ptr] = static_cast<std::uint64_t>(std::llround(v));
    } else {
      p[ptr] = v;
    }
  }
  return p;
}

Result<RunRecord> median_of_repeats(const std::vector<RunRecord>& repeats) {
  if (repeats.empty()) return error(StatusCode::invalid_argument, "median_of_repeats: no run");
  const std::string key = point_key(repeats.front());
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    if (!repeats[i].ok) {
      return error(StatusCode::invalid_argument, "median_of_repeats: repeat " + std::to_string(i + 1) + " of " + key +
                                                     " failed: " + repeats[i].error);
    }
    if (point_key(repeats[i]) != key) {
      return error(StatusCode::invalid_argument, "median_of_repeats: " + point_key(repeats[i]) + " is not " + key);
    }
  }
  RunRecord out = repeats.front();
  for (PhaseRecord& phase : out.phases) {
    std::vector<double> rates, ops, done;
    for (const RunRecord& r : repeats) {
      const PhaseRecord* p = find_phase(r, phase.phase);
      if (p == nullptr) {
        return error(StatusCode::invalid_argument,
                     "median_of_repeats: a repeat of " + key + " has no phase " + phase.phase);
      }
      rates.push_back(p->bytes_per_s);
      ops.push_back(p->ops_per_s);
      done.push_back(p->last_done_s);
    }
    phase.bytes_per_s = *median(rates);
    phase.ops_per_s = *median(ops);
    phase.last_done_s = *median(done);
  }
  return out;
}

Result<std::vector<double>> paired_rel_errors(const std::vector<RunRecord>& predicted,
                                              const std::vector<RunRecord>& measured,
                                              const std::vector<std::string>& phases, const std::string& metric) {
  if (predicted.size() != measured.size()) {
    return error(StatusCode::invalid_argument,
                 fmt::format("profile fit: {} predicted runs for {} measured ones", predicted.size(), measured.size()));
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const RunRecord& m = measured[i];
    const RunRecord& p = predicted[i];
    if (!m.ok) return error(StatusCode::invalid_argument, "measured " + point_text(m, i) + " failed: " + m.error);
    if (!p.ok) return error(StatusCode::invalid_argument, "predicted " + point_text(m, i) + " failed: " + p.error);
    for (const std::string& phase : phases) {
      const PhaseRecord* mp = find_phase(m, phase);
      const PhaseRecord* pp = find_phase(p, phase);
      if (mp == nullptr || pp == nullptr) {
        return error(StatusCode::invalid_argument, (mp == nullptr ? "measured " : "predicted ") + point_text(m, i) +
                                                       " has no phase \"" + phase + "\"");
      }
      const double mv = phase_metric(*mp, metric);
      const double pv = phase_metric(*pp, metric);
      if (!(mv > 0) || !std::isfinite(mv)) {
        return error(StatusCode::invalid_argument,
                     "measured " + point_text(m, i) + " " + phase + " " + metric + " is not a positive number");
      }
      out.push_back((pv - mv) / mv);
    }
  }
  return out;
}

Result<ProfileFit> fit_profile(const nlohmann::json& base, const std::vector<RunRecord>& measured,
                               const PredictFn& predict, const ProfileFitOptions& options) {
  if (measured.empty()) return error(StatusCode::invalid_argument, "profile fit: no measured point");
  if (options.params.empty()) return error(StatusCode::invalid_argument, "profile fit: no parameter to fit");
  if (options.max_iterations > k_max_fit_iterations || options.max_evaluations > k_max_fit_evaluations) {
    return error(StatusCode::invalid_argument,
                 fmt::format("profile fit: at most {} iterations and {} simulator calls (k_max_fit_iterations, "
                             "k_max_fit_evaluations)",
                             k_max_fit_iterations, k_max_fit_evaluations));
  }
  if (!(options.log_step > 0) || !(options.prior_weight >= 0)) {
    return error(StatusCode::invalid_argument, "profile fit: log_step must be > 0 and prior_weight >= 0");
  }
  Result<std::vector<ProfileParam>> found = find_profile_params(options.params);
  if (!found.ok()) return found.status();
  const std::vector<ProfileParam>& params = *found;
  const std::size_t observations = measured.size() * options.phases.size();
  if (observations < params.size()) {
    return error(
        StatusCode::invalid_argument,
        fmt::format("profile fit: {} observations cannot determine {} parameters", observations, params.size()));
  }
  ProfileFit fit;
  fit.names = options.params;
  for (const ProfileParam& p : params) {
    const nlohmann::json::json_pointer ptr(p.pointer);
    if (!base.is_object() || !base.contains(ptr) || !base[ptr].is_number()) {
      return error(StatusCode::invalid_argument, "profile fit: the base profile has no number at " + p.pointer);
    }
    fit.start_values.push_back(std::clamp(base[ptr].get<double>(), p.min_value, p.max_value));
  }

  // Every simulator call goes through here: counted, bounded, logged.
  Status first_failure = ok_status();
  auto simulate = [&](const std::vector<double>& values) -> Result<std::vector<double>> {
    if (fit.evaluations >= options.max_evaluations) {
      return error(StatusCode::unavailable, "profile fit: reached max_evaluations");
    }
    ++fit.evaluations;
    Result<nlohmann::json> profile = apply_profile_params(base, params, values);
    if (!profile.ok()) return profile.status();
    Result<std::vector<RunRecord>> predicted = predict(*profile);
    if (!predicted.ok()) return predicted.status();
    Result<std::vector<double>> errs = paired_rel_errors(*predicted, measured, options.phases, options.metric);
    if (options.log && errs.ok()) {
      std::string text;
      for (std::size_t i = 0; i < values.size(); ++i)
        text += fmt::format("{}{}={:.4g}", i ? " " : "", fit.names[i], values[i]);
      double sq = 0;
      for (double e : *errs) sq += e * e;
      options.log(fmt::format("sim call {}: {} -> rms error {:.2f}%", fit.evaluations, text,
                              100 * std::sqrt(sq / static_cast<double>(errs->size()))));
    }
    return errs;
  };

  Result<std::vector<double>> start = simulate(fit.start_values);
  if (!start.ok()) return start.status();
  fit.start_rel_errors = *start;

  const Eigen::Index n = static_cast<Eigen::Index>(params.size());
  Eigen::VectorXd x0(n);
  for (Eigen::Index k = 0; k < n; ++k) x0[k] = std::log(fit.start_values[static_cast<std::size_t>(k)]);
  auto values_of = [&](const Eigen::VectorXd& x) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (Eigen::Index k = 0; k < n; ++k) v[static_cast<std::size_t>(k)] = std::exp(x[k]);
    return v;
  };
  // Soft-L1 loss (rho(z) = 2 (sqrt(1 + z) - 1), scipy.optimize.least_squares'
  // "soft_l1" with f_scale = robust_scale), applied as a residual transform
  // so LM minimises sum rho: quadratic for errors below the scale, linear
  // above, so a run disturbed by the machine (a retransmission timeout, a
  // busy core) cannot drag the fit.
  const double scale = options.robust_scale;
  auto robust = [scale](double e) {
    if (!(scale > 0)) return e;
    const double z = (e / scale) * (e / scale);
    return std::copysign(scale * std::sqrt(2 * (std::sqrt(1 + z) - 1)), e);
  };
  bool first_call = true;
  const ResidualFn residuals = [&](const Eigen::VectorXd& x) -> Eigen::VectorXd {
    Result<std::vector<double>> errs = first_call ? start : simulate(values_of(x));
    first_call = false;
    Eigen::VectorXd r(static_cast<Eigen::Index>(observations) + n);
    if (!errs.ok()) {
      // A candidate the simulator cannot run (an extreme profile makes RPCs
      // time out) is charged a large finite error, so LM rejects the step and
      // the Jacobian stays finite. Reaching max_evaluations ends up here too.
      if (first_failure.ok()) first_failure = errs.status();
      r.setConstant(k_failed_point_residual);
      return r;
    }
    for (std::size_t i = 0; i < observations; ++i) {
      // ln(predicted / measured): symmetric, so one measurement that came out
      // at half the rate does not count as a 100% error while one at twice
      // counts 50%; then the soft-L1 loss.
      const double e = std::log(std::max(1e-9, 1 + (*errs)[i]));
      r[static_cast<Eigen::Index>(i)] = robust(e);
    }
    for (Eigen::Index k = 0; k < n; ++k) {
      r[static_cast<Eigen::Index>(observations) + k] = options.prior_weight * (x[k] - x0[k]);
    }
    return r;
  };
  LmOptions lm;
  lm.max_iterations = options.max_iterations;
  lm.difference_step = options.log_step;
  lm.step_tolerance = 1e-3;  // 0.1% in ln(value): below what a simulation run resolves
  lm.gradient_tolerance = 1e-9;
  Result<LmResult> solved = levenberg_marquardt(residuals, x0, lm);
  if (!solved.ok()) return solved.status();

  fit.values = values_of(solved->x);
  for (std::size_t i = 0; i < params.size(); ++i) {
    fit.values[i] = std::clamp(fit.values[i], params[i].min_value, params[i].max_value);
    if (params[i].integer) fit.values[i] = std::round(fit.values[i]);
  }
  Result<nlohmann::json> profile = apply_profile_params(base, params, fit.values);
  if (!profile.ok()) return profile.status();
  fit.profile = std::move(profile).value();
  fit.iterations = solved->iterations;
  fit.converged = solved->converged && fit.evaluations < options.max_evaluations;
  fit.failed_candidates = first_failure.ok() ? "" : first_failure.message();
  if (Status st = score_fitted(fit, base, params, measured, predict, options); !st.ok()) return st;
  for (std::size_t i = 0; i < params.size(); ++i) {
    record_fitted_source(fit.profile, nlohmann::json::json_pointer(params[i].pointer),
                         fmt::format("{} from {} measured points (analysis/profile_fit.hpp, simulator in the loop)",
                                     fitted_value_text(fit, i), measured.size()));
  }
  return fit;
}

std::string fitted_value_text(const ProfileFit& fit, std::size_t k) {
  const double se = k < fit.log_std_errors.size() ? fit.log_std_errors[k] : std::numeric_limits<double>::quiet_NaN();
  return value_with_interval_text(fit.values.at(k), se, fit.t95);
}

void record_fitted_source(nlohmann::json& profile, const nlohmann::json::json_pointer& pointer,
                          const std::string& how) {
  std::string key = pointer.to_string().substr(1);
  std::replace(key.begin(), key.end(), '/', '.');
  profile["sources"][key] = "fit: " + how + "; the profile's \"source\" names the measurements";
}

std::string fitted_values_text(const ProfileFit& fit) {
  std::string text;
  for (std::size_t i = 0; i < fit.names.size(); ++i) {
    text += fmt::format("{}{} {} (from {:.5g})", i ? ", " : "", fit.names[i], fitted_value_text(fit, i),
                        fit.start_values.at(i));
  }
  return text;
}

Result<std::vector<PredictionInterval>> prediction_intervals(const nlohmann::json& base, const ProfileFit& fit,
                                                             const std::vector<RunRecord>& predicted,
                                                             const PredictFn& predict,
                                                             const std::vector<std::string>& phases,
                                                             const std::string& metric, double log_step) {
  const std::size_t n = fit.names.size();
  if (fit.values.size() != n || fit.log_covariance.size() != n * n) {
    return error(StatusCode::invalid_argument, "prediction intervals: the fit has no uncertainty for its parameters");
  }
  Result<std::vector<ProfileParam>> found = find_profile_params(fit.names);
  if (!found.ok()) return found.status();
  const std::vector<ProfileParam>& params = *found;
  // The fitted predictions against themselves: every ratio 1, each phase's value kept for the interval.
  Result<std::vector<double>> self = paired_rel_errors(predicted, predicted, phases, metric);
  if (!self.ok()) return self.status();
  const Eigen::Index rows = static_cast<Eigen::Index>(self->size());
  const Eigen::Index cols = static_cast<Eigen::Index>(n);
  const ResidualFn ln_predictions = log_ratio_fn(base, params, predict, predicted, phases, metric, rows, nullptr);
  const Eigen::MatrixXd g =
      forward_jacobian(ln_predictions, log_values(fit.values), Eigen::VectorXd::Zero(rows), log_step);
  const Eigen::MatrixXd covariance = Eigen::Map<const Eigen::MatrixXd>(fit.log_covariance.data(), cols, cols);
  std::vector<PredictionInterval> out;
  std::size_t row = 0;
  for (const RunRecord& run : predicted) {
    for (const std::string& phase : phases) {
      const PhaseRecord* p = find_phase(run, phase);
      PredictionInterval pi;
      pi.predicted = p != nullptr ? phase_metric(*p, metric) : std::numeric_limits<double>::quiet_NaN();
      const Eigen::VectorXd gi = g.row(static_cast<Eigen::Index>(row)).transpose();
      pi.log_std_error = std::sqrt(gi.dot(covariance * gi) + fit.residual_variance);
      pi.low = pi.predicted * std::exp(-fit.t95 * pi.log_std_error);
      pi.high = pi.predicted * std::exp(fit.t95 * pi.log_std_error);
      out.push_back(pi);
      ++row;
    }
  }
  return out;
}

}  // namespace sluice::analysis
