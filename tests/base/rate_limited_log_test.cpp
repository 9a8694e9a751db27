// RateLimitedLog (base/rate_limited_log.hpp): the first event of a stream is
// logged, then one line per interval or per N events with the count
// suppressed. Time is passed in: no clock, no sleeps.
#include "base/rate_limited_log.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace sluice::base {
namespace {

constexpr std::int64_t k_second_ns = 1'000'000'000;

TEST(RateLimitedLog, LogsTheFirstEventThenOneLinePerIntervalWithTheSuppressedCount) {
  RateLimitedLog limit(1'000, k_second_ns);
  std::optional<std::uint64_t> first = limit.admit(5);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, 0u);
  for (int i = 0; i < 99; ++i) EXPECT_FALSE(limit.admit(10 + i)) << "event " << i << " within the interval";
  EXPECT_EQ(limit.suppressed(), 99u);
  std::optional<std::uint64_t> next = limit.admit(5 + k_second_ns);
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, 99u) << "the line carries the events suppressed since the last one";
  EXPECT_EQ(limit.suppressed(), 0u);
  EXPECT_EQ(limit.lines(), 2u);
}

TEST(RateLimitedLog, ABurstFasterThanTheIntervalGetsOneLinePerNEvents) {
  RateLimitedLog limit(10, k_second_ns);
  std::uint64_t lines = 0;
  std::uint64_t reported = 0;
  for (int i = 0; i < 1'000; ++i) {
    if (std::optional<std::uint64_t> s = limit.admit(1)) {
      ++lines;
      reported += *s;
    }
  }
  EXPECT_EQ(lines, 100u);
  EXPECT_EQ(reported + lines + limit.suppressed(), 1'000u) << "every event is either logged or counted";
}

TEST(RateLimitedLog, SuffixSaysHowManyWereSuppressed) {
  EXPECT_EQ(RateLimitedLog::suffix(0), "");
  EXPECT_EQ(RateLimitedLog::suffix(41), " (41 more since the last line)");
}

TEST(RateLimitedLog, ZeroEveryEventsLogsEveryEvent) {
  RateLimitedLog limit(0, k_second_ns);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limit.admit(1));
}

}  // namespace
}  // namespace sluice::base
