// ProfileFit: fit sim profile parameters so that the simulator itself, not a
// stand-in formula, reproduces measured runs (issue 8's `sluice calibrate
// SCRIPT`). The caller supplies the simulator as a PredictFn: given a profile
// document, it runs the measured points in simulation and returns one
// RunRecord per point, in the same order. The fit is Levenberg-Marquardt
// (least_squares.hpp) over the logarithms of the chosen profile fields, so
// they stay positive and a step is a relative change; the Jacobian is taken by
// forward differences of whole simulation runs, with a step large enough
// (ProfileFitOptions::log_step) that integer fields (ns, bytes) move.
//
// Residuals: per measured point and phase, ln(predicted / measured) of the
// phase metric (default bytes_per_s, "last done"; about the relative error
// when small), through a soft-L1 loss of scale robust_scale (quadratic below
// it, linear above: a robust fit, Triggs et al., "Bundle Adjustment - A
// Modern Synthesis", 2000, section 3.3); plus one prior row
// per parameter, prior_weight x ln(value / base value). The prior is ridge
// regression (Tikhonov, "Solution of incorrectly formulated problems and the
// regularization method", Soviet Math. Dokl. 4, 1963): a parameter the
// measurements do not determine (a per-request cost when the link is the
// bottleneck everywhere) stays near its documented value instead of drifting,
// and the normal equations stay regular. With the default weight of 0.01,
// moving a parameter by a factor e costs as much as a 1% error on one point:
// little for a parameter the data determines, enough to hold one it does not
// (simulation runs have small numerical jitter that would otherwise push an
// undetermined parameter anywhere).
//
// A held-out point is never in `measured`: score it afterwards with
// paired_rel_errors on the simulator's prediction with the fitted profile.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_record.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

// Limits: simulator calls one fit may make, and iterations.
inline constexpr std::size_t k_max_fit_evaluations = 400;
inline constexpr int k_max_fit_iterations = 50;

// A profile field the fit may change (sim/sim_profile.hpp documents each).
struct ProfileParam {
  std::string name;      // as the CLI names it, e.g. "network.bandwidth_factor"
  std::string pointer;   // JSON pointer into the profile document
  bool integer = false;  // written rounded (ns, bytes fields)
  double min_value = 0;  // sim's sanity bounds (sim_profile.hpp validate()); the fit clamps to them
  double max_value = 0;
};

// The fields that can be fitted: network.bandwidth_factor,
// network.latency_factor, network.message_overhead_bytes,
// cpu.storage_request, cpu.client_request, disk.read_latency_ns,
// disk.write_latency_ns, disk.request_occupancy_ns,
// disk.read_bandwidth_factor, disk.write_bandwidth_factor,
// disk.read_request_bytes_per_s, disk.write_request_bytes_per_s (a drive
// measured with fio at several block sizes and queue depths; a request rate
// of 0, "none", in the base starts the fit at its lower bound, 1 MB/s, so
// give the base an estimate such as the drive's bandwidth),
// memory.memory_op_bytes_per_s (the rate of the client's pattern fill and
// verify and of checksums: on a small, loaded machine a per-byte CPU cost in
// series with the network); pcie.bandwidth_factor, pcie.latency_factor,
// memory.bandwidth_factor, staging.cpu_copy_bytes_per_s (the host-memory/PCIe
// model of a bounce into a GPU: `sluice calibrate --gpu-sweep`).
const std::vector<ProfileParam>& profile_params();
// invalid_argument naming the known ones.
Result<ProfileParam> find_profile_param(const std::string& name);
// Each of `names`, in order; the first unknown one's error.
Result<std::vector<ProfileParam>> find_profile_params(const std::vector<std::string>& names);

// The profile with the named fields set (clamped to their bounds, rounded
// where integer). invalid_argument when `base` is not a sluice-sim-profile
// or lacks a field.
Result<nlohmann::json> apply_profile_params(const nlohmann::json& base, const std::vector<ProfileParam>& params,
                                            const std::vector<double>& values);

// Runs the measured points in simulation with `profile`; one record per point, in order.
using PredictFn = std::function<Result<std::vector<RunRecord>>(const nlohmann::json& profile)>;

struct ProfileFitOptions {
  std::vector<std::string> params = {"network.bandwidth_factor", "memory.memory_op_bytes_per_s",
                                     "network.latency_factor"};
  std::vector<std::string> phases = {"write", "read"};
  std::string metric = "bytes_per_s";
  double prior_weight = 0.01;
  double robust_scale = 0.05;                 // soft-L1 scale in ln(pred/meas); 0: plain least squares
  double log_step = 0.03;                     // forward-difference step in ln(value)
  int max_iterations = 12;                    // <= k_max_fit_iterations
  std::size_t max_evaluations = 120;          // <= k_max_fit_evaluations; reaching it ends the fit (not converged)
  std::function<void(std::string_view)> log;  // one line per simulator call; may be empty
};

struct ProfileFit {
  nlohmann::json profile;                // base with the fitted fields (source untouched)
  std::vector<std::string> names;        // fitted fields
  std::vector<double> start_values;      // from the base profile
  std::vector<double> values;            // fitted
  std::vector<double> start_rel_errors;  // per point and phase, with the base profile (signed)
  std::vector<double> rel_errors;        // with the fitted profile (signed)
  double rms_rel_residual = 0;           // over rel_errors
  double max_rel_residual = 0;
  int iterations = 0;
  std::size_t evaluations = 0;
  bool converged = false;
  std::string failed_candidates;  // the first error of a candidate profile the simulator failed on ("" none)
  // How well the measurements determine the fitted values (least_squares.hpp
  // fit_uncertainty at the fitted values, in ln(value), from the ln-ratio
  // residuals alone: not the prior): log_std_errors[k] is about the relative
  // standard error of values[k] (+inf: the data do not determine it; NaN: no
  // degree of freedom); log_covariance is n x n, column-major. A 95% interval
  // of values[k] is values[k] x exp(+-t95 x log_std_errors[k]).
  std::vector<double> log_std_errors;
  std::vector<double> log_covariance;
  double residual_variance = 0;  // s^2 of the ln ratios, over m - n degrees of freedom
  double t95 = 0;                // Student's t quantile 0.975 at m - n
};

// invalid_argument: no measured point, an unknown parameter, fewer
// observations than parameters, a measured run that failed or lacks a phase;
// the PredictFn's error when the base profile's prediction fails.
Result<ProfileFit> fit_profile(const nlohmann::json& base, const std::vector<RunRecord>& measured,
                               const PredictFn& predict, const ProfileFitOptions& options = {});

// values[k] with its uncertainty (least_squares.hpp value_with_interval_text).
std::string fitted_value_text(const ProfileFit& fit, std::size_t k);
// Every fitted value, "name value +- se (95%: ..) (from start), ...": for a profile's source note.
std::string fitted_values_text(const ProfileFit& fit);

// Records in a profile document that the field at `pointer` was fitted: its
// entry of "sources" (sim_profile.hpp parameter_sources, keyed a.b.c for the
// pointer /a/b/c) becomes "fit: <how>; the profile's "source" names the
// measurements".
void record_fitted_source(nlohmann::json& profile, const nlohmann::json::json_pointer& pointer, const std::string& how);

// A 95% prediction interval of a fitted profile's prediction of another
// point (held out): ln of the prediction moves with the parameters as g
// (forward differences: one simulator run of the points per parameter); its
// variance is g^T C g + s^2, C the fit's log_covariance and s^2 its residual
// variance (the scatter of measurements around the model: where a new
// measurement of the point should fall), and the interval
// predicted x exp(+-t95 x sqrt(variance)).
struct PredictionInterval {
  double predicted = 0;
  double low = 0;
  double high = 0;
  double log_std_error = 0;
};
// `predicted`: the fitted profile's runs of the points (one per point, as
// predict returns them); one interval per point and phase, in that order.
// invalid_argument when the fit has no uncertainty or a phase is missing.
Result<std::vector<PredictionInterval>> prediction_intervals(const nlohmann::json& base, const ProfileFit& fit,
                                                             const std::vector<RunRecord>& predicted,
                                                             const PredictFn& predict,
                                                             const std::vector<std::string>& phases,
                                                             const std::string& metric, double log_step = 0.03);

// One record for repeated measurements of one point: the first repeat with
// each phase's bytes_per_s, ops_per_s and last_done_s replaced by their
// median over the repeats (a TCP retransmission timeout on an emulated link
// can halve one short run; the median keeps such a run out of the fit).
// invalid_argument: no repeat, a failed repeat, or repeats of different points.
Result<RunRecord> median_of_repeats(const std::vector<RunRecord>& repeats);

// Signed relative errors (predicted - measured) / measured of `metric` for
// each phase of each point, the two lists paired by position. invalid_argument
// naming the point when the lists differ in length, a run failed, a phase is
// missing or a measured value is not positive.
Result<std::vector<double>> paired_rel_errors(const std::vector<RunRecord>& predicted,
                                              const std::vector<RunRecord>& measured,
                                              const std::vector<std::string>& phases, const std::string& metric);

}  // namespace sluice::analysis
