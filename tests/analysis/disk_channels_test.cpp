// The channel count of a drive from fit points (analysis/disk_channels.hpp,
// `sluice calibrate --estimate-channels`, issue 22 F4): points made by the same
// queueing model with a known count give that count back; bad points are
// refused naming the run and what is wrong.
#include "analysis/disk_channels.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::analysis {
namespace {

RunRecord point(std::uint64_t block, std::uint32_t depth, double read_ops_per_s, double write_ops_per_s = 0) {
  RunRecord r;
  r.label = std::to_string(block) + " qd" + std::to_string(depth);
  r.params = {{"bs_bytes", std::to_string(block)}, {"qd", std::to_string(depth)}, {"access", "random"}};
  PhaseRecord read;
  read.phase = "read";
  read.ops_per_s = read_ops_per_s;
  r.phases.push_back(read);
  if (write_ops_per_s > 0) {
    PhaseRecord write;
    write.phase = "write";
    write.ops_per_s = write_ops_per_s;
    r.phases.push_back(write);
  }
  return r;
}

// Points of 4 KiB blocks at `depths` from the model itself.
std::vector<RunRecord> model_points(std::uint32_t channels, double service_s, double delay_s,
                                    std::vector<std::uint32_t> depths = {1, 8, 64}) {
  std::vector<RunRecord> points;
  for (std::uint32_t d : depths)
    points.push_back(point(4096, d, closed_loop_ops_per_s(channels, service_s, delay_s, d)));
  return points;
}

Result<ChannelEstimate> estimate(const std::vector<RunRecord>& points) {
  return estimate_disk_channels(points, "bs_bytes", "qd", {"write", "read"});
}

TEST(DiskChannels, TheClosedLoopIsTheDelayPlusServiceAloneAndTheChannelsLimitAtDepth) {
  EXPECT_DOUBLE_EQ(closed_loop_ops_per_s(4, 40e-6, 10e-6, 1), 1 / 50e-6);
  EXPECT_NEAR(closed_loop_ops_per_s(4, 40e-6, 10e-6, 4096), 4 / 40e-6, 1e-3 * 4 / 40e-6);
  // One channel, no delay: the channel is always busy.
  EXPECT_NEAR(closed_loop_ops_per_s(1, 40e-6, 0, 8), 1 / 40e-6, 1e-9 / 40e-6);
  // Two requests on two channels collide half the time: 2 / (T (1 + 1/2)) ... by MVA, 1.5 / T.
  EXPECT_NEAR(closed_loop_ops_per_s(2, 40e-6, 0, 2), 2 / (40e-6 * 1.5), 1e-6);
}

TEST(DiskChannels, PointsOfAKnownChannelCountGiveItBack) {
  struct Case {
    std::uint32_t channels;
    double service_s;
    double delay_s;
    std::vector<std::uint32_t> depths;
  };
  const Case cases[] = {{1, 12e-6, 40e-6, {1, 8, 64}},
                        {3, 35e-6, 18e-6, {1, 8, 64}},
                        {4, 45e-6, 6e-6, {1, 8, 64}},
                        {8, 80e-6, 30e-6, {2, 16, 128}}};
  for (const Case& c : cases) {
    std::vector<RunRecord> points = model_points(c.channels, c.service_s, c.delay_s, c.depths);
    points.push_back(point(65536, 1, 1000));  // a larger block: not used
    Result<ChannelEstimate> e = estimate(points);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    EXPECT_EQ(e->channels, c.channels);
    EXPECT_EQ(e->block_bytes, 4096u);
    EXPECT_LT(e->worst_rel_error, 1e-6) << c.channels;
    ASSERT_EQ(e->phases.size(), 1u);
    const ChannelCandidate& found = e->phases[0].candidates.at(c.channels - 1);
    EXPECT_NEAR(found.service_s, c.service_s, 1e-3 * c.service_s);
    EXPECT_NEAR(found.delay_s, c.delay_s, 1e-3 * c.delay_s);
    EXPECT_NE(describe(*e).find("estimate: disk.channels = " + std::to_string(c.channels)), std::string::npos);
  }
}

TEST(DiskChannels, EveryPhaseMustAdmitTheCountAndTheWorstPhaseDecides) {
  // Reads of 4 channels, writes of 2: 3 and 4 channels need a negative time
  // off the drive for the writes (T too long for their depth-1 rate).
  std::vector<RunRecord> points;
  for (std::uint32_t d : {1u, 8u, 64u}) {
    points.push_back(
        point(4096, d, closed_loop_ops_per_s(4, 45e-6, 6e-6, d), closed_loop_ops_per_s(2, 20e-6, 2e-6, d)));
  }
  Result<ChannelEstimate> e = estimate(points);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->channels, 2u);
  EXPECT_GT(e->worst_rel_error, 0.01);  // the reads miss with 2
  ASSERT_EQ(e->phases.size(), 2u);
  EXPECT_EQ(e->phases[1].phase, "write");
  EXPECT_EQ(e->phases[1].candidates.size(), 2u);  // only 1 and 2 channels fit the writes
}

TEST(DiskChannels, RepeatsAtOneDepthCountByTheirMedian) {
  std::vector<RunRecord> points = model_points(3, 35e-6, 18e-6);
  std::vector<RunRecord> again = model_points(3, 35e-6, 18e-6);
  points.insert(points.end(), again.begin(), again.end());
  points.push_back(point(4096, 1, 5 * points[0].phases[0].ops_per_s));  // one wild repeat
  Result<ChannelEstimate> e = estimate(points);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->channels, 3u);
}

TEST(DiskChannels, BadPointsAreRefusedNamingTheRunAndTheProblem) {
  auto refused = [](std::vector<RunRecord> points, const std::string& expect) {
    Result<ChannelEstimate> e = estimate(points);
    ASSERT_FALSE(e.ok()) << expect;
    EXPECT_EQ(e.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(e.status().message().find(expect), std::string::npos) << e.status().message();
  };
  refused({}, "no measured phase");
  std::vector<RunRecord> no_depth = model_points(3, 35e-6, 18e-6);
  no_depth[1].params.erase("qd");
  refused(no_depth, "run 1 (\"4096 qd8\"): no parameter \"qd\"");
  std::vector<RunRecord> text_block = model_points(3, 35e-6, 18e-6);
  text_block[2].params["bs_bytes"] = "4KiB";
  refused(text_block, "run 2 (\"4096 qd64\"): parameter \"bs_bytes\" = \"4KiB\" is not a positive integer");
  std::vector<RunRecord> zero_depth = model_points(3, 35e-6, 18e-6);
  zero_depth[0].params["qd"] = "0";
  refused(zero_depth, "\"qd\" = \"0\" is not a positive integer");
  std::vector<RunRecord> deep = model_points(3, 35e-6, 18e-6);
  deep[0].params["qd"] = "100000000";
  refused(deep, "qd = 100000000 is above");
  std::vector<RunRecord> two_depths = model_points(3, 35e-6, 18e-6, {1, 8});
  refused(two_depths, "phase read: 4096-byte points at 2 depths; need 3");
  std::vector<RunRecord> no_rate = model_points(3, 35e-6, 18e-6);
  no_rate[1].phases[0].ops_per_s = 0;
  refused(no_rate, "run 1 (\"4096 qd8\") phase read: no positive ops_per_s");
  // Faster alone than any count allows at depth: a depth-64 rate below the
  // depth-1 rate fits no count with a time off the drive >= 0.
  std::vector<RunRecord> slower_at_depth = {point(4096, 1, 20000), point(4096, 8, 60000), point(4096, 64, 10000)};
  refused(slower_at_depth, "no channel count fits every phase");
}

// Before anything is measured: the design is checked from the points' parameters alone.
TEST(DiskChannels, TheDesignIsCheckedFromThePointsParametersAlone) {
  auto design = [](std::vector<RunRecord> points) {
    for (RunRecord& r : points) r.phases.clear();  // nothing measured yet
    return check_channel_design(points, "bs_bytes", "qd");
  };
  EXPECT_TRUE(design(model_points(3, 35e-6, 18e-6)).ok());
  // Larger blocks at fewer depths do not matter; the smallest block's depths do.
  std::vector<RunRecord> mixed = model_points(3, 35e-6, 18e-6);
  mixed.push_back(point(1 << 20, 1, 1000));
  EXPECT_TRUE(design(mixed).ok()) << design(mixed).message();
  std::vector<RunRecord> small_at_two = model_points(3, 35e-6, 18e-6);
  small_at_two.push_back(point(512, 1, 1000));
  small_at_two.push_back(point(512, 4, 1000));
  const Status two = design(small_at_two);
  EXPECT_EQ(two.code(), StatusCode::invalid_argument);
  EXPECT_NE(two.message().find("512-byte points at 2 depths; need 3"), std::string::npos) << two.message();
  std::vector<RunRecord> no_block = model_points(3, 35e-6, 18e-6);
  no_block[0].params.erase("bs_bytes");
  EXPECT_NE(design(no_block).message().find("run 0 (\"4096 qd1\"): no parameter \"bs_bytes\""), std::string::npos);
  EXPECT_NE(design({}).message().find("no points"), std::string::npos);
}

}  // namespace
}  // namespace sluice::analysis
