#include "core/workloads/phase_summary.hpp"

#include <gtest/gtest.h>

namespace sluice {
namespace {

RankPhaseResult rank(std::uint32_t r, std::uint64_t bytes, std::uint64_t ops, TimeNs elapsed_ns) {
  RankPhaseResult out;
  out.phase = "write";
  out.rank = r;
  out.bytes = bytes;
  out.ops = ops;
  out.elapsed_ns = elapsed_ns;
  return out;
}

TEST(SummarizePhase, LastFinisherIsTotalOverSlowestRank) {
  // 3 ranks of 1 GB each, done in 1 s, 2 s and 4 s.
  const PhaseSummary s =
      summarize_phase({rank(0, 1'000'000'000, 1000, 1 * k_ns_per_s), rank(1, 1'000'000'000, 1000, 2 * k_ns_per_s),
                       rank(2, 1'000'000'000, 1000, 4 * k_ns_per_s)});
  EXPECT_EQ(s.ranks, 3u);
  EXPECT_EQ(s.bytes, 3'000'000'000u);
  EXPECT_EQ(s.ops, 3000u);
  EXPECT_EQ(s.first_done_ns, 1 * k_ns_per_s);
  EXPECT_EQ(s.last_done_ns, 4 * k_ns_per_s);
  EXPECT_DOUBLE_EQ(s.last_bytes_per_s, 3e9 / 4.0);
  EXPECT_DOUBLE_EQ(s.last_ops_per_s, 3000 / 4.0);
}

TEST(SummarizePhase, FirstFinisherEstimatesEachRanksProgressFromItsAverageRate) {
  // At t1 = 1 s: rank 0 done (1 GB), rank 1 half done (0.5 GB), rank 2 a quarter (0.25 GB).
  const PhaseSummary s =
      summarize_phase({rank(0, 1'000'000'000, 1000, 1 * k_ns_per_s), rank(1, 1'000'000'000, 1000, 2 * k_ns_per_s),
                       rank(2, 1'000'000'000, 1000, 4 * k_ns_per_s)});
  EXPECT_DOUBLE_EQ(s.first_bytes_estimate, 1.75e9);
  EXPECT_DOUBLE_EQ(s.first_bytes_per_s, 1.75e9);
  EXPECT_DOUBLE_EQ(s.first_ops_estimate, 1750);
  EXPECT_DOUBLE_EQ(s.first_ops_per_s, 1750);
  EXPECT_GT(s.first_bytes_per_s, s.last_bytes_per_s);
}

TEST(SummarizePhase, EqualRanksGiveEqualFirstAndLast) {
  const PhaseSummary s = summarize_phase({rank(0, 500, 5, 1000), rank(1, 500, 5, 1000)});
  EXPECT_DOUBLE_EQ(s.first_bytes_per_s, s.last_bytes_per_s);
  EXPECT_DOUBLE_EQ(s.last_bytes_per_s, 1000.0 / 1e-6);
}

TEST(SummarizePhase, RanksWithoutOpsAreLeftOut) {
  const PhaseSummary s = summarize_phase({rank(0, 0, 0, 0), rank(1, 100, 1, 100), rank(2, 300, 3, 300)});
  EXPECT_EQ(s.ranks, 2u);
  EXPECT_EQ(s.first_done_ns, 100);
  EXPECT_DOUBLE_EQ(s.first_bytes_estimate, 200);  // 100 + 300 * (100 / 300)
}

TEST(SummarizePhase, ZeroElapsedGivesZeroRatesNotInfinity) {
  const PhaseSummary s = summarize_phase({rank(0, 0, 3, 0), rank(1, 10, 1, 0)});
  EXPECT_EQ(s.ranks, 2u);
  EXPECT_EQ(s.first_bytes_per_s, 0);
  EXPECT_EQ(s.last_bytes_per_s, 0);
  EXPECT_EQ(summarize_phase({}).ranks, 0u);
}

TEST(SummarizePhase, APhaseRunTwicePerRankIsTheMeanRateOfItsRunsNotAllBytesOverOneRun) {
  // Two ranks, two bursts each: 1 GB per rank per burst; burst 1 lasts 1 s
  // (slowest rank), burst 2 lasts 2 s. 4 GB over 3 s, never 4 GB over 2 s
  // (the bytes of both bursts over one burst's time: a checkpoint burst's
  // write above the drives' rate, found by its bound, issue 48).
  const PhaseSummary s =
      summarize_phase({rank(0, 1'000'000'000, 10, k_ns_per_s / 2), rank(1, 1'000'000'000, 10, k_ns_per_s),
                       rank(0, 1'000'000'000, 10, 2 * k_ns_per_s), rank(1, 1'000'000'000, 10, k_ns_per_s)});
  EXPECT_EQ(s.ranks, 2u);
  EXPECT_EQ(s.bytes, 4'000'000'000u);
  EXPECT_EQ(s.ops, 40u);
  EXPECT_EQ(s.last_done_ns, 3 * k_ns_per_s);
  EXPECT_DOUBLE_EQ(s.last_bytes_per_s, 4e9 / 3);
  EXPECT_EQ(s.first_done_ns, k_ns_per_s / 2 + k_ns_per_s);
}

}  // namespace
}  // namespace sluice
