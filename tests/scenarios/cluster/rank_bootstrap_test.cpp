// The cluster backend's bootstrap over the launcher's ranks (RankBootstrap)
// with an in-memory messenger between threads, and listen_address.
#include <gtest/gtest.h>

#include <thread>

#include "scenarios/deploy/cluster_point_run.hpp"
#include "scenarios/deploy/rank_bootstrap.hpp"
#include "tests/scenarios/cluster/hub_messenger.hpp"

namespace sluice::emulate {
namespace {

constexpr auto k_timeout = std::chrono::milliseconds(2000);

TEST(RankBootstrap, AllGatherBarrierAndGatherAcrossRanks) {
  Hub hub(3);
  std::vector<std::vector<std::string>> tables(3), gathered(3);
  std::vector<Status> barriers(3);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      HubMessenger m(hub, r);
      RankBootstrap b(m, k_timeout);
      for (int round = 0; round < 3; ++round) {  // several rounds in a row: answers never cross
        Result<std::vector<std::string>> all = b.all_gather("r" + std::to_string(r) + "." + std::to_string(round));
        ASSERT_TRUE(all.ok()) << all.status().message();
        tables[r] = *all;
      }
      barriers[r] = b.barrier("step");
      Result<std::vector<std::string>> g = b.gather_to_root("doc" + std::to_string(r));
      ASSERT_TRUE(g.ok()) << g.status().message();
      gathered[r] = *g;
    });
  }
  for (auto& t : threads) t.join();
  for (std::uint32_t r = 0; r < 3; ++r) {
    EXPECT_EQ(tables[r], (std::vector<std::string>{"r0.2", "r1.2", "r2.2"}));
    EXPECT_TRUE(barriers[r].ok()) << barriers[r].message();
  }
  EXPECT_EQ(gathered[0], (std::vector<std::string>{"doc0", "doc1", "doc2"}));
  EXPECT_TRUE(gathered[1].empty());
  EXPECT_TRUE(gathered[2].empty());
}

TEST(RankBootstrap, RanksAtDifferentCollectivesFailEverywhereNamingTheRank) {
  Hub hub(2);
  std::vector<Status> got(2);
  std::vector<Status> after(2);
  std::thread root([&] {
    HubMessenger m(hub, 0);
    RankBootstrap b(m, k_timeout);
    got[0] = b.barrier("servers-up");
    after[0] = b.barrier("next");
  });
  std::thread other([&] {
    HubMessenger m(hub, 1);
    RankBootstrap b(m, k_timeout);
    got[1] = b.barrier("clients-done");
    after[1] = b.barrier("next");
  });
  root.join();
  other.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(got[r].ok());
    EXPECT_NE(got[r].message().find("rank 1 is at barrier \"clients-done\""), std::string::npos) << got[r].message();
    // Once broken, every later collective fails at once with the first reason.
    ASSERT_FALSE(after[r].ok());
    EXPECT_NE(after[r].message().find("an earlier collective failed"), std::string::npos) << after[r].message();
  }
}

TEST(RankBootstrap, ARankThatEndedFailsTheCollectiveOnTheOthers) {
  Hub hub(3);
  hub.end(2, "exit 1");
  std::vector<Status> got(2);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      HubMessenger m(hub, r);
      RankBootstrap b(m, k_timeout);
      got[r] = b.all_gather("x").status();
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(got[r].ok());
    EXPECT_NE(got[r].message().find("rank 2 exit 1"), std::string::npos) << got[r].message();
  }
}

TEST(RankBootstrap, ARankThatNeverComesIsATimeoutNamingIt) {
  Hub hub(2);
  HubMessenger m(hub, 0);
  RankBootstrap b(m, std::chrono::milliseconds(200));
  const Status st = b.barrier("mgmt-up");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 1 did not take part"), std::string::npos) << st.message();
}

TEST(RankBootstrap, AMalformedRequestIsNamed) {
  Hub hub(2);
  hub.post(0, {1, false, "not json"});
  HubMessenger m(hub, 0);
  RankBootstrap b(m, k_timeout);
  const Status st = b.barrier("x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 1 sent a malformed request"), std::string::npos) << st.message();
}

TEST(RankBootstrap, AMalformedAnswerFromRankZeroIsCorrupt) {
  Hub hub(2);
  hub.post(1, {0, false, "{\"ok\": 3}"});
  HubMessenger m(hub, 1);
  RankBootstrap b(m, k_timeout);
  const Status st = b.barrier("x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::corrupt) << st.message();
}

TEST(ListenAddress, LiteralsSubnetsInterfacesAndAuto) {
  EXPECT_EQ(*listen_address("127.0.0.1"), "127.0.0.1");
  Result<std::string> sub = listen_address("127.0.0.0/8");
  ASSERT_TRUE(sub.ok()) << sub.status().message();
  EXPECT_EQ(*sub, "127.0.0.1");
  Result<std::string> lo = listen_address("lo");
  ASSERT_TRUE(lo.ok()) << lo.status().message();
  EXPECT_EQ(*lo, "127.0.0.1");
  Result<std::string> any = listen_address("auto");
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->empty());
  EXPECT_EQ(listen_address("10.0.0.0/33").status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(listen_address("192.0.2.300/24").status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(listen_address("no-such-interface0").status().code(), StatusCode::not_found);
  EXPECT_EQ(listen_address("203.0.113.0/24").status().code(), StatusCode::not_found);  // TEST-NET-3: not ours
}

}  // namespace
}  // namespace sluice::emulate
