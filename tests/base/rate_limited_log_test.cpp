// RateLimitedLog (base/rate_limited_log.hpp): the first event of a stream is
// logged, then one line per interval or per N events with the count
// suppressed. Time is passed in: no clock, no sleeps.
#include "base/rate_limited_log.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

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

// Issue 47: a folded burst of refusals kept only its count; each reason now
// keeps its own ("closed by the remote side (4 more since the last line)"
// said nothing of the three second challenges among them).
TEST(RateLimitedLog, AFoldedLineCountsEachReasonInTheOrderTheyCame) {
  RateLimitedLog limit(5, k_second_ns);
  ASSERT_TRUE(limit.admit(1, "closed by the remote side"));
  EXPECT_EQ(limit.line_suffix(), "") << "nothing folded before the first line";
  for (const char* reason : {"second challenge", "pre-auth bytes over 144", "second challenge", "second challenge"}) {
    EXPECT_FALSE(limit.admit(2, reason));
  }
  std::optional<std::uint64_t> line = limit.admit(3, "closed by the remote side");
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, 4u);
  EXPECT_EQ(limit.line_suffix(), " (4 more since the last line: 3 second challenge, 1 pre-auth bytes over 144)");
  EXPECT_FALSE(limit.admit(4));
  ASSERT_TRUE(limit.admit(k_second_ns * 2));
  EXPECT_EQ(limit.line_suffix(), " (1 more since the last line)") << "events without a reason: the count alone";
}

TEST(RateLimitedLog, ReasonsPastTheCapAndEventsWithoutOneCountAsOther) {
  RateLimitedLog limit(1'000, k_second_ns);
  ASSERT_TRUE(limit.admit(0, "first"));
  for (std::size_t i = 0; i < RateLimitedLog::k_max_reasons + 3; ++i) {
    EXPECT_FALSE(limit.admit(1, "reason " + std::to_string(i)));
  }
  EXPECT_FALSE(limit.admit(1));
  ASSERT_TRUE(limit.admit(k_second_ns));
  const std::string suffix = limit.line_suffix();
  EXPECT_NE(suffix.find("12 more since the last line: 1 reason 0, "), std::string::npos) << suffix;
  EXPECT_NE(suffix.find(", 4 other)"), std::string::npos) << suffix;
  EXPECT_EQ(suffix.find("reason 8"), std::string::npos) << "past k_max_reasons: " << suffix;
}

}  // namespace
}  // namespace sluice::base
