#include "analysis/calibration.hpp"

#include <chrono>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "analysis/import_input.hpp"
#include "analysis/profile_fit.hpp"
#include "analysis/stats.hpp"
#include "base/json_text.hpp"

namespace sluice::analysis {
namespace {

constexpr double k_min_factor = 1e-3;  // as sim/sim_profile.hpp
constexpr double k_max_factor = 1e3;
constexpr double k_max_cost_ns = 1e9;
constexpr double k_max_overhead_bytes = 1 << 20;

}  // namespace

std::string today_utc() {
  const auto now = std::chrono::system_clock::now();
  const std::chrono::year_month_day ymd{std::chrono::floor<std::chrono::days>(now)};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

Result<Calibration> calibrate(const std::vector<Observation>& fit, const std::vector<Observation>& holdout) {
  Result<TransferFit> f = fit_transfer_model(fit);
  if (!f.ok()) return f.status();
  Calibration c;
  c.fit = *f;
  if (!holdout.empty()) {
    c.holdout_rel_errors = relative_errors(c.fit.params, holdout);
    c.holdout_median_rel_err = *percentile(c.holdout_rel_errors, 0.5);
    c.holdout_p90_rel_err = *percentile(c.holdout_rel_errors, 0.9);
  }
  return c;
}

std::string f1_line(const Calibration& c) {
  return fmt::format("RESULT F1 median_err={:.2f} p90_err={:.2f}", 100 * c.holdout_median_rel_err,
                     100 * c.holdout_p90_rel_err);
}

Result<nlohmann::json> calibrated_profile(const nlohmann::json& base, const Calibration& c,
                                          const ProfileProvenance& provenance) {
  if (!base.is_object() || base.value("format", std::string{}) != "sluice-sim-profile") {
    return error(StatusCode::invalid_argument, "calibrated_profile: base is not a sluice-sim-profile document");
  }
  nlohmann::json p = base;
  const TransferParams& t = c.fit.params;
  if (!(t.network_bandwidth_factor >= k_min_factor && t.network_bandwidth_factor <= k_max_factor)) {
    return error(StatusCode::invalid_argument,
                 fmt::format("calibrated_profile: fitted network bandwidth_factor {} outside [{}, {}]",
                             t.network_bandwidth_factor, k_min_factor, k_max_factor));
  }
  if (!(t.chunk_overhead_bytes <= k_max_overhead_bytes)) {
    return error(StatusCode::invalid_argument, "calibrated_profile: fitted chunk overhead above 1 MiB");
  }
  const nlohmann::json::json_pointer k_factor("/link_classes/network/bandwidth_factor");
  const nlohmann::json::json_pointer k_overhead("/network/message_overhead_bytes");
  const nlohmann::json::json_pointer k_storage("/cpu/cost_ns_per_unit/storage_request");
  const nlohmann::json::json_pointer k_client("/cpu/cost_ns_per_unit/client_request");
  for (const auto& ptr : {k_factor, k_overhead, k_storage, k_client}) {
    if (!p.contains(ptr)) {
      return error(StatusCode::invalid_argument, "calibrated_profile: base profile lacks " + ptr.to_string());
    }
  }
  const double client_ns = p[k_client].is_number() ? p[k_client].get<double>() : 0.0;
  const double storage_ns = std::max(0.0, t.request_service_s * 1e9 - client_ns);
  if (!(storage_ns <= k_max_cost_ns)) {
    return error(StatusCode::invalid_argument, "calibrated_profile: fitted request service time above 1 s");
  }
  p[k_factor] = t.network_bandwidth_factor;
  p[k_overhead] = static_cast<std::uint64_t>(std::llround(t.chunk_overhead_bytes / 2));
  p[k_storage] = static_cast<std::uint64_t>(std::llround(storage_ns));
  for (const auto& ptr : {k_factor, k_overhead, k_storage}) {
    record_fitted_source(p, ptr,
                         "analysis/transfer_model.hpp on " + std::to_string(c.fit.observations) + " observations");
  }
  p["name"] = provenance.name;
  p["source"] = {
      {"kind", "fit"},
      {"machine", provenance.machine},
      {"date", provenance.date.empty() ? today_utc() : provenance.date},
      {"scenario", provenance.scenario},
      {"fit_error_pct", c.holdout_median_rel_err < 0 ? -1.0 : 100 * c.holdout_median_rel_err},
      {"note", fmt::format("analysis/transfer_model.hpp fit of network bandwidth_factor, message_overhead_bytes, "
                           "storage_request on {} observations ({} iterations, converged={}): rms residual "
                           "{:.2f}%, max residual {:.2f}%; held-out: {} points, median {:.2f}%, p90 {:.2f}%",
                           c.fit.observations, c.fit.iterations, c.fit.converged, 100 * c.fit.rms_rel_residual,
                           100 * c.fit.max_rel_residual, c.holdout_rel_errors.size(), 100 * c.holdout_median_rel_err,
                           100 * c.holdout_p90_rel_err)}};
  return p;
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  Result<ImportInput> input = read_import_input(path);
  if (!input.ok()) return input.status();
  Result<nlohmann::json> j = base::parse_json_text(input->text);
  if (!j.ok()) return error(j.status().code(), path + ": " + j.status().message());
  return j;
}

Status write_json_file(const std::string& path, const nlohmann::json& document) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error(StatusCode::io_error, "write_json_file: cannot create " + path);
  out << document.dump(2) << "\n";
  if (!out) return error(StatusCode::io_error, "write_json_file: cannot write " + path);
  return ok_status();
}

}  // namespace sluice::analysis
