#include "core/workloads/train_epoch.hpp"

#include <gtest/gtest.h>

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
                                      std::unique_ptr<TestCluster>* keep = nullptr) {
  auto cluster = std::make_unique<TestCluster>();
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
