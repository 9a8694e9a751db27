// Buddy mirroring (issue 9) on TestEnv: the shared scenarios with byte-level
// checks of both members' chunk objects, the states mgmt keeps, the resync log,
// the CRC check of forwarded writes and the refusals that fence a stale primary.
#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/services/resync_log.hpp"
#include "tests/core/services/buddy_mirror_scenarios.hpp"

namespace sluice::testing {
namespace {

// ---- ResyncLog -------------------------------------------------------------------

TEST(ResyncLog, MergesWritesOfOneFileIntoOneExtent) {
  ResyncLog log(4);
  log.record_write(7, 1000, 100);
  log.record_write(7, 0, 10);
  log.record_write(7, 5000, 1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log.take(), (ResyncChange{7, false, 0, 5001}));
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(log.take(), std::nullopt);
}

TEST(ResyncLog, ARemovalReplacesWritesAndAWriteAfterItStartsAfresh) {
  ResyncLog log(4);
  log.record_write(3, 0, 64);
  log.record_remove(3);
  EXPECT_EQ(log.take(), (ResyncChange{3, true, 0, 0}));
  log.record_remove(4);
  log.record_write(4, 128, 64);
  EXPECT_EQ(log.take(), (ResyncChange{4, false, 128, 192}));
}

TEST(ResyncLog, OverflowAsksForAFullResyncAndCountsLostRemovals) {
  ResyncLog log(2);
  log.record_write(1, 0, 1);
  log.record_write(2, 0, 1);
  EXPECT_FALSE(log.full());
  log.record_write(3, 0, 1);  // no room: the full resync covers it
  EXPECT_TRUE(log.full());
  EXPECT_EQ(log.overflows(), 1u);
  log.record_remove(4);  // no room and a full copy cannot remove: an orphan, counted
  EXPECT_EQ(log.lost_removals(), 1u);
  log.record_write(1, 10, 1);  // files already recorded still merge
  EXPECT_EQ(log.size(), 2u);
  EXPECT_TRUE(log.take_full());
  EXPECT_FALSE(log.take_full());
  EXPECT_FALSE(log.empty());  // the two recorded files are still to do
}

TEST(ResyncLog, RestoreMergesAFailedStepWithWhatCameSince) {
  ResyncLog log(4);
  log.restore(ResyncChange{5, false, 100, 200});
  log.record_write(5, 300, 50);
  EXPECT_EQ(log.take(), (ResyncChange{5, false, 100, 350}));
  log.record_remove(6);
  log.restore(ResyncChange{6, false, 0, 10});  // the newer removal wins
  EXPECT_EQ(log.take(), (ResyncChange{6, true, 0, 0}));
  EXPECT_FALSE(ResyncLog::validate(0).ok());
  EXPECT_NE(ResyncLog::validate(0).message().find("resync_log_max_files"), std::string::npos);
}

// ---- end to end on TestEnv ----------------------------------------------------------

// The world's log lines, for failure messages.
std::string logs_of(TestCluster& cluster) {
  std::string out;
  for (const std::string& line : cluster.world().logs()) out += "\n  " + line;
  return out;
}

// Both members of group 1 hold the same bytes for the file.
void expect_mirrored(TestCluster& cluster, FileId file, TargetId primary, TargetId secondary) {
  const std::vector<std::byte>* a = cluster.world().object_bytes(primary, file);
  const std::vector<std::byte>* b = cluster.world().object_bytes(secondary, file);
  ASSERT_NE(a, nullptr) << "no object of file " << file << " on target " << primary;
  ASSERT_NE(b, nullptr) << "no object of file " << file << " on target " << secondary;
  EXPECT_EQ(a->size(), b->size());
  EXPECT_TRUE(*a == *b) << "targets " << primary << " and " << secondary << " differ for file " << file;
}

TEST(BuddyMirror, WritesReachBothMembersBeforeTheyAreAcknowledged) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  auto inode = std::make_shared<proto::InodeDesc>();
  // No message faults and no failures: nothing may go on alone.
  ASSERT_TRUE(run_script(cluster, write_file("/f", 2 * k_mib, 5, inode)).ok());
  EXPECT_EQ(inode->stripe.pattern, proto::StripePattern::buddy_mirror);
  EXPECT_EQ(inode->stripe.targets.size(), 2u);
  expect_mirrored(cluster, inode->file_id, 1, 2);
  expect_mirrored(cluster, inode->file_id, 3, 4);
  EXPECT_EQ(cluster.world().counter("storage.mirror_received_bytes"), static_cast<double>(2 * k_mib));
  EXPECT_EQ(cluster.world().counter("storage.mirror_writes_alone"), 0.0);
  EXPECT_TRUE(cluster.storages()[0]->mirror_forwarding(1));
  EXPECT_TRUE(cluster.storages()[2]->mirror_forwarding(3));
  // Reads go to the primaries only: the secondaries served no ReadChunk.
  const double served_by_secondaries =
      static_cast<double>(cluster.storages()[1]->requests_served() + cluster.storages()[3]->requests_served());
  ASSERT_TRUE(run_script(cluster, read_and_verify("/f", 2 * k_mib, 5)).ok());
  EXPECT_EQ(static_cast<double>(cluster.storages()[1]->requests_served() + cluster.storages()[3]->requests_served()),
            served_by_secondaries);
  // The unlink is forwarded: the secondary's object goes too.
  ASSERT_TRUE(run_script(cluster, [](WorkloadContext& ctx, std::function<void(Status)> done) {
                ctx.client.unlink("/f", done);
              }).ok());
  cluster.world().run_for(k_ns_per_s);
  for (TargetId t : cluster.targets()) EXPECT_EQ(cluster.world().object_count(t), 0u) << "target " << t;
}

TEST(BuddyMirror, KilledPrimaryFailsOverAndEveryAcknowledgedWriteReadsBack) {
  mirror_failover_keeps_every_acknowledged_write<TestWorld>();
}

TEST(BuddyMirror, SecondaryAwayIsResyncedThenSurvivesItsPrimary) {
  mirror_resync_then_failover_keeps_the_data<TestWorld>();
}

TEST(BuddyMirror, ARestartedFormerPrimaryGetsWhatChangedWhileItWasDownThenTakesOverAgain) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  auto first = std::make_shared<proto::InodeDesc>();
  auto second = std::make_shared<proto::InodeDesc>();
  ASSERT_TRUE(run_script(cluster, write_file("/first", k_mib, 31, first)).ok());
  // Target 1's server crashes; target 2 takes over and takes /second alone.
  const Endpoint old_primary = server_of_target(cluster, 1);
  cluster.world().kill(old_primary);
  cluster.world().run_for(k_mirror_settle_ns);
  ASSERT_EQ(cluster.world().counter("mgmt.switchovers"), 1.0);
  ASSERT_TRUE(run_script(cluster, write_file("/second", k_mib, 32, second)).ok());
  EXPECT_EQ(cluster.world().object_bytes(1, second->file_id), nullptr);
  // It restarts (memory lost, chunk files kept): it registers again, stays
  // needs_resync, and its new primary copies /second's half to it, only that.
  cluster.world().revive(old_primary);
  cluster.storages()[0]->start();
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("storage.restarts"), 1.0);
  EXPECT_EQ(cluster.storages()[1]->resyncs_completed(), 1u) << logs_of(cluster);
  EXPECT_EQ(cluster.world().counter("storage.resync_bytes"), static_cast<double>(k_mib / 2));
  expect_mirrored(cluster, first->file_id, 2, 1);
  expect_mirrored(cluster, second->file_id, 2, 1);
  // Now target 2 dies: target 1, good again, takes over with everything.
  cluster.world().kill(server_of_target(cluster, 2));
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 2.0);
  EXPECT_TRUE(run_script(cluster, read_and_verify("/first", k_mib, 31)).ok());
  EXPECT_TRUE(run_script(cluster, read_and_verify("/second", k_mib, 32)).ok());
}

TEST(BuddyMirror, ResyncCopiesExactlyWhatChangedAndStatesFollowBeeGFS) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  auto before = std::make_shared<proto::InodeDesc>();
  auto away = std::make_shared<proto::InodeDesc>();
  ASSERT_TRUE(run_script(cluster, write_file("/before", k_mib, 1, before)).ok());
  Partition cut;
  cut.install(cluster.world(), server_of_target(cluster, 2));
  cut.on->store(true);
  ASSERT_TRUE(run_script(cluster, write_file("/away", k_mib, 2, away)).ok());
  StorageService& primary = *cluster.storages()[0];
  EXPECT_FALSE(primary.mirror_forwarding(1));
  EXPECT_TRUE(primary.mirror_resync_pending(1));
  // The secondary misses /away's chunks of group 1.
  EXPECT_EQ(cluster.world().object_bytes(2, away->file_id), nullptr);
  // While it is away, mgmt marks it offline; it stays needs_resync when it is back.
  cluster.world().run_for(k_mirror_settle_ns);
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_TRUE(primary.mirror_forwarding(1));
  EXPECT_EQ(primary.resyncs_completed(), 1u);
  expect_mirrored(cluster, away->file_id, 1, 2);
  expect_mirrored(cluster, before->file_id, 1, 2);
  // Only what changed was copied: group 1's half of /away, not /before.
  EXPECT_EQ(cluster.world().counter("storage.resync_bytes"), static_cast<double>(k_mib / 2));
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 0.0);
  // needs_resync (reported by the primary when its forward failed), then good after the resync.
  EXPECT_GE(cluster.world().counter("mgmt.consistency_changes"), 2.0);
  bool saw_good = false;
  for (const std::string& line : cluster.world().logs()) {
    if (line.find("target 2 is now good") != std::string::npos) saw_good = true;
  }
  EXPECT_TRUE(saw_good);
}

TEST(BuddyMirror, AnUnlinkTheSecondaryMissedIsReplayedByTheResync) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  auto file = std::make_shared<proto::InodeDesc>();
  ASSERT_TRUE(run_script(cluster, write_file("/gone", k_mib, 7, file)).ok());
  ASSERT_NE(cluster.world().object_bytes(2, file->file_id), nullptr);
  Partition cut;
  cut.install(cluster.world(), server_of_target(cluster, 2));
  cut.on->store(true);
  ASSERT_TRUE(run_script(cluster, [](WorkloadContext& ctx, std::function<void(Status)> done) {
                ctx.client.unlink("/gone", done);
              }).ok());
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().object_bytes(1, file->file_id), nullptr);
  EXPECT_NE(cluster.world().object_bytes(2, file->file_id), nullptr);  // it missed the forwarded removal
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.storages()[0]->resyncs_completed(), 1u) << logs_of(cluster);
  EXPECT_EQ(cluster.world().object_bytes(2, file->file_id), nullptr);
  for (TargetId t : cluster.targets()) EXPECT_EQ(cluster.world().object_count(t), 0u) << "target " << t;
}

TEST(BuddyMirror, AnOverflowingResyncLogFallsBackToAFullResync) {
  TestClusterSpec spec = buddy_mirrored_spec();
  spec.storage.mirror.resync_log_max_files = 1;
  TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok());
  Partition cut;
  cut.install(cluster.world(), server_of_target(cluster, 2));
  cut.on->store(true);
  std::vector<std::shared_ptr<proto::InodeDesc>> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(std::make_shared<proto::InodeDesc>());
    ASSERT_TRUE(run_script(cluster, write_file("/f" + std::to_string(i), k_mib, 40 + i, files.back())).ok());
  }
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.storages()[0]->resyncs_completed(), 1u);
  // Every object of target 1 was copied whole (and the one recorded file once more).
  EXPECT_GE(cluster.world().counter("storage.resync_bytes"), static_cast<double>(3 * k_mib / 2));
  for (const auto& f : files) expect_mirrored(cluster, f->file_id, 1, 2);
}

TEST(BuddyMirror, NoSwitchoverToAStaleSecondaryAndReadsFailClearlyInsteadOfHanging) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  Partition cut;
  cut.install(cluster.world(), server_of_target(cluster, 2));
  cut.on->store(true);
  ASSERT_TRUE(run_script(cluster, write_file("/f", k_mib, 3)).ok());
  // The primary dies before its secondary is resynced; the secondary comes back.
  cluster.world().kill(server_of_target(cluster, 1));
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 0.0);  // the secondary lacks data: no promotion
  const Status read = run_script(cluster, read_and_verify("/f", k_mib, 3));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.code(), StatusCode::timed_out) << read.to_string();
  EXPECT_NE(read.message().find("target 1"), std::string::npos) << read.to_string();
  EXPECT_NE(read.message().find("failovers in buddy group 1"), std::string::npos) << read.to_string();
}

// The secondary's heartbeats stop reaching mgmt just as its primary dies (a
// loaded host). mgmt hears neither; the secondary missed no acknowledged
// write, so it stays good and takes the group over once heard again. Before,
// mgmt marked it needs_resync when it went offline and the group had no
// member left to serve it.
TEST(BuddyMirror, ASecondaryHeardLateAfterItsPrimaryDiedStillTakesOver) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  ASSERT_TRUE(run_script(cluster, write_file("/f", k_mib, 71)).ok());
  cluster.world().run_for(k_mirror_maps_refresh_ns * 2);
  const Endpoint secondary = server_of_target(cluster, 2);
  const Endpoint mgmt = cluster.mgmt();
  LinkCut cut;
  cut.install(cluster.world(), secondary, mgmt);
  cluster.world().kill(server_of_target(cluster, 1));
  cluster.world().run_for(k_mirror_settle_ns);  // both silent past offline_after
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 0.0);
  EXPECT_EQ(cluster.mgmt_service().targets().at(2).consistency, proto::Consistency::good) << logs_of(cluster);
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 1.0) << logs_of(cluster);
  const Status read = run_script(cluster, read_and_verify("/f", k_mib, 71));
  EXPECT_TRUE(read.ok()) << read.to_string() << logs_of(cluster);
}

TEST(BuddyMirror, APrimaryCutOffFromMgmtIsSwitchedAwayFromAndCannotAcknowledgeAlone) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  auto before = std::make_shared<proto::InodeDesc>();
  auto during = std::make_shared<proto::InodeDesc>();
  ASSERT_TRUE(run_script(cluster, write_file("/before", k_mib, 61, before)).ok());
  // Target 1's server still reaches clients and its buddy, but not mgmt: mgmt
  // marks it offline and promotes target 2, which target 1 cannot learn.
  const Endpoint victim = server_of_target(cluster, 1);
  const Endpoint mgmt = cluster.mgmt();
  LinkCut cut;
  cut.install(cluster.world(), victim, mgmt);
  // A client that fetched its maps before the switchover writes after it.
  const Status written = run_script(cluster, [during](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.ops.expect(ctx.env.timer(k_mirror_settle_ns),
                   [&ctx, done, during](Completion&) { write_file("/during", k_mib, 62, during)(ctx, done); });
  });
  ASSERT_TRUE(written.ok()) << written.to_string();
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 1.0);
  // Target 2 refused target 1's forwards; the client went to target 2.
  EXPECT_GE(cluster.world().counter("client.mirror_failovers"), 1.0);
  EXPECT_EQ(cluster.world().counter("storage.mirror_writes_alone"), static_cast<double>(k_mib / 2 / (64 * k_kib)));
  // Back in touch: target 1 learns it is the secondary and is resynced from target 2.
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.storages()[1]->resyncs_completed(), 1u) << logs_of(cluster);
  EXPECT_TRUE(cluster.storages()[1]->mirror_forwarding(2));
  expect_mirrored(cluster, during->file_id, 2, 1);
  expect_mirrored(cluster, before->file_id, 2, 1);
  EXPECT_TRUE(run_script(cluster, read_and_verify("/before", k_mib, 61)).ok());
  EXPECT_TRUE(run_script(cluster, read_and_verify("/during", k_mib, 62)).ok());
}

// A chunk sent to a primary that died goes to the new one at its first
// unanswered attempt after mgmt switched the group over (the client refreshes
// its maps before each retry), not after all of its attempts (2 + 4 + 8 s):
// the failover study's stall was 14.0 s in simulation before, 6.0 s since.
// Here: offline after 2 s, the file written across the kill done 2-8 s later.
TEST(BuddyMirror, AChunkFollowsTheSwitchoverAtItsNextUnansweredAttempt) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  const Endpoint victim = server_of_target(cluster, 1);
  TestWorld* world = &cluster.world();
  auto killed_at = std::make_shared<TimeNs>(-1);
  cluster.world().add_fault(
      MessageRule{[world, victim, killed_at](const Endpoint&, const Endpoint& to, const proto::Message& m) {
                    if (to == victim && std::holds_alternative<proto::WriteChunk>(m) && *killed_at < 0) {
                      *killed_at = world->now();
                      world->kill(victim);
                    }
                    return false;
                  },
                  FaultAction::delay, 0, ~std::uint64_t{0}});
  ASSERT_TRUE(run_script(cluster, write_file("/across", k_mib, 12)).ok());
  ASSERT_GE(*killed_at, 0);
  const double waited_s = static_cast<double>(cluster.world().now() - *killed_at) / static_cast<double>(k_ns_per_s);
  EXPECT_GE(waited_s, static_cast<double>(k_mirror_offline_ns) / static_cast<double>(k_ns_per_s));
  EXPECT_LT(waited_s, 8.0);
  EXPECT_GE(cluster.world().counter("rpc.abandoned_for_new_server"), 1.0);
  EXPECT_TRUE(run_script(cluster, read_and_verify("/across", k_mib, 12)).ok());
}

// The maps a retry asks for (still_there) are waited for at most
// ClientConfig::mirror_check_wait_ns: with mgmt unreachable, a chunk whose
// first send was lost goes to the same, live primary 2 s + 0.5 s later, not
// after the maps call's own 14 s.
TEST(BuddyMirror, ARetryWaitsForTheMapsNoLongerThanTheMirrorCheckWait) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  const Endpoint primary = server_of_target(cluster, 1);
  const Endpoint mgmt = cluster.mgmt();
  const std::vector<NodeId> clients = cluster.client_nodes();
  auto lost_at = std::make_shared<TimeNs>(-1);
  auto cut = std::make_shared<bool>(true);
  TestWorld* world = &cluster.world();
  cluster.world().add_fault(MessageRule{
      [world, primary, mgmt, clients, lost_at, cut](const Endpoint& from, const Endpoint& to, const proto::Message& m) {
        if (to == primary && std::holds_alternative<proto::WriteChunk>(m) && *lost_at < 0) {
          *lost_at = world->now();
          return true;  // the first chunk to the primary is lost
        }
        // From then on the client cannot reach mgmt.
        const bool from_client = std::find(clients.begin(), clients.end(), from.node) != clients.end();
        return *cut && *lost_at >= 0 && from_client && to == mgmt && std::holds_alternative<proto::GetMaps>(m);
      },
      FaultAction::drop, 0, ~std::uint64_t{0}});
  ASSERT_TRUE(run_script(cluster, write_file("/late", k_mib, 13)).ok());
  ASSERT_GE(*lost_at, 0);
  *cut = false;
  const double waited_s = static_cast<double>(cluster.world().now() - *lost_at) / static_cast<double>(k_ns_per_s);
  const double check_s = static_cast<double>(ClientConfig{}.mirror_check_wait_ns) / static_cast<double>(k_ns_per_s);
  EXPECT_GE(waited_s, 2.0 + check_s);
  EXPECT_LT(waited_s, 2.0 + check_s + 1.0);
  EXPECT_EQ(cluster.world().counter("rpc.abandoned_for_new_server"), 0.0);
  EXPECT_TRUE(run_script(cluster, read_and_verify("/late", k_mib, 13)).ok());
}

TEST(BuddyMirror, WithSwitchoverOffADeadPrimaryIsWaitedForAndNotReplaced) {
  TestClusterSpec spec = buddy_mirrored_spec();
  spec.mgmt.buddy_switchover = false;
  TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok());
  ASSERT_TRUE(run_script(cluster, write_file("/f", k_mib, 8)).ok());
  cluster.world().kill(server_of_target(cluster, 1));
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 0.0);
  ClientConfig patient = cluster.spec().client;
  patient.mirror_failovers = 1;  // keeps the failing read short
  ClientHost& host = cluster.add_host(std::make_unique<Scripted>(read_and_verify("/f", k_mib, 8)), 0, 1, patient);
  ASSERT_TRUE(cluster.run());
  ASSERT_FALSE(host.result().ok());
  EXPECT_EQ(host.result().code(), StatusCode::timed_out) << host.result().to_string();
  EXPECT_NE(host.result().message().find("after 1 failovers in buddy group 1"), std::string::npos)
      << host.result().to_string();
}

// ---- the secondary's checks and mgmt's fence, message by message ------------------

// A service that runs a script at start and keeps every reply it receives.
class Probe final : public Service {
 public:
  using Script = std::function<void(Env&, OpTable&)>;
  Probe(Env& env, Script script) : env_(env), script_(std::move(script)) {}
  void start() override { script_(env_, ops_); }
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) {
      ops_.dispatch(*c);
      return;
    }
    replies.push_back(std::get<Delivery>(event).message);
  }
  std::string name() const override { return "probe"; }
  std::vector<proto::Message> replies;

 private:
  Env& env_;
  OpTable ops_;
  Script script_;
};

Status status_of_reply(const proto::Message& m) { return reply_status(m); }

// The file and size of the probe's hand-made mirrored writes.
constexpr FileId k_file = 99;
constexpr std::uint64_t k_bytes = 64 * k_kib;

TEST(BuddyMirror, TheSecondaryChecksTheForwardedBytesCrcAndRefusesAStalePrimary) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  cluster.world().run_for(k_ns_per_s);  // every server has loaded the maps
  const Endpoint secondary = server_of_target(cluster, 2);
  const Endpoint primary = server_of_target(cluster, 1);
  // From the probe's memory (as the primary's staging would be): a MirrorWrite
  // with a wrong CRC, one with the right CRC, and one to a primary.
  Probe& probe = cluster.world().add_service<Probe>(cluster.client_nodes()[0], [=](Env& env, OpTable& ops) {
    MemHandle buf = env.alloc(MemKind::pinned, 0, k_bytes).value();
    ops.expect(env.fill(buf, PatternSpec{77, 0}), [&env, &ops, buf, secondary, primary](Completion&) {
      ops.expect(env.checksum(buf), [&env, buf, secondary, primary](Completion& sum) {
        proto::MirrorWrite mw;
        mw.group = 1;
        mw.primary = 1;
        mw.target = 2;
        mw.file_id = k_file;
        mw.length = k_bytes;
        mw.src = buf;
        mw.request_id = 1;
        mw.crc32c = sum.crc32c ^ 1u;  // one bit off
        env.send(secondary, mw).ignore();
        mw.request_id = 2;
        mw.crc32c = sum.crc32c;
        env.send(secondary, mw).ignore();
        mw.request_id = 3;
        mw.target = 1;  // target 1 is group 1's primary: it refuses to act as a secondary
        mw.primary = 2;
        env.send(primary, mw).ignore();
      });
    });
  });
  cluster.world().run_for(k_ns_per_s);
  ASSERT_EQ(probe.replies.size(), 3u);
  std::map<RequestId, Status> by_id;
  for (auto& r : probe.replies) by_id[*request_id_of(r)] = status_of_reply(r);
  EXPECT_EQ(by_id[1].code(), StatusCode::corrupt) << by_id[1].to_string();
  EXPECT_NE(by_id[1].message().find("CRC32C mismatch on mirrored write"), std::string::npos);
  EXPECT_TRUE(by_id[2].ok()) << by_id[2].to_string();
  EXPECT_EQ(by_id[3].code(), StatusCode::invalid_argument) << by_id[3].to_string();
  EXPECT_NE(by_id[3].message().find("is the primary of buddy group 1"), std::string::npos);
  EXPECT_EQ(cluster.world().counter("storage.mirror_crc_mismatches"), 1.0);
  // Only the good copy was written.
  const std::vector<std::byte>* object = cluster.world().object_bytes(2, k_file);
  ASSERT_NE(object, nullptr);
  EXPECT_EQ(object->size(), k_bytes);
  EXPECT_EQ(cluster.world().object_bytes(1, k_file), nullptr);
}

TEST(BuddyMirror, MgmtTakesStateReportsOnlyFromTheGroupsPrimary) {
  TestCluster cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok());
  const Endpoint mgmt = cluster.mgmt();
  Probe& probe = cluster.world().add_service<Probe>(cluster.client_nodes()[0], [mgmt](Env& env, OpTable&) {
    // Target 2 (the secondary) about target 1, target 3 about target 2 (another
    // group's), and the real primary about its secondary.
    env.send(mgmt, proto::SetTargetConsistency{1, 2, 1, proto::Consistency::needs_resync}).ignore();
    env.send(mgmt, proto::SetTargetConsistency{2, 3, 2, proto::Consistency::needs_resync}).ignore();
    env.send(mgmt, proto::SetTargetConsistency{3, 1, 2, proto::Consistency::needs_resync}).ignore();
    env.send(mgmt, proto::GetMaps{4, 0}).ignore();
  });
  cluster.world().run_for(10 * k_ns_per_ms);
  ASSERT_EQ(probe.replies.size(), 4u);
  std::map<RequestId, proto::Message> by_id;
  for (auto& r : probe.replies) by_id[*request_id_of(r)] = r;
  EXPECT_EQ(reply_status(by_id[1]).code(), StatusCode::invalid_argument);
  EXPECT_NE(reply_status(by_id[1]).message().find("only the primary of its buddy group"), std::string::npos);
  EXPECT_EQ(reply_status(by_id[2]).code(), StatusCode::invalid_argument);
  EXPECT_TRUE(reply_status(by_id[3]).ok()) << reply_status(by_id[3]).to_string();
  const auto& maps = std::get<proto::MapsReply>(by_id[4]);
  for (const auto& t : maps.targets) {
    EXPECT_EQ(t.consistency, t.target == 2 ? proto::Consistency::needs_resync : proto::Consistency::good)
        << "target " << t.target;
  }
}

}  // namespace
}  // namespace sluice::testing
