#include "core/workloads/workload_steps.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <vector>

namespace sluice {
namespace {

TEST(RunSteps, RunsInOrderAndStopsAtFirstError) {
  std::vector<int> ran;
  std::optional<Status> result;
  std::vector<Step> steps;
  steps.push_back([&](StatusFn done) {
    ran.push_back(1);
    done(ok_status());
  });
  steps.push_back([&](StatusFn done) {
    ran.push_back(2);
    done(error(StatusCode::not_found, "two"));
  });
  steps.push_back([&](StatusFn done) {
    ran.push_back(3);
    done(ok_status());
  });
  run_steps(std::move(steps), [&](Status s) { result = s; });
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), StatusCode::not_found);
  EXPECT_EQ(result->message(), "two");
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
}

TEST(RunSteps, EmptyListIsOkAtOnce) {
  std::optional<Status> result;
  run_steps({}, [&](Status s) { result = s; });
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok());
}

TEST(RunSteps, WaitsForAsynchronousSteps) {
  StatusFn pending;
  std::optional<Status> result;
  std::vector<Step> steps;
  steps.push_back([&](StatusFn done) { pending = std::move(done); });
  steps.push_back([&](StatusFn done) { done(ok_status()); });
  run_steps(std::move(steps), [&](Status s) { result = s; });
  EXPECT_FALSE(result.has_value());
  pending(ok_status());
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok());
}

TEST(ForEachBounded, NeverExceedsMaxInflightAndRunsEveryIndexOnce) {
  std::vector<StatusFn> pending;
  std::vector<std::uint64_t> started;
  std::size_t max_seen = 0;
  std::optional<Status> result;
  for_each_bounded(
      10, 3,
      [&](std::uint64_t i, StatusFn done) {
        started.push_back(i);
        pending.push_back(std::move(done));
        max_seen = std::max(max_seen, pending.size());
      },
      [&](Status s) { result = s; });
  EXPECT_EQ(started.size(), 3u);
  while (!pending.empty()) {
    StatusFn done = std::move(pending.front());
    pending.erase(pending.begin());
    done(ok_status());
  }
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok());
  EXPECT_EQ(max_seen, 3u);
  EXPECT_EQ(started, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(ForEachBounded, SynchronousTasksDoNotGrowTheStack) {
  // A million synchronous completions would overflow the stack if each
  // completion recursed into the next start.
  std::uint64_t sum = 0;
  std::optional<Status> result;
  for_each_bounded(
      1'000'000, 4,
      [&](std::uint64_t i, StatusFn done) {
        sum += i;
        done(ok_status());
      },
      [&](Status s) { result = s; });
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok());
  EXPECT_EQ(sum, 999'999ULL * 1'000'000ULL / 2);
}

TEST(ForEachBounded, AfterAnErrorStartsNothingAndWaitsForInflight) {
  std::vector<StatusFn> pending;
  std::set<std::uint64_t> started;
  std::optional<Status> result;
  for_each_bounded(
      100, 4,
      [&](std::uint64_t i, StatusFn done) {
        started.insert(i);
        pending.push_back(std::move(done));
      },
      [&](Status s) { result = s; });
  ASSERT_EQ(pending.size(), 4u);
  StatusFn first = std::move(pending[0]);
  first(error(StatusCode::io_error, "disk"));
  EXPECT_FALSE(result.has_value()) << "three tasks are still in flight";
  for (std::size_t k = 1; k < 4; ++k) pending[k](ok_status());
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), StatusCode::io_error);
  EXPECT_EQ(started.size(), 4u) << "no task starts after the first error";
}

TEST(ForEachBounded, ZeroCountIsOkAndZeroInflightMeansOne) {
  std::optional<Status> result;
  for_each_bounded(
      0, 4, [](std::uint64_t, StatusFn done) { done(error(StatusCode::internal, "ran")); },
      [&](Status s) { result = s; });
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok());

  std::vector<StatusFn> pending;
  result.reset();
  for_each_bounded(
      3, 0, [&](std::uint64_t, StatusFn done) { pending.push_back(std::move(done)); }, [&](Status s) { result = s; });
  EXPECT_EQ(pending.size(), 1u);
}

TEST(DeriveSeed, DiffersPerCoordinateAndIsStable) {
  std::set<std::uint64_t> seeds;
  for (std::uint64_t a = 0; a < 50; ++a) {
    for (std::uint64_t b = 0; b < 50; ++b) seeds.insert(derive_seed(7, a, b));
  }
  EXPECT_EQ(seeds.size(), 2500u);
  EXPECT_EQ(derive_seed(7, 3, 4), derive_seed(7, 3, 4));
  EXPECT_NE(derive_seed(7, 3, 4), derive_seed(8, 3, 4));
  EXPECT_NE(derive_seed(7, 3, 4), derive_seed(7, 4, 3));
}

TEST(StatusHelpers, OkIfExistsAndAnnotate) {
  EXPECT_TRUE(ok_if_exists(error(StatusCode::already_exists, "x")).ok());
  EXPECT_EQ(ok_if_exists(error(StatusCode::not_found, "x")).code(), StatusCode::not_found);
  const Status a = annotate(error(StatusCode::corrupt, "byte 3"), "read /f");
  EXPECT_EQ(a.code(), StatusCode::corrupt);
  EXPECT_EQ(a.message(), "read /f: byte 3");
  EXPECT_TRUE(annotate(ok_status(), "x").ok());
}

}  // namespace
}  // namespace sluice
