// OpenFiles: the opens a metadata server holds (core/services/open_files.hpp).
#include "core/services/open_files.hpp"

#include <gtest/gtest.h>

namespace sluice {
namespace {

constexpr Endpoint k_a{1, 2};
constexpr Endpoint k_b{3, 2};

TEST(OpenFiles, AFileIsOpenWhileAnyClientHoldsIt) {
  OpenFiles opens;
  EXPECT_FALSE(opens.is_open(7));
  ASSERT_TRUE(opens.open(k_a, 1, 7, 0).ok());
  ASSERT_TRUE(opens.open(k_b, 1, 7, 0).ok()) << "the same open_id from another client is another open";
  EXPECT_EQ(opens.size(), 2u);
  EXPECT_EQ(opens.held(k_a, 1), std::optional<FileId>(7));
  EXPECT_EQ(opens.close(k_a, 1), std::optional<FileId>(7));
  EXPECT_TRUE(opens.is_open(7)) << "b holds it still";
  EXPECT_EQ(opens.close(k_b, 1), std::optional<FileId>(7));
  EXPECT_FALSE(opens.is_open(7));
  EXPECT_EQ(opens.size(), 0u);
}

TEST(OpenFiles, ResentOpensAndClosesCountOnce) {
  OpenFiles opens;
  ASSERT_TRUE(opens.open(k_a, 5, 9, 0).ok());
  ASSERT_TRUE(opens.open(k_a, 5, 9, 0).ok());  // the request again
  EXPECT_EQ(opens.size(), 1u);
  EXPECT_EQ(opens.close(k_a, 5), std::optional<FileId>(9));
  EXPECT_FALSE(opens.is_open(9)) << "one close ends what two identical opens held";
  EXPECT_EQ(opens.close(k_a, 5), std::nullopt) << "a resent close finds nothing";
  EXPECT_EQ(opens.close(k_b, 77), std::nullopt) << "an open from before a restart";
}

TEST(OpenFiles, AnOpenIdReusedForAnotherFileMovesTheOpen) {
  OpenFiles opens;
  ASSERT_TRUE(opens.open(k_a, 1, 10, 0).ok());
  ASSERT_TRUE(opens.open(k_a, 1, 11, 0).ok());
  EXPECT_FALSE(opens.is_open(10));
  EXPECT_TRUE(opens.is_open(11));
  EXPECT_EQ(opens.size(), 1u);
}

TEST(OpenFiles, PastItsLimitAnOpenIsRefusedWithAgainAndHeldOnesStillClose) {
  OpenFiles opens;
  for (std::uint64_t i = 1; i <= k_max_held_opens; ++i) ASSERT_TRUE(opens.open(k_a, i, i, 0).ok());
  const Status refused = opens.open(k_b, 1, 1, 0);
  EXPECT_EQ(refused.code(), StatusCode::again);
  EXPECT_NE(refused.message().find("k_max_held_opens"), std::string::npos) << refused.message();
  EXPECT_EQ(opens.room_for(k_b, 1).code(), StatusCode::again);
  EXPECT_TRUE(opens.room_for(k_a, 3).ok()) << "an open already held is no new one";
  EXPECT_TRUE(opens.open(k_a, 3, 3, 0).ok());
  EXPECT_EQ(opens.close(k_a, 1), std::optional<FileId>(1));
  EXPECT_TRUE(opens.open(k_b, 1, 1, 0).ok()) << "room again after a close";
}

// A client not heard since the time expire() is given loses every open it
// held; a file another client holds stays open, one only it held is named
// once in `unheld`. A heard client (any message, or an open) keeps its opens,
// and a client whose last open closed is forgotten, so a later expire() does
// not name it.
TEST(OpenFiles, AClientNotHeardSinceTheLeaseStartLosesItsOpens) {
  OpenFiles opens;
  ASSERT_TRUE(opens.open(k_a, 1, 7, 100).ok());
  ASSERT_TRUE(opens.open(k_a, 2, 8, 100).ok());
  ASSERT_TRUE(opens.open(k_a, 3, 8, 100).ok());
  ASSERT_TRUE(opens.open(k_b, 1, 7, 100).ok());
  opens.heard(k_b, 500);
  opens.heard(Endpoint{9, 9}, 500);  // holds nothing: not remembered
  OpenFiles::Expired gone = opens.expire(300);
  ASSERT_EQ(gone.clients.size(), 1u);
  EXPECT_EQ(gone.clients[0], k_a);
  EXPECT_EQ(gone.opens, 3u);
  EXPECT_EQ(gone.unheld, std::vector<FileId>{8}) << "7 is still b's";
  EXPECT_TRUE(opens.is_open(7));
  EXPECT_FALSE(opens.is_open(8));
  EXPECT_EQ(opens.size(), 1u);
  EXPECT_EQ(opens.held(k_a, 1), std::nullopt);
  EXPECT_EQ(opens.expire(300).opens, 0u) << "b was heard at 500";
  EXPECT_EQ(opens.close(k_b, 1), std::optional<FileId>(7));
  EXPECT_TRUE(opens.expire(1000).clients.empty()) << "b holds nothing and is forgotten";
  ASSERT_TRUE(opens.open(k_a, 4, 9, 2000).ok());
  opens.heard(k_a, 1500);  // an older message, delivered late, does not move the time back
  EXPECT_EQ(opens.expire(1800).opens, 0u);
  EXPECT_EQ(opens.expire(2001).opens, 1u);
}

}  // namespace
}  // namespace sluice
