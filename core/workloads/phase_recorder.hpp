// PhaseRecorder: what one rank measures in one phase of a workload, and the
// metric names every workload shares.
//
// Metrics (into the rank's Env; the Env belongs to one service, i.e. one
// rank, so every name below is per phase and per rank; a world that merges
// services sums the counters and pools the samples):
//   <wl>.<phase>.bytes          counter, bytes moved by the phase's ops
//   <wl>.<phase>.ops            counter, operations completed
//   <wl>.<phase>.op_latency_ns  sample per operation (issue -> completion)
//   <wl>.<phase>.elapsed_ns     one sample per rank at the end of the phase:
//                               from start() (after the phase's start barrier)
//                               to the completion of the rank's last op
//   <wl>.<phase>.progress_bytes.<W>.<k>
//                               counters, written at finish(): bytes of the ops
//                               that completed in [k*W, (k+1)*W) ns after
//                               start(), the throughput over time. W starts at
//                               k_progress_first_width_ns and doubles (pairs of
//                               windows merge) whenever the phase outgrows
//                               k_max_progress_windows windows, so a rank keeps
//                               a bounded series at the finest width that fits;
//                               ranks may end at different W (a reader merges
//                               into the widest: every W is the first times a
//                               power of two).
// Bytes and ops are counted as each op completes, so a failed phase still
// shows how far it got.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/units.hpp"
#include "core/env.hpp"

namespace sluice {

inline constexpr TimeNs k_progress_first_width_ns = 1 * k_ns_per_ms;
inline constexpr std::size_t k_max_progress_windows = 512;

// One rank's totals for one phase: the input of summarize_phase.
struct RankPhaseResult {
  std::string phase;
  std::uint32_t rank = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  TimeNs elapsed_ns = 0;
};

class PhaseRecorder {
 public:
  PhaseRecorder(Env& env, std::string workload, std::string phase, std::uint32_t rank);

  // Marks the start of the measured interval (call after the start barrier).
  void start();
  // One completed operation: moved `bytes`, issued at issued_ns.
  void op(std::uint64_t bytes, TimeNs issued_ns);
  // Marks activity now without counting an op (the end of a compute step
  // that follows the phase's last read): elapsed extends at least to now.
  void touch();
  // Adds to a further per-phase counter, "<wl>.<phase>.<name>" (name carries units).
  void count(const std::string& name, double delta);
  // Records a further per-phase sample, "<wl>.<phase>.<name>".
  void sample(const std::string& name, double value);
  // Ends the interval: records elapsed_ns and returns the totals. elapsed is
  // last op completion (or touch) - start; 0 when
  // the phase had neither.
  RankPhaseResult finish();

  const std::string& prefix() const { return prefix_; }
  std::uint64_t bytes() const { return result_.bytes; }
  std::uint64_t ops() const { return result_.ops; }

 private:
  Env& env_;
  std::string prefix_;  // "<wl>.<phase>."
  RankPhaseResult result_;
  TimeNs started_ns_ = 0;
  TimeNs last_op_ns_ = 0;
  bool touched_ = false;
  // Throughput over time: bytes per window of progress_width_ns_ since start().
  std::vector<std::uint64_t> progress_;
  TimeNs progress_width_ns_ = k_progress_first_width_ns;
};

}  // namespace sluice
