// Aggregate throughput of one phase over all ranks, as elbencho reports it
// ("First done" and "Last done" columns; elbencho README, "Results").
//
// Input: per rank, the bytes and ops it moved in the phase and its elapsed
// time (PhaseRecorder: after the start barrier to its last op). Ranks that did
// no op are left out (they have no rate and would make "first done" zero).
//
// Definitions used here:
// - last-finisher (elbencho "last done"): everything the phase did, over the
//   slowest rank's elapsed time:
//       last_bytes_per_s = sum(bytes_i) / max(elapsed_i)
// - first-finisher (elbencho "first done"): what all ranks together had done
//   when the fastest rank finished, over that rank's elapsed time t1 =
//   min(elapsed_i). elbencho reads each thread's live counters at that moment;
//   we only have totals, so each rank's progress at t1 is ESTIMATED from its
//   average rate, i.e. as if it moved its bytes uniformly over its elapsed time:
//       done_i(t1) = bytes_i * min(1, t1 / elapsed_i)
//       first_bytes_per_s = sum(done_i(t1)) / t1
//   (ops likewise). A rank that ramps up slowly makes this an over-estimate.
// When the fastest rank's elapsed time is 0, the first-finisher rates are 0,
// and when every elapsed time is 0, so are the last-finisher rates.
//
// A phase a rank runs more than once (each burst of a checkpoint burst): a
// rank's k-th run belongs to the phase's k-th occurrence; each occurrence is
// summarized as above and they chain: bytes and ops add, so do the done
// times (the phase lasted the sum of its occurrences), `ranks` is the most
// in one occurrence. Every rate is then over the summed time: the mean rate
// of the bursts, never the bytes of all bursts over one burst's time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/units.hpp"
#include "core/workloads/phase_recorder.hpp"

namespace sluice {

struct PhaseSummary {
  std::uint32_t ranks = 0;          // ranks that did at least one op
  std::uint64_t bytes = 0;          // sum over ranks
  std::uint64_t ops = 0;            // sum over ranks
  TimeNs first_done_ns = 0;         // min elapsed
  TimeNs last_done_ns = 0;          // max elapsed
  double first_bytes_estimate = 0;  // sum of done_i(t1), see above
  double first_ops_estimate = 0;
  double first_bytes_per_s = 0;
  double first_ops_per_s = 0;  // IOPS at the first finisher
  double last_bytes_per_s = 0;
  double last_ops_per_s = 0;  // IOPS at the last finisher
};

PhaseSummary summarize_phase(const std::vector<RankPhaseResult>& ranks);

}  // namespace sluice
