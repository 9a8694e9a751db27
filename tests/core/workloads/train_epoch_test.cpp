#include "core/workloads/train_epoch.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>

#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

TrainEpochConfig small_dataset() {
  TrainEpochConfig c;
  c.samples = 96;
  c.sample_bytes = 64 * k_kib;
  c.samples_per_file = 4;
  c.batch_samples = 4;
  c.read_threads = 4;
  c.setup_dataset = true;
  c.create.chunk_bytes = 64 * k_kib;
  c.create.stripe_count = 2;
  return c;
}

std::vector<EpochResult> all_epochs(const std::vector<TrainEpoch*>& ranks) {
  std::vector<EpochResult> out;
  for (const TrainEpoch* r : ranks) out.insert(out.end(), r->epochs().begin(), r->epochs().end());
  return out;
}

// Runs a TrainEpoch config on a fresh 3-rank cluster; returns the ranks' epochs.
std::vector<EpochResult> run_training(const TrainEpochConfig& c, TestWorld** world_out = nullptr,
                                      std::unique_ptr<TestCluster>* keep = nullptr, std::uint64_t world_seed = 1) {
  TestClusterSpec spec;
  spec.world.seed = world_seed;
  auto cluster = std::make_unique<TestCluster>(spec);
  EXPECT_TRUE(cluster->ready().ok());
  auto ranks = cluster->launch_all<TrainEpoch>(c);
  EXPECT_TRUE(cluster->run()) << cluster->failures();
  EXPECT_EQ(cluster->failures(), "");
  auto epochs = all_epochs(ranks);
  if (world_out != nullptr) *world_out = &cluster->world();
  if (keep != nullptr) *keep = std::move(cluster);
  return epochs;
}

TEST(TrainEpoch, SetupThenEpochsReadEverySampleOncePerEpoch) {
  TrainEpochConfig c = small_dataset();
  c.epochs = 2;
  c.shuffle = true;
  c.compute_ns_per_step = 2 * k_ns_per_ms;
  TestWorld* w = nullptr;
  std::unique_ptr<TestCluster> cluster;
  const auto epochs = run_training(c, &w, &cluster);
  ASSERT_EQ(epochs.size(), 6u);  // 3 ranks x 2 epochs
  const double sample = static_cast<double>(c.sample_bytes);
  EXPECT_EQ(w->counter("train_epoch.setup.bytes"), 96 * sample);
  EXPECT_EQ(w->counter("train_epoch.epoch.bytes"), 2 * 96 * sample);
  EXPECT_EQ(w->counter("train_epoch.epoch.ops"), 2 * 96);
  EXPECT_EQ(w->counter("train_epoch.epoch.steps"), 2 * 3 * 8);  // 96 / (4 x 3) steps per epoch
  EXPECT_EQ(w->counter("train_epoch.epoch.compute_ns"), 2 * 3 * 8 * 2e6);
  EXPECT_EQ(w->samples("train_epoch.epoch.step_ns")->values.size(), 48u);
  EXPECT_EQ(w->samples("train_epoch.epoch.au_ratio")->values.size(), 6u);
  for (const EpochResult& e : epochs) {
    EXPECT_EQ(e.steps, 8u);
    EXPECT_EQ(e.samples_read, 32u);
    EXPECT_EQ(e.compute_ns, 8 * 2 * k_ns_per_ms);
    EXPECT_EQ(e.counted_compute_ns, 7 * 2 * k_ns_per_ms) << "step 1 is left out";
    EXPECT_GE(e.counted_step_ns, e.counted_compute_ns);
    EXPECT_GE(e.au, 0.0);
    EXPECT_LE(e.au, 1.0);
    EXPECT_DOUBLE_EQ(e.au, static_cast<double>(e.counted_compute_ns) / static_cast<double>(e.counted_step_ns));
    EXPECT_GE(e.elapsed_ns, e.compute_ns);
  }
}

TEST(TrainEpoch, AcceleratorUtilisationNearOneWhenComputeDominates) {
  TrainEpochConfig c = small_dataset();
  c.sample_bytes = 4 * k_kib;
  c.create.chunk_bytes = 0;
  c.create.stripe_count = 0;
  c.compute_ns_per_step = 50 * k_ns_per_ms;
  for (const EpochResult& e : run_training(c)) {
    EXPECT_GT(e.au, 0.95);
    EXPECT_LE(e.au, 1.0);
  }
}

TEST(TrainEpoch, AcceleratorUtilisationLowWhenIoBound) {
  TrainEpochConfig c = small_dataset();
  c.sample_bytes = 1 * k_mib;
  c.samples_per_file = 2;
  c.create.chunk_bytes = 256 * k_kib;
  c.compute_ns_per_step = 10 * k_ns_per_us;
  for (const EpochResult& e : run_training(c)) {
    EXPECT_LT(e.au, 0.5);
    EXPECT_GT(e.au, 0.0);
  }
}

TEST(TrainEpoch, PrefetchHidesReadsBehindCompute) {
  // Compute comparable to the read time of a batch: with no read-ahead the
  // accelerator waits for every batch; with two batches ahead it barely waits.
  TrainEpochConfig c = small_dataset();
  c.sample_bytes = 256 * k_kib;
  c.samples_per_file = 2;
  c.create.chunk_bytes = 256 * k_kib;
  c.compute_ns_per_step = 1 * k_ns_per_ms;
  c.prefetch_depth = 0;
  double au_none = 0;
  for (const EpochResult& e : run_training(c)) au_none += e.au / 3;
  c.prefetch_depth = 2;
  double au_two = 0;
  for (const EpochResult& e : run_training(c)) au_two += e.au / 3;
  EXPECT_GT(au_two, au_none + 0.1) << "none " << au_none << " two " << au_two;
}

TEST(TrainEpoch, HostBuffersTakeTheDirectPathWhereGpuBuffersBounce) {
  // The test cluster's transport reaches no GPU memory: reads into the
  // default GPU batch buffers bounce through host memory; with buffer_kind
  // host (DLIO's own loaders, a host without a GPU) every chunk goes direct.
  TrainEpochConfig c = small_dataset();
  TestWorld* gpu_world = nullptr;
  std::unique_ptr<TestCluster> gpu_cluster;
  run_training(c, &gpu_world, &gpu_cluster);
  EXPECT_GT(gpu_world->counter("client.chunks_bounce"), 0);
  c.buffer_kind = MemKind::host;
  TestWorld* host_world = nullptr;
  std::unique_ptr<TestCluster> host_cluster;
  const auto epochs = run_training(c, &host_world, &host_cluster);
  ASSERT_EQ(epochs.size(), 3u);
  EXPECT_EQ(host_world->counter("train_epoch.epoch.ops"), 96);
  EXPECT_EQ(host_world->counter("client.chunks_bounce"), 0);
  EXPECT_GT(host_world->counter("client.chunks_direct"), 0);
}

TEST(TrainEpoch, ReadsWithoutSetupFromAnExistingDataset) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  TrainEpochConfig setup = small_dataset();
  setup.run_tag = ".setup";
  cluster.launch_all<TrainEpoch>(setup);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TrainEpochConfig again = small_dataset();
  again.setup_dataset = false;
  again.run_tag = ".again";
  again.batch_samples = 8;  // 96 / 24 = 4 steps
  auto ranks = cluster.launch_all<TrainEpoch>(again);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  EXPECT_EQ(ranks[0]->epochs()[0].steps, 4u);
}

TEST(TrainEpoch, MissingDatasetFailsWithNotFound) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  TrainEpochConfig c = small_dataset();
  c.setup_dataset = false;
  c.dataset_dir = "/absent";
  c.barrier_max_wait_ns = 1 * k_ns_per_s;
  cluster.launch_all<TrainEpoch>(c, 1);
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(cluster.hosts()[0]->result().code(), StatusCode::not_found) << cluster.failures();
}

TEST(TrainEpoch, SingleStepEpochCountsItsOnlyStep) {
  TrainEpochConfig c = small_dataset();
  c.samples = 12;  // 12 / (4 x 3) = 1 step
  c.compute_ns_per_step = 1 * k_ns_per_ms;
  for (const EpochResult& e : run_training(c)) {
    EXPECT_EQ(e.steps, 1u);
    EXPECT_EQ(e.counted_compute_ns, 1 * k_ns_per_ms);
    EXPECT_GT(e.au, 0.0);
    EXPECT_LT(e.au, 1.0) << "the only step includes its reads";
  }
}

TEST(TrainEpoch, RefusesADatasetSmallerThanOneGlobalBatch) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  TrainEpochConfig c = small_dataset();
  c.samples = 11;  // < 4 x 3
  cluster.launch_all<TrainEpoch>(c);
  ASSERT_TRUE(cluster.run(100'000));
  EXPECT_EQ(cluster.hosts()[0]->result().code(), StatusCode::invalid_argument);
}

TEST(TrainEpoch, RefusesBadConfigurations) {
  TrainEpochConfig c;
  c.samples_per_file = 0;
  EXPECT_NE(TrainEpoch::validate(c).message().find("samples_per_file"), std::string::npos);
  c = {};
  c.read_threads = 0;
  EXPECT_NE(TrainEpoch::validate(c).message().find("read_threads"), std::string::npos);
  c = {};
  c.compute_ns_per_step = -1;
  EXPECT_NE(TrainEpoch::validate(c).message().find("compute_ns_per_step"), std::string::npos);
  c = {};
  c.epochs = 0;
  EXPECT_NE(TrainEpoch::validate(c).message().find("epochs"), std::string::npos);
  c = {};
  c.dataset_dir = "/";
  EXPECT_NE(TrainEpoch::validate(c).message().find("dataset_dir"), std::string::npos);
  c = {};
  c.compute_time_stdev = -1;
  EXPECT_NE(TrainEpoch::validate(c).message().find("compute_time_stdev"), std::string::npos);
  c = {};
  c.sample_bytes_stdev = 1;
  c.samples = k_train_max_drawn_samples + 1;
  EXPECT_NE(TrainEpoch::validate(c).message().find("sample_bytes_stdev"), std::string::npos);
  EXPECT_TRUE(TrainEpoch::validate(TrainEpochConfig{}).ok());
}

TEST(TrainEpoch, DatasetGeometry) {
  TrainEpochConfig c;
  c.samples = 10;
  c.samples_per_file = 4;
  c.sample_bytes = 100;
  TrainEpoch w(c);
  EXPECT_EQ(w.file_count(), 3u);
  EXPECT_EQ(w.file_bytes(0), 400u);
  EXPECT_EQ(w.file_bytes(2), 200u);
  EXPECT_EQ(w.file_bytes(3), 0u);
  EXPECT_EQ(w.file_path(2), "/dataset/f2");
  EXPECT_EQ(w.steps_per_epoch(2), 1u);  // 10 / (4 x 2)
}

// ---- spread of sample sizes and compute times (issue 52) ----------------------

std::vector<std::uint64_t> sizes_of(const TrainEpochConfig& c) {
  TrainEpoch w(c);
  std::vector<std::uint64_t> out;
  for (std::uint64_t j = 0; j < c.samples; ++j) out.push_back(w.sample_bytes(j));
  return out;
}

TrainEpochConfig spread_sizes() {
  TrainEpochConfig c;
  c.samples = 2000;
  c.samples_per_file = 4;
  c.sample_bytes = 64 * k_kib;
  c.sample_bytes_stdev = 16 * k_kib;
  return c;
}

TEST(TrainEpoch, ZeroStdevKeepsEverySampleAtTheMean) {
  TrainEpochConfig c = spread_sizes();
  c.sample_bytes_stdev = 0;
  c.compute_time_stdev = 0;
  TrainEpoch w(c);
  EXPECT_EQ(TrainEpoch::max_sample_bytes(c), c.sample_bytes);
  for (std::uint64_t j = 0; j < c.samples; ++j) {
    ASSERT_EQ(w.sample_bytes(j), c.sample_bytes);
    ASSERT_EQ(w.sample_offset(j), (j % 4) * c.sample_bytes);
  }
  EXPECT_EQ(w.file_bytes(0), 4 * c.sample_bytes);
}

TEST(TrainEpoch, DrawnSampleSizesSpreadAroundTheMeanAndRepeatForASeed) {
  const TrainEpochConfig c = spread_sizes();
  const std::vector<std::uint64_t> sizes = sizes_of(c);
  const double total = static_cast<double>(std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}));
  const double expected = static_cast<double>(c.samples * c.sample_bytes);
  // The sum's standard deviation is 16 KiB x sqrt(2000) = 0.55% of it: 2% is ~4 of them.
  EXPECT_NEAR(total / expected, 1.0, 0.02);
  double squares = 0;
  for (std::uint64_t b : sizes) {
    ASSERT_GE(b, k_train_min_sample_bytes);
    ASSERT_LE(b, TrainEpoch::max_sample_bytes(c));
    const double d = static_cast<double>(b) - static_cast<double>(c.sample_bytes);
    squares += d * d;
  }
  const double stdev = std::sqrt(squares / static_cast<double>(sizes.size()));
  EXPECT_NEAR(stdev / static_cast<double>(c.sample_bytes_stdev), 1.0, 0.1);
  EXPECT_GT(std::set<std::uint64_t>(sizes.begin(), sizes.end()).size(), 1900u) << "sizes differ across samples";
  EXPECT_EQ(sizes_of(c), sizes) << "the same seed draws the same sizes";
  TrainEpochConfig other = c;
  other.sample_bytes_seed = 2;
  const std::vector<std::uint64_t> other_sizes = sizes_of(other);
  std::size_t differ = 0;
  for (std::size_t j = 0; j < sizes.size(); ++j) differ += sizes[j] != other_sizes[j] ? 1 : 0;
  EXPECT_GT(differ, 1900u) << "another seed draws other sizes";
  // Files hold their samples back to back.
  TrainEpoch w(c);
  EXPECT_EQ(w.file_bytes(1), sizes[4] + sizes[5] + sizes[6] + sizes[7]);
  EXPECT_EQ(w.sample_offset(6), sizes[4] + sizes[5]);
}

TEST(TrainEpoch, SetupWritesAndEpochsReadTheDrawnSizes) {
  TrainEpochConfig c = small_dataset();  // 96 samples, 4 per file, patterned and verified
  c.sample_bytes_stdev = 16 * k_kib;
  c.epochs = 2;
  c.shuffle = true;
  const std::vector<std::uint64_t> sizes = sizes_of(c);
  const double total = static_cast<double>(std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}));
  ASSERT_NE(total, static_cast<double>(c.samples * c.sample_bytes));
  TestWorld* w = nullptr;
  std::unique_ptr<TestCluster> cluster;
  const auto epochs = run_training(c, &w, &cluster);
  ASSERT_EQ(epochs.size(), 6u);
  EXPECT_EQ(w->counter("train_epoch.setup.bytes"), total);
  EXPECT_EQ(w->counter("train_epoch.epoch.bytes"), 2 * total) << "every sample read whole, verified, each epoch";
  EXPECT_EQ(w->counter("train_epoch.epoch.ops"), 2 * 96);
}

TEST(TrainEpoch, ComputeSpreadWidensStepTimesButKeepsTheirMean) {
  TrainEpochConfig c = small_dataset();
  c.sample_bytes = 4 * k_kib;
  c.create.chunk_bytes = 0;
  c.create.stripe_count = 0;
  c.compute_ns_per_step = 50 * k_ns_per_ms;  // compute-bound: a step takes its compute
  c.epochs = 4;
  const auto step_stats = [&](TimeNs stdev, std::uint64_t seed) {
    TrainEpochConfig cc = c;
    cc.compute_time_stdev = stdev;
    TestWorld* w = nullptr;
    std::unique_ptr<TestCluster> cluster;
    run_training(cc, &w, &cluster, seed);
    const std::vector<double> v = w->samples("train_epoch.epoch.step_ns")->values;
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    double squares = 0;
    for (double x : v) squares += (x - mean) * (x - mean);
    return std::tuple{mean, std::sqrt(squares / static_cast<double>(v.size())),
                      w->counter("train_epoch.epoch.compute_ns")};
  };
  const auto [mean0, stdev0, compute0] = step_stats(0, 1);
  const auto [mean1, stdev1, compute1] = step_stats(c.compute_ns_per_step / 4, 1);
  const auto [mean1_again, stdev1_again, compute1_again] = step_stats(c.compute_ns_per_step / 4, 1);
  const auto [mean2, stdev2, compute2] = step_stats(c.compute_ns_per_step / 4, 2);
  EXPECT_EQ(compute0, 4 * 3 * 8 * 50e6) << "no spread: every step computes for the mean";
  EXPECT_LT(stdev0, 0.01 * mean0);
  EXPECT_GT(stdev1, 0.15 * mean1) << "a 25% compute spread shows in the step times";
  // 96 steps: the mean of the draws is within 25% / sqrt(96) = 2.6% per sigma; 10% is ~4 sigmas.
  EXPECT_NEAR(mean1 / mean0, 1.0, 0.10);
  EXPECT_NEAR(compute1 / compute0, 1.0, 0.10);
  EXPECT_EQ(compute1_again, compute1) << "the run's seed repeats the draws";
  EXPECT_EQ(mean1_again, mean1);
  EXPECT_NE(compute2, compute1) << "another run seed draws other compute times";
}

TEST(ShuffledSample, IsABijectionThatReallyShuffles) {
  for (std::uint64_t n : {1ULL, 2ULL, 3ULL, 17ULL, 1000ULL, 4097ULL}) {
    std::set<std::uint64_t> seen;
    std::uint64_t fixed_points = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t s = TrainEpoch::shuffled_sample(i, n, 42);
      ASSERT_LT(s, n);
      seen.insert(s);
      if (s == i) ++fixed_points;
    }
    EXPECT_EQ(seen.size(), n) << n;
    if (n >= 1000) {
      EXPECT_LT(fixed_points, n / 50) << n;
    }
  }
  EXPECT_NE(TrainEpoch::shuffled_sample(5, 1000, 1), TrainEpoch::shuffled_sample(5, 1000, 2));
}

}  // namespace
}  // namespace sluice::testing
