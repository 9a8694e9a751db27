#include "analysis/f1_synthetic.hpp"

#include <fmt/format.h>

#include "core/common/rng.hpp"

namespace sluice::analysis {
namespace {

constexpr double k_mib = 1024.0 * 1024.0;

Observation observe(const SyntheticF1Options& o, Rng& rng, double link_bits, double stripes, double file_bytes,
                    double chunk_bytes, double ranks) {
  TransferPoint p{link_bits / 8, o.link_latency_s, file_bytes, chunk_bytes, stripes, ranks};
  const double noise = 1 + o.noise_fraction * (2 * rng.uniform01() - 1);
  return {p, predict_bytes_per_s(o.truth, p) * noise,
          fmt::format("link={}bit stripe={} file={} chunk={} ranks={}", link_bits, stripes, file_bytes, chunk_bytes,
                      ranks)};
}

}  // namespace

SyntheticF1Data synthetic_f1_data(const SyntheticF1Options& o) {
  Rng rng(o.seed);
  SyntheticF1Data d;
  for (double link : {200e6, 500e6}) {
    for (double stripes : {1.0, 2.0}) {
      for (double file : {4 * k_mib, 16 * k_mib}) {
        for (double chunk : {0.25 * k_mib, 1 * k_mib}) {
          for (double ranks : {1.0, 2.0}) d.fit.push_back(observe(o, rng, link, stripes, file, chunk, ranks));
        }
      }
    }
  }
  for (double file : {8 * k_mib, 32 * k_mib}) {
    for (double chunk : {0.25 * k_mib, 1 * k_mib}) {
      for (double ranks : {1.0, 2.0}) d.holdout.push_back(observe(o, rng, 300e6, 3, file, chunk, ranks));
    }
  }
  return d;
}

Result<Calibration> run_synthetic_f1(const SyntheticF1Options& options) {
  const SyntheticF1Data d = synthetic_f1_data(options);
  return calibrate(d.fit, d.holdout);
}

}  // namespace sluice::analysis
