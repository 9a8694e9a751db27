// Each family of asserted invariants aborts, in every build type, with the
// file:line, the condition and its message when violated (death tests). The
// services call these checks where their state changes
// (core/services/invariants.hpp); the worlds keep the Env contract's
// completion ledger (core/world.hpp).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "core/common/assert.hpp"
#include "core/services/invariants.hpp"
#include "core/world.hpp"

namespace sluice {
namespace {

TEST(SluiceAssert, HoldsQuietlyAndAbortsNamingThePlaceTheConditionAndTheMessage) {
  SLUICE_ASSERT(1 + 1 == 2);
  SLUICE_ASSERT_MSG(true, std::string("not built"));
  EXPECT_DEATH(SLUICE_ASSERT(1 + 1 == 3), "assertion failed at .*invariants_test.cpp:[0-9]+: 1 \\+ 1 == 3");
  EXPECT_DEATH(SLUICE_ASSERT_MSG(2 < 1, "two is not below one"), "2 < 1 \\(two is not below one\\)");
}

#ifdef NDEBUG
TEST(SluiceAssert, StaysOnWhereNdebugTurnsAssertOff) { EXPECT_DEATH(SLUICE_ASSERT(false), "assertion failed"); }
#endif

TEST(Invariants, TheMirrorLogHoldsExactlyTheRecordsSentAndNotAcknowledged) {
  invariants::mirror_log(7, 10, 5, 16);  // 10 acked + 5 waiting = the 15 given
  invariants::mirror_log(0, 10, 0, 99);  // no stream: nothing to hold
  EXPECT_DEATH(invariants::mirror_log(7, 10, 4, 16), "mirror stream: 10 acknowledged \\+ 4 in the log");
  invariants::mirror_ack(15, 16);
  EXPECT_DEATH(invariants::mirror_ack(16, 16), "acknowledgement up to 16, but only 15 records were sent");
}

TEST(Invariants, ASecondaryAppliesRecordsInSequenceOrderOnce) {
  invariants::mirror_apply(4, 5);
  EXPECT_DEATH(invariants::mirror_apply(4, 6), "record 6 applied after record 4");
  EXPECT_DEATH(invariants::mirror_apply(4, 4), "record 4 applied after record 4");
}

TEST(Invariants, MapsVersionsOnlyGrow) {
  invariants::maps_version(3, 3);
  invariants::maps_version(3, 4);
  EXPECT_DEATH(invariants::maps_version(4, 3), "maps version 3 accepted after version 4");
}

TEST(Invariants, ARpcCallIsAnsweredOnce) {
  invariants::reply_once(true, 9);
  EXPECT_DEATH(invariants::reply_once(false, 9), "call 9 answered twice");
}

TEST(Invariants, ClientChunkRequestsInFlightStayWithinTheirBound) {
  invariants::inflight_chunks(0, +1, 64);
  invariants::inflight_chunks(64, -1, 64);
  EXPECT_DEATH(invariants::inflight_chunks(64, +1, 64), "64 chunk requests in flight \\(the maximum\\)");
  EXPECT_DEATH(invariants::inflight_chunks(0, -1, 64), "0 chunk requests in flight before one ends");
}

TEST(Invariants, EveryOperationCompletesExactlyOnce) {
  CompletionLedger ledger;
  ledger.started(1);
  ledger.started(2);
  ledger.completed(2);
  EXPECT_EQ(ledger.outstanding(), 1u);
  EXPECT_DEATH(ledger.completed(2), "a completion of op 2, which is not outstanding");
  EXPECT_DEATH(ledger.started(1), "op 1 handed out twice");
  ledger.forget_all();  // a killed service's operations are dropped, not completed
  EXPECT_DEATH(ledger.completed(1), "op 1, which is not outstanding");
}

TEST(Invariants, TheLedgerTracksManyOperationsCompletedInAnyOrder) {
  // The flat table's growth and its deletion by shifting, against a plain
  // set: 20,000 ids (0 too), started in order with gaps (other services'
  // ids), completed in a seeded random order while more start.
  CompletionLedger ledger;
  std::set<OpId> reference;
  std::vector<OpId> open;
  std::mt19937_64 rng(7);
  OpId next = 0;
  for (int step = 0; step < 40'000; ++step) {
    const bool start = open.empty() || (step < 30'000 && rng() % 3 != 0);
    if (start) {
      ledger.started(next);
      reference.insert(next);
      open.push_back(next);
      next += 1 + rng() % 3;
    } else {
      const std::size_t k = rng() % open.size();
      ledger.completed(open[k]);
      reference.erase(open[k]);
      open[k] = open.back();
      open.pop_back();
    }
    ASSERT_EQ(ledger.outstanding(), reference.size()) << "step " << step;
  }
  for (OpId op : open) ledger.completed(op);
  EXPECT_EQ(ledger.outstanding(), 0u);
  EXPECT_DEATH(ledger.completed(0), "a completion of op 0, which is not outstanding");
  ledger.started(5);
  EXPECT_DEATH(ledger.started(5), "op 5 handed out twice");
}

}  // namespace
}  // namespace sluice
