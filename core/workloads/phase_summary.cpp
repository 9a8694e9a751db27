#include "core/workloads/phase_summary.hpp"

#include <algorithm>
#include <map>

namespace sluice {

namespace {

void set_rates(PhaseSummary& s) {
  if (s.first_done_ns > 0) {
    const double seconds = static_cast<double>(s.first_done_ns) / 1e9;
    s.first_bytes_per_s = s.first_bytes_estimate / seconds;
    s.first_ops_per_s = s.first_ops_estimate / seconds;
  }
  if (s.last_done_ns > 0) {
    const double seconds = static_cast<double>(s.last_done_ns) / 1e9;
    s.last_bytes_per_s = static_cast<double>(s.bytes) / seconds;
    s.last_ops_per_s = static_cast<double>(s.ops) / seconds;
  }
}

// One run of the phase by each rank.
PhaseSummary summarize_once(const std::vector<const RankPhaseResult*>& runs) {
  PhaseSummary s;
  bool first = true;
  for (const RankPhaseResult* run : runs) {
    const RankPhaseResult& r = *run;
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
  for (const RankPhaseResult* run : runs) {
    const RankPhaseResult& r = *run;
    if (r.ops == 0) continue;
    // A rank with elapsed 0 finished at t = 0 <= t1: it counts in full.
    const double fraction = r.elapsed_ns <= 0 ? 1.0 : std::min(1.0, t1 / static_cast<double>(r.elapsed_ns));
    s.first_bytes_estimate += static_cast<double>(r.bytes) * fraction;
    s.first_ops_estimate += static_cast<double>(r.ops) * fraction;
  }
  set_rates(s);
  return s;
}

}  // namespace

PhaseSummary summarize_phase(const std::vector<RankPhaseResult>& ranks) {
  // A rank's k-th run of the phase belongs to the phase's k-th occurrence.
  std::vector<std::vector<const RankPhaseResult*>> occurrences;
  std::map<std::uint32_t, std::size_t> runs_of_rank;
  for (const RankPhaseResult& r : ranks) {
    const std::size_t k = runs_of_rank[r.rank]++;
    if (occurrences.size() <= k) occurrences.resize(k + 1);
    occurrences[k].push_back(&r);
  }
  if (occurrences.size() <= 1)
    return summarize_once(occurrences.empty() ? decltype(occurrences)::value_type{} : occurrences[0]);
  PhaseSummary total;
  for (const auto& occurrence : occurrences) {
    const PhaseSummary s = summarize_once(occurrence);
    total.ranks = std::max(total.ranks, s.ranks);
    total.bytes += s.bytes;
    total.ops += s.ops;
    total.first_done_ns += s.first_done_ns;
    total.last_done_ns += s.last_done_ns;
    total.first_bytes_estimate += s.first_bytes_estimate;
    total.first_ops_estimate += s.first_ops_estimate;
  }
  set_rates(total);
  return total;
}

}  // namespace sluice
