#include "core/workloads/gpu_stream.hpp"

#include <gtest/gtest.h>

#include "core/workloads/workload_limits.hpp"
#include "tests/core/workloads/file_checker.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

StreamConfig small_stream() {
  StreamConfig c;
  c.buffers = 24;
  c.buffer_bytes = 1 * k_mib;
  c.buffers_in_flight = 4;
  c.compute_ns_per_buffer = 100 * k_ns_per_us;
  return c;
}

TEST(GpuStream, RecordThenPlaybackMovesEveryBufferIntact) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  StreamConfig record = small_stream();
  record.run_tag = ".rec";
  auto recorders = cluster.launch_all<GpuStream>(record);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  const double total = 3 * 24 * static_cast<double>(k_mib);
  EXPECT_EQ(w.counter("stream.record.bytes"), total);
  EXPECT_EQ(w.counter("stream.record.ops"), 3 * 24);
  EXPECT_EQ(w.counter("stream.record.compute_ns"), 3 * 24 * 100e3);
  ASSERT_NE(w.samples("stream.record.mb_per_s"), nullptr);
  EXPECT_EQ(w.samples("stream.record.mb_per_s")->values.size(), 3u);
  for (double mb : w.samples("stream.record.mb_per_s")->values) EXPECT_GT(mb, 0);

  // The recording is the pattern, byte for byte.
  cluster.launch(
      [&](std::uint32_t) {
        return std::make_unique<FileChecker>(
            std::vector<CheckedFile>{CheckedFile{recorders[1]->file_path(1), recorders[1]->file_seed(1), 24 * k_mib}});
      },
      1);
  ASSERT_TRUE(cluster.run());
  ASSERT_EQ(cluster.failures(), "");

  StreamConfig playback = small_stream();
  playback.direction = StreamDirection::playback;
  playback.prepare_playback_file = false;  // play the recording back
  playback.remove_file = true;
  playback.run_tag = ".play";
  cluster.launch_all<GpuStream>(playback);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  EXPECT_EQ(w.counter("stream.playback.bytes"), total);
  EXPECT_EQ(w.counter("stream.playback.ops"), 3 * 24);
  w.run_until_idle(1'000'000);
  for (TargetId t : cluster.targets()) EXPECT_EQ(w.object_count(t), 0u) << "removed after playback";
}

TEST(GpuStream, PlaybackPreparesItsOwnFile) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  StreamConfig c = small_stream();
  c.direction = StreamDirection::playback;
  cluster.launch_all<GpuStream>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  EXPECT_EQ(cluster.world().counter("stream.playback.bytes"), 3 * 24 * static_cast<double>(k_mib));
  EXPECT_EQ(cluster.world().counter("stream.record.bytes"), 0) << "preparing is not recording";
}

TEST(GpuStream, ComputeStepsRunOneAtATimePerRank) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  StreamConfig c = small_stream();
  c.buffers = 20;
  c.compute_ns_per_buffer = 1 * k_ns_per_ms;  // far above a buffer's transfer time
  c.buffers_in_flight = 8;
  auto ranks = cluster.launch_all<GpuStream>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  for (GpuStream* r : ranks) {
    const TimeNs elapsed = r->results()[0].elapsed_ns;
    EXPECT_GE(elapsed, 20 * k_ns_per_ms) << "8 buffers in flight must not compute in parallel";
    EXPECT_LT(elapsed, 25 * k_ns_per_ms) << "the writes hide behind the computes";
  }
}

TEST(GpuStream, PlaybackOfAMissingRecordingFails) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  StreamConfig c = small_stream();
  c.direction = StreamDirection::playback;
  c.prepare_playback_file = false;
  cluster.launch_all<GpuStream>(c, 1);
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(cluster.hosts()[0]->result().code(), StatusCode::not_found);
}

TEST(GpuStream, RefusesBadConfigurations) {
  StreamConfig c;
  c.buffer_bytes = 0;
  EXPECT_NE(GpuStream::validate(c).message().find("buffer_bytes"), std::string::npos);
  c = {};
  c.buffers_in_flight = 0;
  EXPECT_NE(GpuStream::validate(c).message().find("buffers_in_flight"), std::string::npos);
  c = {};
  c.compute_ns_per_buffer = -5;
  EXPECT_NE(GpuStream::validate(c).message().find("compute_ns_per_buffer"), std::string::npos);
  c = {};
  c.buffer_bytes = k_workload_max_block_bytes;
  c.buffers = k_workload_max_items_per_rank;
  EXPECT_EQ(GpuStream::validate(c).code(), StatusCode::invalid_argument);
  EXPECT_TRUE(GpuStream::validate(StreamConfig{}).ok());
  EXPECT_EQ(to_string(StreamDirection::playback), "playback");
}

}  // namespace
}  // namespace sluice::testing
