#include "core/workloads/phase_summary.hpp"

#include <algorithm>

namespace sluice {

PhaseSummary summarize_phase(const std::vector<RankPhaseResult>& ranks) {
  PhaseSummary s;
  bool first = true;
  for (const RankPhaseResult& r : ranks) {
    if (r.ops == 0) continue;
    ++s.ranks;
    s.bytes += r.bytes;
    s.ops += r.ops;
    s.first_done_ns = first ? r.elapsed_ns : std::min(s.first_done_ns, r.elapsed_ns);
    s.last_done_ns = first ? r.elapsed_ns : std::max(s.last_done_ns, r.elapsed_ns);
    first = false;
  }
  if (s.ranks == 0) return s;
  const double t1 = static_cast<double>(s.first_done_ns);
  for (const RankPhaseResult& r : ranks) {
    if (r.ops == 0) continue;
    // A rank with elapsed 0 finished at t = 0 <= t1: it counts in full.
    const double fraction = r.elapsed_ns <= 0 ? 1.0 : std::min(1.0, t1 / static_cast<double>(r.elapsed_ns));
    s.first_bytes_estimate += static_cast<double>(r.bytes) * fraction;
    s.first_ops_estimate += static_cast<double>(r.ops) * fraction;
  }
  if (s.first_done_ns > 0) {
    const double seconds = t1 / 1e9;
    s.first_bytes_per_s = s.first_bytes_estimate / seconds;
    s.first_ops_per_s = s.first_ops_estimate / seconds;
  }
  if (s.last_done_ns > 0) {
    const double seconds = static_cast<double>(s.last_done_ns) / 1e9;
    s.last_bytes_per_s = static_cast<double>(s.bytes) / seconds;
    s.last_ops_per_s = static_cast<double>(s.ops) / seconds;
  }
  return s;
}

}  // namespace sluice
