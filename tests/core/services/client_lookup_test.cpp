// A client's lookups of a directory's placement: concurrent callers share one
// Stat (Client::dir_lookups_), as the Linux VFS lets one lookup of a name be
// in flight and the other threads wait for its dentry.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/core/services/scripted_workload.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

constexpr int k_concurrent = 16;

// Makes `dir` (unless empty), then creates k_concurrent files in `in` at once;
// each create's status lands in `statuses`.
Scripted::Script concurrent_creates(std::string dir, std::string in, std::vector<Status>* statuses) {
  return [dir, in, statuses](WorkloadContext& ctx, std::function<void(Status)> done) {
    auto create_all = [&ctx, in, statuses, done] {
      auto left = std::make_shared<int>(k_concurrent);
      for (int i = 0; i < k_concurrent; ++i) {
        ctx.client.create(in + "/f" + std::to_string(i), CreateOptions{},
                          [statuses, left, done](Result<proto::InodeDesc> r) {
                            statuses->push_back(r.status());
                            if (--*left == 0) done(ok_status());
                          });
      }
    };
    if (dir.empty()) return create_all();
    ctx.client.mkdir(dir, 0755, [create_all, done](Result<proto::InodeDesc> r) {
      if (!r.ok()) return done(r.status());
      create_all();
    });
  };
}

TEST(ClientLookup, ConcurrentCallersOfOneDirectoryShareOneStat) {
  TestCluster cluster(TestClusterSpec{});
  std::vector<Status> statuses;
  auto& host = cluster.add_host(std::make_unique<Scripted>(concurrent_creates("/d", "/d", &statuses)), 0, 1);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok()) << host.result().to_string();
  ASSERT_EQ(statuses.size(), static_cast<std::size_t>(k_concurrent));
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.to_string();
  // mkdir of /d needs only the root's placement; the 16 creates need /d's:
  // one Stat, the 15 others wait for it (each asked its own before).
  EXPECT_EQ(cluster.world().counter("meta.stat_ops"), 1.0);
  EXPECT_EQ(cluster.world().counter("client.dir_lookups_joined"), k_concurrent - 1.0);
  EXPECT_EQ(cluster.world().counter("meta.create_ops"), static_cast<double>(k_concurrent));
}

TEST(ClientLookup, AFailedLookupAnswersEveryCallerWithItsError) {
  TestCluster cluster(TestClusterSpec{});
  std::vector<Status> statuses;
  auto& host = cluster.add_host(std::make_unique<Scripted>(concurrent_creates("", "/missing", &statuses)), 0, 1);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok()) << host.result().to_string();
  ASSERT_EQ(statuses.size(), static_cast<std::size_t>(k_concurrent));
  for (const Status& s : statuses) {
    EXPECT_EQ(s.code(), StatusCode::not_found) << s.to_string();
  }
  // One request reached a metadata server: the Stat of /missing (a failed
  // Stat is not counted in meta.stat_ops).
  EXPECT_EQ(cluster.world().counter("meta.requests"), 1.0);
  EXPECT_EQ(cluster.world().counter("client.dir_lookups_joined"), k_concurrent - 1.0);
}

TEST(ClientLookup, ALookupAfterTheSharedOneIsAnsweredFromTheCache) {
  TestCluster cluster(TestClusterSpec{});
  std::vector<Status> statuses;
  Status later = error(StatusCode::internal, "not run");
  auto& host = cluster.add_host(std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
                                  concurrent_creates("/d", "/d", &statuses)(ctx, [&ctx, &later, done](Status s) {
                                    if (!s.ok()) return done(s);
                                    ctx.client.stat("/d/f3", [&later, done](Result<proto::InodeDesc> r) {
                                      later = r.status();
                                      done(ok_status());
                                    });
                                  });
                                }),
                                0, 1);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok()) << host.result().to_string();
  EXPECT_TRUE(later.ok()) << later.to_string();
  EXPECT_EQ(cluster.world().counter("meta.stat_ops"), 2.0);  // /d once, then /d/f3 itself
}

}  // namespace
}  // namespace sluice::testing
