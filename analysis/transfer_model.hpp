// TransferModel: the analytic throughput model of a striped file transfer
// over one shaped network link, with the parameters that sim/ exposes in its
// profile (sim/sim_profile.hpp):
//
//   network_bandwidth_factor  eta -> link_classes.network.bandwidth_factor
//   chunk_overhead_bytes      o   -> network.message_overhead_bytes = o / 2
//                                     (a chunk is a request and a response)
//   request_service_s         c   -> cpu.cost_ns_per_unit.storage_request
//                                     = c - client_request (the client's share
//                                     keeps its profile value)
//
// A point: `ranks` clients each move a file of file_bytes in chunks of
// chunk_bytes (n = ceil(file/chunk) chunks), striped over stripe_count
// targets, all through the client node's link of link_bytes_per_s with
// one-way latency link_latency_s. Each rank keeps one chunk request in flight
// per target (BeeGFS and sluice's client window), so the per-chunk fixed cost
// c + 2 x latency is paid n / stripe_count times in sequence, while the wire
// carries every rank's bytes:
//
//   T = ranks * n * (chunk + o) / (eta * link) + ceil(n / s) * (c + 2 * latency)
//   throughput = ranks * file / T
//
// This is the first-order store-and-forward model of Hockney ("The
// communication challenge for MPP", Parallel Computing 20(3), 1994: t = t0 +
// m / r_inf) applied per chunk, with the LV08 bandwidth factor (Velho et al.,
// ACM TOMACS 23(4), 2013) as eta. The fit is nonlinear least squares on
// relative throughput error over log-parameters (so all stay positive).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/least_squares.hpp"
#include "analysis/run_record.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

struct TransferPoint {
  double link_bytes_per_s = 0;
  double link_latency_s = 0;
  double file_bytes = 0;
  double chunk_bytes = 0;
  double stripe_count = 1;
  double ranks = 1;
};

struct TransferParams {
  double network_bandwidth_factor = 0.97;  // sim default (LV08)
  double chunk_overhead_bytes = 132;       // 2 x the sim default message_overhead_bytes
  double request_service_s = 1.5e-6;       // sim default storage_request + client_request
};

// Predicted throughput in bytes/s; 0 for a point with no bytes.
double predict_bytes_per_s(const TransferParams& params, const TransferPoint& point);

struct Observation {
  TransferPoint point;
  double bytes_per_s = 0;
  std::string label;  // where it came from (file, point key)
};

struct TransferFit {
  TransferParams params;
  // Standard errors of ln(network_bandwidth_factor), ln(chunk_overhead_bytes),
  // ln(request_service_s) (about the relative standard error of each) and the
  // Student t quantile of their 95% intervals (least_squares.hpp fit_uncertainty).
  double log_std_errors[3] = {0, 0, 0};
  double t95 = 0;
  double rms_rel_residual = 0;  // fit residual, fraction
  double max_rel_residual = 0;
  int iterations = 0;
  bool converged = false;
  std::size_t observations = 0;
};

// invalid_argument: fewer than 3 observations or a non-positive measurement.
Result<TransferFit> fit_transfer_model(const std::vector<Observation>& observations, const TransferParams& start = {},
                                       const LmOptions& options = {});

// Relative errors |pred - meas| / meas of each observation, in order.
std::vector<double> relative_errors(const TransferParams& params, const std::vector<Observation>& observations);

// The point of a measured run from its params: link_bits_per_s (or "link",
// e.g. "200mbit"), link_latency_ns (default 0), file_bytes / file_size,
// chunk_bytes / chunk_size / block_size, stripe_count, ranks / threads
// (default: the phase's ranks). invalid_argument naming the missing param.
Result<TransferPoint> transfer_point(const RunRecord& run, const PhaseRecord& phase);

// Observations of `phase` (e.g. "read") from every ok run; errors name the run.
Result<std::vector<Observation>> observations_from_runs(const std::vector<RunRecord>& runs, const std::string& phase);

}  // namespace sluice::analysis
