#include "analysis/transfer_model.hpp"

#include <algorithm>
#include <cmath>

namespace sluice::analysis {
namespace {

Result<double> param_number(const RunRecord& run, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = run.params.find(n);
    if (it != run.params.end()) return parse_quantity(it->second);
  }
  return error(StatusCode::not_found, std::string("param ") + *names.begin());
}

}  // namespace

double predict_bytes_per_s(const TransferParams& p, const TransferPoint& x) {
  if (x.file_bytes <= 0 || x.chunk_bytes <= 0) return 0;
  const double n = std::ceil(x.file_bytes / x.chunk_bytes);
  const double wire_s =
      x.ranks * n * (x.chunk_bytes + p.chunk_overhead_bytes) / (p.network_bandwidth_factor * x.link_bytes_per_s);
  const double chain_s = std::ceil(n / std::max(1.0, x.stripe_count)) * (p.request_service_s + 2 * x.link_latency_s);
  return x.ranks * x.file_bytes / (wire_s + chain_s);
}

std::vector<double> relative_errors(const TransferParams& params, const std::vector<Observation>& obs) {
  std::vector<double> e;
  e.reserve(obs.size());
  for (const Observation& o : obs) {
    e.push_back(std::fabs(predict_bytes_per_s(params, o.point) - o.bytes_per_s) / o.bytes_per_s);
  }
  return e;
}

Result<TransferFit> fit_transfer_model(const std::vector<Observation>& obs, const TransferParams& start,
                                       const LmOptions& options) {
  if (obs.size() < 3) {
    return error(StatusCode::invalid_argument,
                 "fit_transfer_model: " + std::to_string(obs.size()) + " observations for 3 parameters");
  }
  for (const Observation& o : obs) {
    if (!(o.bytes_per_s > 0) || !(o.point.link_bytes_per_s > 0)) {
      return error(StatusCode::invalid_argument,
                   "fit_transfer_model: observation " + o.label + " has no positive throughput or link rate");
    }
  }
  auto unpack = [](const Eigen::VectorXd& v) { return TransferParams{std::exp(v[0]), std::exp(v[1]), std::exp(v[2])}; };
  const ResidualFn f = [&](const Eigen::VectorXd& v) {
    const TransferParams p = unpack(v);
    Eigen::VectorXd r(static_cast<Eigen::Index>(obs.size()));
    for (std::size_t i = 0; i < obs.size(); ++i) {
      r[static_cast<Eigen::Index>(i)] = predict_bytes_per_s(p, obs[i].point) / obs[i].bytes_per_s - 1.0;
    }
    return r;
  };
  Eigen::VectorXd x0(3);
  x0 << std::log(start.network_bandwidth_factor), std::log(start.chunk_overhead_bytes),
      std::log(start.request_service_s);
  Result<LmResult> lm = levenberg_marquardt(f, x0, options);
  if (!lm.ok()) return lm.status();
  TransferFit fit;
  fit.params = unpack(lm->x);
  fit.rms_rel_residual = lm->rms_residual;
  const std::vector<double> e = relative_errors(fit.params, obs);
  fit.max_rel_residual = *std::max_element(e.begin(), e.end());
  fit.iterations = lm->iterations;
  fit.converged = lm->converged;
  const Eigen::VectorXd r = f(lm->x);
  const FitUncertainty u = fit_uncertainty(forward_jacobian(f, lm->x, r, options.difference_step), r);
  for (Eigen::Index k = 0; k < 3; ++k) fit.log_std_errors[k] = u.std_errors[k];
  fit.t95 = u.t95;
  fit.observations = obs.size();
  return fit;
}

Result<TransferPoint> transfer_point(const RunRecord& run, const PhaseRecord& phase) {
  TransferPoint p;
  const std::string where = "transfer_point (" + point_key(run) + ")";
  Result<double> link = param_number(run, {"link_bits_per_s", "link"});
  if (!link.ok()) return error(StatusCode::invalid_argument, where + ": no link_bits_per_s or link param");
  p.link_bytes_per_s = *link / 8;
  if (Result<double> lat = param_number(run, {"link_latency_ns"}); lat.ok()) p.link_latency_s = *lat * 1e-9;
  Result<double> file = param_number(run, {"file_bytes", "file_size"});
  if (!file.ok()) return error(StatusCode::invalid_argument, where + ": no file_bytes or file_size param");
  p.file_bytes = *file;
  Result<double> chunk = param_number(run, {"chunk_bytes", "chunk_size", "block_size"});
  if (!chunk.ok()) return error(StatusCode::invalid_argument, where + ": no chunk_bytes/chunk_size/block_size param");
  p.chunk_bytes = *chunk;
  Result<double> stripe = param_number(run, {"stripe_count"});
  if (!stripe.ok()) return error(StatusCode::invalid_argument, where + ": no stripe_count param");
  p.stripe_count = *stripe;
  Result<double> ranks = param_number(run, {"ranks", "threads"});
  p.ranks = ranks.ok() ? *ranks : std::max<double>(1, phase.ranks);
  if (!(p.link_bytes_per_s > 0 && p.file_bytes > 0 && p.chunk_bytes > 0 && p.stripe_count >= 1 && p.ranks >= 1)) {
    return error(StatusCode::invalid_argument, where + ": a non-positive link, size, stripe count or rank count");
  }
  return p;
}

Result<std::vector<Observation>> observations_from_runs(const std::vector<RunRecord>& runs, const std::string& phase) {
  std::vector<Observation> out;
  for (const RunRecord& run : runs) {
    if (!run.ok) continue;
    for (const PhaseRecord& ph : run.phases) {
      if (ph.phase != phase || !std::isfinite(ph.bytes_per_s) || ph.bytes_per_s <= 0) continue;
      Result<TransferPoint> p = transfer_point(run, ph);
      if (!p.ok()) return p.status();
      out.push_back({*p, ph.bytes_per_s, point_key(run) + " " + run.backend});
    }
  }
  return out;
}

}  // namespace sluice::analysis
