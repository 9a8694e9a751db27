// Calibration: fit the transfer model (transfer_model.hpp) to measured runs,
// score it on held-out runs that were not used in the fit, and write the
// result as a sim profile (sim/sim_profile.hpp's file format) that sim/ loads
// by name from sim/profiles/<name>.json.
//
// The profile is the base profile (normally sim/profiles/default.json) with
// the fitted fields replaced and "name" and "source" set. sim/'s parser is
// strict (an unknown key is an error), so the fit residuals go into
// source.note as text and source.fit_error_pct holds the held-out median
// relative error (the prediction error, as sim_profile.hpp defines it).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/transfer_model.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

struct Calibration {
  TransferFit fit;
  std::vector<double> holdout_rel_errors;  // per held-out observation, fraction
  double holdout_median_rel_err = -1;      // < 0: no held-out point
  double holdout_p90_rel_err = -1;
};

// Fits on `fit`, scores on `holdout` (may be empty).
Result<Calibration> calibrate(const std::vector<Observation>& fit, const std::vector<Observation>& holdout);

// "RESULT F1 median_err=<pct> p90_err=<pct>" (two decimals); the F1
// acceptance line of issue 8.
std::string f1_line(const Calibration& calibration);

struct ProfileProvenance {
  std::string name;  // profile name (file name without .json)
  std::string machine;
  std::string date;      // ISO 8601; empty: today (UTC)
  std::string scenario;  // the calibration scenario / inputs
};

// The calibrated profile document. invalid_argument when `base` is not a
// sluice-sim-profile or lacks a patched field, or a fitted value falls outside
// sim's sanity bounds (factor in [1e-3, 1e3], cost <= 1 s).
Result<nlohmann::json> calibrated_profile(const nlohmann::json& base, const Calibration& calibration,
                                          const ProfileProvenance& provenance);

// Reads a profile JSON (the base); io_error / invalid_argument naming the path
// (and the line and column of a syntax error: base/json_text.hpp).
Result<nlohmann::json> read_json_file(const std::string& path);
// Today's date in UTC, ISO 8601 (a profile source's "date").
std::string today_utc();
// Writes JSON (indent 2, trailing newline); io_error naming the path.
Status write_json_file(const std::string& path, const nlohmann::json& document);

}  // namespace sluice::analysis
