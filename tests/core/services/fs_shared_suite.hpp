// The services suite shared by every world: the same end-to-end, fault,
// namespace and back-pressure scenarios run on TestEnv (test_services,
// fs_shared_suite_test.cpp) and on SimEnv (test_sim, sim_services_test.cpp).
//
// It is a typed test suite over a "world kind":
//   struct Kind {
//     using World = ...;   // TestWorld's surface: BasicTestCluster<World> builds on it
//     static void isolate(const std::function<void()>& body);  // runs one test body
//     static std::string isolate_capture(const std::function<std::string()>& body);  // ... and returns its result
//     static constexpr std::size_t k_files_per_rank, k_big_directory_entries;
//     static constexpr bool k_virtual_time;  // false: real time (HwEnv), where
//                                            // only robust timing bounds are checked
//   };
// SimEnv's isolate() runs the body in a child process (one SimGrid engine
// per process). Byte-level checks (verify) only bite where the world moves
// bytes; every other assertion holds in both worlds.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "core/workloads/barrier_service.hpp"
#include "tests/core/services/buddy_mirror_scenarios.hpp"
#include "tests/core/services/meta_mirror_scenarios.hpp"
#include "tests/core/services/mixed_files_workload.hpp"
#include "tests/core/services/scripted_workload.hpp"
#include "tests/core/services/step_script.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing::shared_suite {

// TestEnv as a world kind.
struct TestEnvKind {
  using World = TestWorld;
  static void isolate(const std::function<void()>& body) { body(); }
  static std::string isolate_capture(const std::function<std::string()>& body) { return body(); }
  static constexpr std::size_t k_files_per_rank = 700;  // x 3 ranks: thousands of files of mixed sizes
  static constexpr std::size_t k_big_directory_entries = 100'000;
  static constexpr bool k_virtual_time = true;
};

template <class Kind>
void mixed_files_end_to_end(MetaPolicy policy, proto::ChooserKind chooser) {
  TestClusterSpec spec;
  spec.policy = policy;
  if (spec.policy == MetaPolicy::striped_dir) spec.meta.ns.dir_stripe_count = 2;
  spec.meta.default_chooser = chooser;
  spec.meta.default_stripe_count = 3;
  BasicTestCluster<typename Kind::World> cluster(spec);
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  constexpr std::uint32_t k_ranks = 3;
  std::vector<MixedFiles*> workloads;
  MixedFilesSpec files;
  files.files = Kind::k_files_per_rank;
  for (std::uint32_t r = 0; r < k_ranks; ++r) {
    auto w = std::make_unique<MixedFiles>(files);
    workloads.push_back(w.get());
    cluster.add_host(std::move(w), r, k_ranks);
  }
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  std::uint64_t expected_bytes = 0;
  for (std::size_t i = 0; i < files.files; ++i) expected_bytes += files.sizes[i % files.sizes.size()];
  for (std::uint32_t r = 0; r < k_ranks; ++r) {
    ASSERT_TRUE(cluster.hosts()[r]->result().ok()) << cluster.hosts()[r]->result().to_string();
    EXPECT_EQ(workloads[r]->bytes_written, expected_bytes);
    EXPECT_EQ(workloads[r]->bytes_read, expected_bytes);
    EXPECT_EQ(workloads[r]->listed, files.files);
  }
  EXPECT_EQ(cluster.world().counter("client.read_bytes"), static_cast<double>(k_ranks * expected_bytes));
  EXPECT_EQ(cluster.world().counter("client.crc_mismatches"), 0.0);
  // Every chunk object was removed with its file.
  cluster.world().run_for(k_ns_per_s);
  for (TargetId t : cluster.targets()) EXPECT_EQ(cluster.world().object_count(t), 0u) << "target " << t;
}

// create + write 1 MiB + close + read back; reports the read size.
inline Scripted::Script write_then_read(std::uint64_t* read_bytes) {
  return [read_bytes](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.create("/f", CreateOptions{}, [&ctx, done, read_bytes](Result<proto::InodeDesc> inode) {
      if (!inode.ok()) return done(inode.status());
      MemHandle buf = ctx.env.alloc(MemKind::host, 0, k_mib).value();
      ctx.ops.expect(ctx.env.fill(buf, PatternSpec{9, 0}), [&ctx, done, read_bytes, buf, inode = *inode](Completion&) {
        ctx.client.write(inode, 0, buf, false, [&ctx, done, read_bytes, buf](Result<std::uint64_t> w) {
          if (!w.ok()) return done(w.status());
          ctx.client.close("/f", k_mib, [&ctx, done, read_bytes, buf](Status s) {
            if (!s.ok()) return done(s);
            ctx.client.stat("/f", [&ctx, done, read_bytes, buf](Result<proto::InodeDesc> st) {
              if (!st.ok()) return done(st.status());
              MemHandle in = ctx.env.alloc(MemKind::host, 0, k_mib).value();
              ctx.client.read(*st, 0, in, [&ctx, done, read_bytes, in](Result<std::uint64_t> r) {
                if (!r.ok()) return done(r.status());
                *read_bytes = *r;
                ctx.ops.expect(ctx.env.verify(in, PatternSpec{9, 0}), [done](Completion& c) { done(c.status); });
              });
            });
          });
        });
      });
    });
  };
}

// Writes then reads `bytes` of /big with many chunks in flight; reports the read's duration.
inline Scripted::Script big_read(std::uint64_t bytes, TimeNs* read_ns) {
  return [bytes, read_ns](WorkloadContext& ctx, std::function<void(Status)> done) {
    CreateOptions opts;
    opts.chunk_bytes = 64 * k_kib;
    opts.stripe_count = 1;  // every chunk on one target: its queue and its server's port are the bottleneck
    ctx.client.create("/big", opts, [&ctx, done, bytes, read_ns](Result<proto::InodeDesc> inode) {
      if (!inode.ok()) return done(inode.status());
      MemHandle buf = ctx.env.alloc(MemKind::host, 0, bytes).value();
      ctx.client.write(*inode, 0, buf, false, [&ctx, done, bytes, read_ns, buf](Result<std::uint64_t> w) {
        if (!w.ok()) return done(w.status());
        ctx.client.close("/big", bytes, [&ctx, done, bytes, read_ns, buf](Status s) {
          if (!s.ok()) return done(s);
          ctx.client.stat("/big", [&ctx, done, bytes, read_ns, buf](Result<proto::InodeDesc> st) {
            if (!st.ok()) return done(st.status());
            const TimeNs start = ctx.env.now();
            ctx.client.read(*st, 0, buf, [&ctx, done, bytes, read_ns, start](Result<std::uint64_t> r) {
              if (!r.ok()) return done(r.status());
              if (*r != bytes) return done(error(StatusCode::internal, "short read"));
              *read_ns = ctx.env.now() - start;
              done(ok_status());
            });
          });
        });
      });
    });
  };
}

template <class Kind>
class ServicesSuite : public ::testing::Test {};
TYPED_TEST_SUITE_P(ServicesSuite);

TYPED_TEST_P(ServicesSuite, EndToEndOwnerRandomized) {
  TypeParam::isolate([] { mixed_files_end_to_end<TypeParam>(MetaPolicy::dir_owner, proto::ChooserKind::randomized); });
}
TYPED_TEST_P(ServicesSuite, EndToEndStripedRoundRobin) {
  TypeParam::isolate(
      [] { mixed_files_end_to_end<TypeParam>(MetaPolicy::striped_dir, proto::ChooserKind::round_robin); });
}
TYPED_TEST_P(ServicesSuite, EndToEndPathHashRandomRobin) {
  TypeParam::isolate(
      [] { mixed_files_end_to_end<TypeParam>(MetaPolicy::path_hash, proto::ChooserKind::random_robin); });
}
TYPED_TEST_P(ServicesSuite, EndToEndOwnerRandomInterNode) {
  TypeParam::isolate(
      [] { mixed_files_end_to_end<TypeParam>(MetaPolicy::dir_owner, proto::ChooserKind::random_inter_node); });
}
TYPED_TEST_P(ServicesSuite, EndToEndStripedSpaceWeightedQos) {
  TypeParam::isolate(
      [] { mixed_files_end_to_end<TypeParam>(MetaPolicy::striped_dir, proto::ChooserKind::space_weighted_qos); });
}

TYPED_TEST_P(ServicesSuite, LostChunkRequestsAreRetriedAndTheReadSucceeds) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    std::uint64_t read_bytes = 0;
    cluster.add_host(std::make_unique<Scripted>(write_then_read(&read_bytes)), 0, 1);
    cluster.world().add_fault(MessageRule{is_a<proto::ReadChunk>(), FaultAction::drop, 0, 2});
    cluster.world().add_fault(MessageRule{is_a<proto::WriteChunk>(), FaultAction::drop, 0, 1});
    ASSERT_TRUE(cluster.run());
    EXPECT_TRUE(cluster.hosts()[0]->result().ok()) << cluster.hosts()[0]->result().to_string();
    EXPECT_EQ(read_bytes, k_mib);
    EXPECT_EQ(cluster.world().messages_dropped(), 3u);
    EXPECT_GE(cluster.world().counter("rpc.retries"), 3.0);
  });
}

TYPED_TEST_P(ServicesSuite, DuplicatedAndLateMessagesGiveTheSameAnswer) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    std::uint64_t read_bytes = 0;
    cluster.add_host(std::make_unique<Scripted>(write_then_read(&read_bytes)), 0, 1);
    // Every metadata request twice, replies late (past one timeout: the retry races the reply).
    cluster.world().add_fault(MessageRule{is_a<proto::Create>(), FaultAction::duplicate, 0, 10});
    cluster.world().add_fault(MessageRule{is_a<proto::InodeReply>(), FaultAction::delay, 3 * k_ns_per_s, 1});
    cluster.world().add_fault(MessageRule{is_a<proto::ChunkReply>(), FaultAction::duplicate, 0, 100});
    ASSERT_TRUE(cluster.run());
    EXPECT_TRUE(cluster.hosts()[0]->result().ok()) << cluster.hosts()[0]->result().to_string();
    EXPECT_EQ(read_bytes, k_mib);
    // The duplicated create did not create a second file or fail with already_exists.
    EXPECT_EQ(cluster.world().counter("meta.create_ops"), 1.0);
  });
}

TYPED_TEST_P(ServicesSuite, ADeadStorageServerGivesAClearErrorNamingTheTarget) {
  TypeParam::isolate([] {
    TestClusterSpec spec;
    spec.targets_per_server = {1, 1, 1, 1};
    spec.meta.default_stripe_count = 4;  // with 64 KiB chunks, a 1 MiB file touches every server
    spec.meta.default_chunk_bytes = 64 * k_kib;
    BasicTestCluster<typename TypeParam::World> cluster(spec);
    std::uint64_t read_bytes = 0;
    auto& host = cluster.add_host(std::make_unique<Scripted>(write_then_read(&read_bytes)), 0, 1);
    // Kill one storage server as soon as the first read goes out.
    Endpoint victim = cluster.world().endpoint_of(*cluster.storages()[1]);
    bool killed = false;
    cluster.world().add_fault(MessageRule{[&](const Endpoint&, const Endpoint&, const proto::Message& m) {
                                            if (!killed && std::holds_alternative<proto::ReadChunk>(m)) {
                                              cluster.world().kill(victim);
                                              killed = true;
                                            }
                                            return false;
                                          },
                                          FaultAction::delay, 0, 1'000'000});
    ASSERT_TRUE(cluster.run());
    ASSERT_FALSE(host.result().ok());
    EXPECT_EQ(host.result().code(), StatusCode::timed_out) << host.result().to_string();
    EXPECT_NE(host.result().message().find("from target 2"), std::string::npos) << host.result().to_string();
    EXPECT_EQ(read_bytes, 0u);  // nothing was handed to the caller as if it were data
  });
}

// The client resends an unanswered metadata request under its own id for
// meta_retry_ns (BeeGFS's connCommRetrySecs, 600 s by default; short here),
// then gives up with timed_out naming the request.
TYPED_TEST_P(ServicesSuite, ANeverAnsweredMetadataRequestTimesOutInsteadOfHanging) {
  TypeParam::isolate([] {
    TestClusterSpec spec;
    spec.client.rpc.timeout_ns = 100 * k_ns_per_ms;  // attempts of 0.1 + 0.2 + 0.4 s
    spec.client.meta_retry_ns = 2 * k_ns_per_s;
    spec.client.meta_retry_wait_ns = 100 * k_ns_per_ms;
    BasicTestCluster<typename TypeParam::World> cluster(spec);
    auto& host =
        cluster.add_host(std::make_unique<Scripted>([](WorkloadContext& ctx, std::function<void(Status)> done) {
                           ctx.client.mkdir("/never", 0755, [done](Result<proto::InodeDesc> r) { done(r.status()); });
                         }),
                         0, 1);
    cluster.world().add_fault(MessageRule{is_a<proto::Mkdir>(), FaultAction::drop, 0, 1000});
    ASSERT_TRUE(cluster.run());
    EXPECT_EQ(host.result().code(), StatusCode::timed_out);
    EXPECT_NE(host.result().message().find("Mkdir"), std::string::npos) << host.result().to_string();
    EXPECT_GE(cluster.world().counter("client.meta_resends"), 1.0) << "resent before it gave up";
  });
}

TYPED_TEST_P(ServicesSuite, NamespaceErrorsAreClearAndItsRulesHold) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    std::vector<StatusCode> codes;
    cluster.add_host(std::make_unique<Scripted>([&codes](WorkloadContext& ctx, std::function<void(Status)> done) {
                       auto& c = ctx.client;
                       c.mkdir("/d", 0755, [&, done](Result<proto::InodeDesc>) {
                         c.mkdir("/d", 0755, [&, done](Result<proto::InodeDesc> again) {
                           codes.push_back(again.status().code());  // already_exists
                           c.create("/missing/f", CreateOptions{}, [&, done](Result<proto::InodeDesc> r) {
                             codes.push_back(r.status().code());  // not_found
                             c.create("/d/f", CreateOptions{}, [&, done](Result<proto::InodeDesc>) {
                               c.rmdir("/d", [&, done](Status s) {
                                 codes.push_back(s.code());  // not_empty
                                 c.unlink("/d", [&, done](Status u) {
                                   codes.push_back(u.code());  // is_a_directory
                                   c.rename("/d/f", "/d/g", [&, done](Status rn) {
                                     codes.push_back(rn.code());  // ok (same shard under dir_owner)
                                     c.stat("/d/f", [&, done](Result<proto::InodeDesc> st) {
                                       codes.push_back(st.status().code());  // not_found after rename
                                       c.create("bad//path", CreateOptions{}, [&, done](Result<proto::InodeDesc> bad) {
                                         codes.push_back(bad.status().code());  // invalid_argument
                                         done(ok_status());
                                       });
                                     });
                                   });
                                 });
                               });
                             });
                           });
                         });
                       });
                     }),
                     0, 1);
    ASSERT_TRUE(cluster.run());
    const std::vector<StatusCode> expected{StatusCode::already_exists,  StatusCode::not_found, StatusCode::not_empty,
                                           StatusCode::is_a_directory,  StatusCode::ok,        StatusCode::not_found,
                                           StatusCode::invalid_argument};
    EXPECT_EQ(codes, expected);
  });
}

TYPED_TEST_P(ServicesSuite, ALargeDirectoryListsCompletelyInPages) {
  TypeParam::isolate([] {
    TestClusterSpec spec;
    spec.policy = MetaPolicy::striped_dir;
    spec.meta.ns.dir_stripe_count = 2;
    spec.world.roundtrip_messages_through_codec = false;  // speed; the codec has its own tests
    BasicTestCluster<typename TypeParam::World> cluster(spec);
    const std::size_t entries_wanted = TypeParam::k_big_directory_entries;
    std::size_t listed = 0;
    std::set<std::string> names;
    auto& host = cluster.add_host(
        std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
          ctx.client.mkdir("/big", 0755, [&, done](Result<proto::InodeDesc> r) {
            if (!r.ok()) return done(r.status());
            for_each_bounded(
                entries_wanted, 64,
                [&](std::size_t i, std::function<void(Status)> next) {
                  ctx.client.create("/big/e" + std::to_string(i), CreateOptions{},
                                    [next](Result<proto::InodeDesc> c) { next(c.status()); });
                },
                [&, done](Status s) {
                  if (!s.ok()) return done(s);
                  ctx.client.readdir("/big", false, [&, done](Result<std::vector<proto::DirEntryDesc>> entries) {
                    if (!entries.ok()) return done(entries.status());
                    listed = entries->size();
                    for (const auto& e : *entries) names.insert(e.name);
                    done(ok_status());
                  });
                });
          });
        }),
        0, 1);
    ASSERT_TRUE(cluster.run(500'000'000));
    ASSERT_TRUE(host.result().ok()) << host.result().to_string();
    EXPECT_EQ(listed, entries_wanted);
    EXPECT_EQ(names.size(), entries_wanted);  // no entry twice, none missing
    // It took many pages: the server caps a page.
    EXPECT_GE(cluster.world().messages_sent(), 2 * entries_wanted + entries_wanted / 1024);
  });
}

TYPED_TEST_P(ServicesSuite, AFullTargetQueueAnswersAgainAndTheClientStillGetsEveryByte) {
  TypeParam::isolate([] {
    TestClusterSpec spec;
    spec.storage.max_queued_per_target = 2;
    spec.storage.max_active_per_target = 1;
    BasicTestCluster<typename TypeParam::World> cluster(spec);
    TimeNs read_ns = 0;
    auto& host = cluster.add_host(std::make_unique<Scripted>(big_read(16 * k_mib, &read_ns)), 0, 1);
    ASSERT_TRUE(cluster.run());
    ASSERT_TRUE(host.result().ok()) << host.result().to_string();
    EXPECT_GT(cluster.world().counter("storage.again_replies"), 0.0);
    EXPECT_EQ(cluster.world().counter("client.read_bytes"), static_cast<double>(16 * k_mib));
  });
}

TYPED_TEST_P(ServicesSuite, TheEgressLimitPacesReadsFromAServer) {
  constexpr std::uint64_t k_bytes = 16 * k_mib;
  constexpr double k_limit_bytes_per_s = 200e6;
  // Two runs, each isolated (a world with one simulation per process runs
  // each in a child); each returns "<read time> <throttled ns>".
  auto read_time = [](double limit_bytes_per_s) {
    return TypeParam::isolate_capture([limit_bytes_per_s] {
      TestClusterSpec spec;
      if (limit_bytes_per_s > 0) {
        spec.storage.egress_limit_bytes_per_s = limit_bytes_per_s;
        spec.storage.egress_burst_bytes = k_mib;
      }
      BasicTestCluster<typename TypeParam::World> cluster(spec);
      TimeNs read_ns = 0;
      cluster.add_host(std::make_unique<Scripted>(big_read(k_bytes, &read_ns)), 0, 1);
      EXPECT_TRUE(cluster.run());
      return std::to_string(read_ns) + " " + std::to_string(cluster.world().counter("storage.egress_throttled_ns"));
    });
  };
  const std::string unlimited = "0" + read_time(0);
  const std::string limited = "0" + read_time(k_limit_bytes_per_s);
  const double unlimited_ns = std::stod(unlimited);
  const double limited_ns = std::stod(limited);
  const std::size_t space = limited.find(' ');
  const double throttled_ns = space == std::string::npos ? 0.0 : std::stod(limited.substr(space + 1));
  // Without the limit the read runs at the drive's 3.2 GB/s; with it, at the limit (minus the 1 MiB burst).
  const double floor_ns = static_cast<double>(k_bytes - k_mib) / k_limit_bytes_per_s * 1e9;
  EXPECT_GT(unlimited_ns, 0.0);
  EXPECT_GE(limited_ns, floor_ns);  // pacing guarantees it, in virtual and in real time
  if constexpr (TypeParam::k_virtual_time) {
    // Upper bounds only where time is the model's: in real time they would be
    // wall-clock thresholds (CONTRIBUTING.md#test), at the mercy of a loaded machine.
    EXPECT_LT(unlimited_ns, floor_ns / 5);
    EXPECT_LT(limited_ns, floor_ns * 1.2);
    EXPECT_GT(throttled_ns, 0.0);
  } else if (unlimited_ns < floor_ns) {
    // In real time the limit must act only where the server could outrun it
    // (an instrumented -O0 build on a loaded machine may not reach 200 MB/s).
    EXPECT_GT(throttled_ns, 0.0) << "unlimited read took " << unlimited_ns << " ns";
  }
}

// ---- late replies on the data path (issue 26) ----------------------------------
// A short RPC timeout, so that a real-time world (HwEnv) waits seconds, not tens.
inline TestClusterSpec late_reply_spec() {
  TestClusterSpec spec;
  spec.client.rpc.timeout_ns = 500 * k_ns_per_ms;
  return spec;
}

// A transfer a storage server starts into another node's memory: a read's data.
inline bool is_read_data(const Endpoint& self, const TransferSpec& t) {
  return t.src.node == self.node && t.dst.node != self.node;
}

// Every read's data arrives later than the client would wait for a silent
// server (RpcLimits::give_up_ns): its retries reach the server while it is
// still executing the request. The server must neither execute a request
// twice (the second copy of the bytes would land after the caller got the
// first reply) nor let the client give up: it answers the retries
// in_progress, and the client waits for the one reply.
TYPED_TEST_P(ServicesSuite, AReadWhoseDataOutlivesTheRpcTimeoutIsWaitedForAndExecutedOnce) {
  TypeParam::isolate([] {
    const TestClusterSpec spec = late_reply_spec();
    BasicTestCluster<typename TypeParam::World> cluster(spec);
    std::uint64_t read_bytes = 0;
    cluster.add_host(std::make_unique<Scripted>(write_then_read(&read_bytes)), 0, 1);
    const TimeNs late_ns = spec.client.rpc.give_up_ns() + spec.client.rpc.timeout_ns;
    cluster.world().add_transfer_fault(TransferRule{is_read_data, late_ns, 1'000});
    ASSERT_TRUE(cluster.run());
    EXPECT_TRUE(cluster.hosts()[0]->result().ok()) << cluster.hosts()[0]->result().to_string();
    EXPECT_EQ(read_bytes, k_mib);
    EXPECT_GE(cluster.world().counter("rpc.retries"), 1.0);
    EXPECT_GE(cluster.world().counter("rpc.in_progress_replies"), 1.0);
    EXPECT_GE(cluster.world().counter("storage.duplicate_in_progress"), 1.0);
    // Each chunk's bytes were sent once, however often the request was retried.
    EXPECT_EQ(cluster.world().counter("storage.read_bytes"), static_cast<double>(k_mib));
    EXPECT_EQ(cluster.world().counter("client.crc_mismatches"), 0.0);
  });
}

// The client gives up on a read (every reply is lost), hands its buffer back
// to the caller, who refills it; the server's data transfer for that read
// comes later. It must not land in the caller's memory: the client closed
// the request's window before failing it (Env::open_window).
TYPED_TEST_P(ServicesSuite, AReadTheClientGaveUpOnCannotWriteIntoTheCallersMemoryLater) {
  TypeParam::isolate([] {
    const TestClusterSpec spec = late_reply_spec();
    BasicTestCluster<typename TypeParam::World> cluster(spec);
    auto* world = &cluster.world();
    const TimeNs give_up_ns = spec.client.rpc.give_up_ns();
    const TimeNs late_ns = 2 * give_up_ns;
    Status read_status;
    Status after_status = error(StatusCode::internal, "not run");
    auto script = [world, late_ns, &read_status, &after_status](WorkloadContext& ctx,
                                                                std::function<void(Status)> done) {
      ctx.client.create("/f", CreateOptions{}, [&, world, late_ns, done](Result<proto::InodeDesc> inode) {
        if (!inode.ok()) return done(inode.status());
        MemHandle buf = ctx.env.alloc(MemKind::host, 0, k_mib).value();
        ctx.ops.expect(
            ctx.env.fill(buf, PatternSpec{7, 0}), [&, world, late_ns, done, buf, inode = *inode](Completion&) {
              ctx.client.write(inode, 0, buf, false, [&, world, late_ns, done, buf, inode](Result<std::uint64_t> w) {
                if (!w.ok()) return done(w.status());
                ctx.client.close("/f", k_mib, [&, world, late_ns, done, buf](Status s) {
                  if (!s.ok()) return done(s);
                  ctx.client.stat("/f", [&, world, late_ns, done, buf](Result<proto::InodeDesc> st) {
                    if (!st.ok()) return done(st.status());
                    // From now on: the read's data comes late and no reply arrives.
                    world->add_transfer_fault(TransferRule{is_read_data, late_ns, 1'000});
                    world->add_fault(MessageRule{is_a<proto::ChunkReply>(), FaultAction::drop, 0, 1'000'000});
                    ctx.client.read(*st, 0, buf, [&, late_ns, done, buf](Result<std::uint64_t> r) {
                      read_status = r.status();
                      // The caller reuses its buffer, then looks again after the late transfers.
                      ctx.ops.expect(ctx.env.fill(buf, PatternSpec{8, 0}), [&, late_ns, done, buf](Completion&) {
                        ctx.ops.expect(ctx.env.timer(late_ns + late_ns / 2), [&, done, buf](Completion&) {
                          ctx.ops.expect(ctx.env.verify(buf, PatternSpec{8, 0}), [&, done](Completion& c) {
                            after_status = c.status;
                            done(ok_status());
                          });
                        });
                      });
                    });
                  });
                });
              });
            });
      });
    };
    cluster.add_host(std::make_unique<Scripted>(script), 0, 1);
    ASSERT_TRUE(cluster.run());
    EXPECT_TRUE(cluster.hosts()[0]->result().ok()) << cluster.hosts()[0]->result().to_string();
    EXPECT_EQ(read_status.code(), StatusCode::timed_out) << read_status.to_string();
    EXPECT_GE(cluster.world().counter("client.chunks_direct"), 1.0);  // the caller's memory was the landing
    EXPECT_TRUE(after_status.ok()) << "a late transfer wrote into the caller's buffer: " << after_status.to_string();
  });
}

// Buddy mirroring (issue 9): scenarios in buddy_mirror_scenarios.hpp.
TYPED_TEST_P(ServicesSuite, BuddyMirrorFailoverKeepsEveryAcknowledgedWrite) {
  TypeParam::isolate([] { mirror_failover_keeps_every_acknowledged_write<typename TypeParam::World>(); });
}
TYPED_TEST_P(ServicesSuite, BuddyMirrorResyncThenFailoverKeepsTheData) {
  TypeParam::isolate([] { mirror_resync_then_failover_keeps_the_data<typename TypeParam::World>(); });
}

// Metadata buddy mirroring (issue 9): meta_mirror_scenarios.hpp.
TYPED_TEST_P(ServicesSuite, MetaMirrorFailoverKeepsTheNamespace) {
  TypeParam::isolate([] { meta_mirror_failover_keeps_the_namespace<typename TypeParam::World>(); });
}

// The attributes a mount sets (chmod, utimens, a truncate's size) and the
// names a long path's error keeps: set_attr returns the inode as stored; a
// mode beyond 07777 and a not_found naming a path near PATH_MAX are answered
// (the error text clipped to the wire's limit), not lost to a timeout.
TYPED_TEST_P(ServicesSuite, SetAttrChangesWhatItNamesAndLongPathErrorsArrive) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    std::vector<proto::InodeDesc> seen;
    std::vector<StatusCode> codes;
    cluster.add_host(std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
                       auto& c = ctx.client;
                       CreateOptions o;
                       o.mode = 0644;
                       c.create("/f", o, [&, done](Result<proto::InodeDesc>) {
                         AttrChange mode;
                         mode.mode = 0600;
                         c.set_attr("/f", mode, [&, done](Result<proto::InodeDesc> a) {
                           if (a.ok()) seen.push_back(*a);
                           AttrChange size_time;
                           size_time.size_bytes = 12345;
                           size_time.mtime_ns = 1'700'000'000'000'000'000;
                           c.set_attr("/f", size_time, [&, done](Result<proto::InodeDesc> b) {
                             if (b.ok()) seen.push_back(*b);
                             AttrChange bad;
                             bad.mode = 010000;
                             c.set_attr("/f", bad, [&, done](Result<proto::InodeDesc> r) {
                               codes.push_back(r.status().code());  // invalid_argument
                               const std::string deep = "/" + std::string(250, 'd') + "/" + std::string(250, 'e') +
                                                        "/" + std::string(250, 'f') + "/" + std::string(250, 'g') +
                                                        "/" + std::string(250, 'h') + "/missing";
                               c.stat(deep, [&, done](Result<proto::InodeDesc> m) {
                                 codes.push_back(m.status().code());  // not_found, not timed_out
                                 done(ok_status());
                               });
                             });
                           });
                         });
                       });
                     }),
                     0, 1);
    ASSERT_TRUE(cluster.run());
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].mode, 0600u);
    EXPECT_EQ(seen[1].mode, 0600u);
    EXPECT_EQ(seen[1].size_bytes, 12345u);
    EXPECT_EQ(seen[1].mtime_ns, 1'700'000'000'000'000'000);
    const std::vector<StatusCode> expected{StatusCode::invalid_argument, StatusCode::not_found};
    EXPECT_EQ(codes, expected);
  });
}

// Symbolic links: the target is kept as opaque text and read back, stat does
// not follow (type symlink, size = the target's length), the target's length
// is limited (k_max_symlink_target_bytes), and unlink removes the link only.
TYPED_TEST_P(ServicesSuite, SymbolicLinksKeepTheirTargetAndUnlinkRemovesOnlyTheLink) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    const std::string target = "../runs/r-0042/\xC3\xA9 out";
    const std::string longest(proto::k_max_symlink_target_bytes, 't');
    Answers a;
    std::string read_target;
    auto symlink = [&a](std::string to, std::string path, std::string key) -> Step {
      return [&a, to, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.symlink(to, path, CreateOptions{}, a.inode(key, next));
      };
    };
    auto stat = [&a](std::string path, std::string key) -> Step {
      return [&a, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.stat(path, a.inode(key, next));
      };
    };
    std::vector<Step> steps{
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.create("/f", CreateOptions{}, a.inode("create", next));
        },
        symlink(target, "/l", "symlink"),
        symlink("elsewhere", "/l", "again"),
        symlink("", "/empty", "empty"),
        symlink(longest + "t", "/over", "over"),
        symlink(longest, "/longest", "longest"),
        [&](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.readlink("/l", [&, next](Result<std::string> r) {
            if (r.ok()) read_target = *r;
            a.status("readlink", next)(r.status());
          });
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.readlink("/f", [&a, next](Result<std::string> r) { a.status("readlink file", next)(r.status()); });
        },
        stat("/l", "stat"),
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          AttrChange size;
          size.size_bytes = 1;
          ctx.client.set_attr("/l", size, a.inode("resize", next));
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) { ctx.client.unlink("/l", a.status("unlink", next)); },
        stat("/l", "stat after"),
        stat("/f", "file after")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(a.code("symlink"), StatusCode::ok) << a.errors["symlink"];
    EXPECT_EQ(a.inodes["symlink"].type, proto::InodeType::symlink);
    EXPECT_EQ(a.code("again"), StatusCode::already_exists);
    EXPECT_EQ(a.code("empty"), StatusCode::invalid_argument);
    EXPECT_EQ(a.code("over"), StatusCode::invalid_argument);
    EXPECT_NE(a.errors["over"].find("k_max_symlink_target_bytes"), std::string::npos) << a.errors["over"];
    EXPECT_EQ(a.code("longest"), StatusCode::ok) << a.errors["longest"];
    EXPECT_EQ(a.code("readlink"), StatusCode::ok);
    EXPECT_EQ(read_target, target);
    EXPECT_EQ(a.code("readlink file"), StatusCode::invalid_argument);
    const proto::InodeDesc& link = a.inodes["stat"];
    EXPECT_EQ(link.type, proto::InodeType::symlink);
    EXPECT_EQ(link.size_bytes, target.size());
    EXPECT_EQ(link.symlink_target, target);
    EXPECT_EQ(link.nlink, 1u);
    EXPECT_EQ(a.code("resize"), StatusCode::invalid_argument);  // its size is its target's length
    EXPECT_EQ(a.code("unlink"), StatusCode::ok);
    EXPECT_EQ(a.code("stat after"), StatusCode::not_found);
    EXPECT_EQ(a.code("file after"), StatusCode::ok);
    EXPECT_EQ(a.inodes["file after"].type, proto::InodeType::file);
  });
}

// Special files (mknod): a FIFO, a device (its number kept) and a socket are
// inodes with names and permission bits, stat shows their type, they take a
// hard link and unlink like files; a type that is not a special file, or a
// name in use, is refused.
TYPED_TEST_P(ServicesSuite, SpecialFilesAreInodesWithTheirTypeModeAndDeviceNumber) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    constexpr std::uint64_t k_rdev = (8u << 8) | 1;  // block device 8:1
    Answers a;
    auto mknod = [&a](std::string path, proto::InodeType type, std::uint32_t mode, std::uint64_t rdev,
                      std::string key) -> Step {
      return [&a, path, type, mode, rdev, key](WorkloadContext& ctx, std::function<void()> next) {
        CreateOptions owner;
        owner.uid = 1000;
        owner.gid = 100;
        ctx.client.mknod(path, type, mode, rdev, owner, a.inode(key, next));
      };
    };
    auto stat = [&a](std::string path, std::string key) -> Step {
      return [&a, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.stat(path, a.inode(key, next));
      };
    };
    std::vector<Step> steps{mknod("/fifo", proto::InodeType::fifo, 0640, 0, "fifo"),
                            mknod("/fifo", proto::InodeType::socket, 0600, 0, "again"),
                            mknod("/sda1", proto::InodeType::block_device, 0660, k_rdev, "block"),
                            mknod("/tty", proto::InodeType::char_device, 0620, (4u << 8) | 1, "char"),
                            mknod("/sock", proto::InodeType::socket, 0755, 0, "socket"),
                            mknod("/plain", proto::InodeType::file, 0644, 0, "file type"),
                            mknod("/nodir/x", proto::InodeType::fifo, 0644, 0, "no parent"),
                            stat("/fifo", "stat fifo"),
                            stat("/sda1", "stat block"),
                            [&a](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.link("/fifo", "/fifo2", a.inode("link", next));
                            },
                            [&a](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.unlink("/fifo", a.status("unlink", next));
                            },
                            stat("/fifo", "stat after"),
                            stat("/fifo2", "stat other name")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(a.code("fifo"), StatusCode::ok) << a.errors["fifo"];
    EXPECT_EQ(a.code("again"), StatusCode::already_exists);
    EXPECT_EQ(a.code("block"), StatusCode::ok) << a.errors["block"];
    EXPECT_EQ(a.code("char"), StatusCode::ok) << a.errors["char"];
    EXPECT_EQ(a.code("socket"), StatusCode::ok) << a.errors["socket"];
    EXPECT_EQ(a.code("file type"), StatusCode::invalid_argument);
    EXPECT_NE(a.errors["file type"].find("not a special file"), std::string::npos) << a.errors["file type"];
    EXPECT_EQ(a.code("no parent"), StatusCode::not_found);
    const proto::InodeDesc& fifo = a.inodes["stat fifo"];
    EXPECT_EQ(fifo.type, proto::InodeType::fifo);
    EXPECT_EQ(fifo.mode, 0640u);
    EXPECT_EQ(fifo.uid, 1000u);
    EXPECT_EQ(fifo.gid, 100u);
    EXPECT_EQ(fifo.size_bytes, 0u);
    EXPECT_EQ(fifo.rdev, 0u);
    EXPECT_EQ(a.inodes["stat block"].type, proto::InodeType::block_device);
    EXPECT_EQ(a.inodes["stat block"].rdev, k_rdev);
    EXPECT_EQ(a.inodes["char"].type, proto::InodeType::char_device);
    EXPECT_EQ(a.inodes["socket"].type, proto::InodeType::socket);
    EXPECT_EQ(a.code("link"), StatusCode::ok) << a.errors["link"];
    EXPECT_EQ(a.inodes["link"].nlink, 2u);
    EXPECT_EQ(a.code("unlink"), StatusCode::ok);
    EXPECT_EQ(a.code("stat after"), StatusCode::not_found);
    EXPECT_EQ(a.code("stat other name"), StatusCode::ok);
    EXPECT_EQ(a.inodes["stat other name"].type, proto::InodeType::fifo);
    EXPECT_EQ(a.inodes["stat other name"].nlink, 1u);
  });
}

// Hard links: a second name shares the inode (its data and attributes), the
// link count is kept at the metadata server and reported by stat, unlink of
// one name leaves the other readable and the last removes the chunks; a
// directory cannot be linked.
TYPED_TEST_P(ServicesSuite, HardLinksShareTheInodeAndTheLastUnlinkRemovesIt) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    constexpr std::uint64_t k_bytes = 256 * k_kib;
    Answers a;
    auto call = [&a](std::function<void(Client&, Answers&, std::function<void()>)> fn) -> Step {
      return [&a, fn](WorkloadContext& ctx, std::function<void()> next) { fn(ctx.client, a, next); };
    };
    auto link = [&call](std::string from, std::string to, std::string key) {
      return call([from, to, key](Client& c, Answers& an, auto next) { c.link(from, to, an.inode(key, next)); });
    };
    auto stat = [&call](std::string path, std::string key) {
      return call([path, key](Client& c, Answers& an, auto next) { c.stat(path, an.inode(key, next)); });
    };
    auto unlink = [&call](std::string path) {
      return call([path](Client& c, Answers& an, auto next) { c.unlink(path, an.status("unlink " + path, next)); });
    };
    AttrChange chmod;
    chmod.mode = 0600;
    std::vector<Step> steps{
        call([](Client& c, Answers& an, auto next) { c.create("/f", CreateOptions{}, an.inode("create", next)); }),
        write_pattern("/f", a, "create", k_bytes, 5),
        link("/f", "/g", "link"),
        stat("/f", "f"),
        stat("/g", "g"),
        call([chmod](Client& c, Answers& an, auto next) { c.set_attr("/g", chmod, an.inode("chmod", next)); }),
        stat("/f", "f after chmod"),
        link("/f", "/g", "exists"),
        link("/missing", "/h", "missing"),
        call([](Client& c, Answers& an, auto next) { c.mkdir("/d", 0755, an.inode("mkdir", next)); }),
        link("/d", "/dl", "dir"),
        unlink("/f"),
        stat("/g", "g alone"),
        read_pattern("/g", a, k_bytes, 5),
        unlink("/g"),
        stat("/g", "g gone")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(a.code("link"), StatusCode::ok) << a.errors["link"];
    EXPECT_EQ(a.inodes["link"].nlink, 2u);
    EXPECT_EQ(a.inodes["f"].nlink, 2u);
    EXPECT_EQ(a.inodes["g"].nlink, 2u);
    EXPECT_EQ(a.inodes["g"].file_id, a.inodes["f"].file_id);
    EXPECT_EQ(a.inodes["g"].size_bytes, k_bytes);
    EXPECT_EQ(a.inodes["f after chmod"].mode, 0600u);  // one inode: a change through one name shows through the other
    EXPECT_EQ(a.code("exists"), StatusCode::already_exists);
    EXPECT_EQ(a.code("missing"), StatusCode::not_found);
    EXPECT_EQ(a.code("dir"), StatusCode::is_a_directory);  // EPERM in a mount
    EXPECT_EQ(a.code("unlink /f"), StatusCode::ok);
    EXPECT_EQ(a.inodes["g alone"].nlink, 1u);
    EXPECT_EQ(a.code("read /g"), StatusCode::ok) << a.errors["read /g"];
    EXPECT_EQ(a.code("unlink /g"), StatusCode::ok);
    EXPECT_EQ(a.code("g gone"), StatusCode::not_found);
    cluster.world().run_for(k_ns_per_s);
    for (TargetId t : cluster.targets()) EXPECT_EQ(cluster.world().object_count(t), 0u) << "target " << t;
  });
}

// A hard link's two names must be on one metadata shard (a named design
// limit): across shards the link is refused with invalid_argument (EXDEV in
// a mount) saying why; within the shard it is made.
TYPED_TEST_P(ServicesSuite, HardLinksAcrossMetadataShardsAreRefusedClearly) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});  // 2 shards, directories spread
    constexpr int k_dirs = 16;
    Answers a;
    std::vector<Step> steps{[&a](WorkloadContext& ctx, std::function<void()> next) {
      ctx.client.create("/f", CreateOptions{}, a.inode("create", next));
    }};
    for (int i = 0; i < k_dirs; ++i) {
      const std::string dir = "/s" + std::to_string(i);
      steps.push_back([&a, dir](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.mkdir(dir, 0755, a.inode(dir, next));
      });
      steps.push_back([&a, dir](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.link("/f", dir + "/h", a.inode("link " + dir, next));
      });
    }
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    int refused = 0, made = 0;
    for (int i = 0; i < k_dirs; ++i) {
      const std::string dir = "/s" + std::to_string(i);
      const bool same_shard = a.inodes[dir].dir_layout.owner == a.inodes["create"].owner_shard;
      if (same_shard) {
        EXPECT_EQ(a.code("link " + dir), StatusCode::ok) << a.errors["link " + dir];
        ++made;
      } else {
        EXPECT_EQ(a.code("link " + dir), StatusCode::invalid_argument);
        EXPECT_NE(a.errors["link " + dir].find("links across shards are not supported"), std::string::npos)
            << a.errors["link " + dir];
        ++refused;
      }
    }
    EXPECT_GT(refused, 0);
    EXPECT_GT(made, 0);
  });
}

// POSIX times: creation sets atime, mtime and ctime from the world's wall
// clock (Env::wall_ns); a write's close sets mtime; any change of the inode
// sets ctime; utimens sets atime and mtime as asked; a read's close moves
// atime only where relatime would; adding, removing or renaming an entry sets
// the directory's mtime and ctime, also where the directory's entries live on
// another metadata shard than its name (2 shards, directories spread), and a
// directory's utimens holds against its records; a listing's access note
// moves a directory's atime where relatime would against its merged times
// (its entries' changes on another shard too); a directory's link count is
// 2 + its subdirectories.
TYPED_TEST_P(ServicesSuite, TimesFollowEveryChangeOfAnInodeAndOfADirectorysEntries) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    constexpr int k_dirs = 6;
    Answers a;
    auto stat = [&a](std::string path, std::string key) -> Step {
      return [&a, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.stat(path, a.inode(key, next));
      };
    };
    auto set = [&a](std::string path, AttrChange change, std::string key) -> Step {
      return [&a, path, change, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.set_attr(path, change, a.inode(key, next));
      };
    };
    auto read_close = [&a](std::string path, std::string key) -> Step {
      return [&a, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.close_unchanged(path, a.status(key, next));
      };
    };
    AttrChange utimes;
    utimes.atime_ns = 1'000;
    utimes.mtime_ns = 2'000;
    AttrChange chmod;
    chmod.mode = 0600;
    AttrChange dir_mtime;
    dir_mtime.mtime_ns = 5'000;
    std::vector<Step> steps;
    for (int i = 0; i < k_dirs; ++i) {
      const std::string d = "/t" + std::to_string(i), k = std::to_string(i);
      steps.push_back([&a, d, k](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.mkdir(d, 0755, a.inode("mkdir " + k, next));
      });
      steps.push_back(stat(d, "dir made " + k));
      steps.push_back([&a, d, k](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.create(d + "/f", CreateOptions{}, a.inode("create " + k, next));
      });
      steps.push_back(stat(d, "dir with f " + k));
      steps.push_back([&a, d, k](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.close(d + "/f", 10, a.status("close " + k, next));
      });
      steps.push_back(stat(d + "/f", "closed " + k));
      steps.push_back(set(d + "/f", utimes, "utimes " + k));
      steps.push_back(read_close(d + "/f", "read close " + k));
      steps.push_back(stat(d + "/f", "read " + k));
      steps.push_back(read_close(d + "/f", "read close again " + k));
      steps.push_back(stat(d + "/f", "read again " + k));
      steps.push_back(set(d + "/f", chmod, "chmod " + k));
      steps.push_back(set(d, dir_mtime, "dir utimes " + k));
      steps.push_back(stat(d, "dir after utimes " + k));
      steps.push_back([&a, d, k](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.rename(d + "/f", d + "/g", a.status("rename " + k, next));
      });
      steps.push_back(stat(d, "dir after rename " + k));
      steps.push_back(stat(d + "/g", "renamed " + k));
      // A listing's access note (the mount's releasedir): relatime against
      // the directory's merged times, which its entries' shard moves.
      steps.push_back(read_close(d, "dir listed " + k));
      steps.push_back(stat(d, "dir accessed " + k));
      steps.push_back([&a, d, k](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.create(d + "/h", CreateOptions{}, a.inode("create h " + k, next));
      });
      steps.push_back(stat(d, "dir with h " + k));
      steps.push_back(read_close(d, "dir listed again " + k));
      steps.push_back(stat(d, "dir accessed again " + k));
    }
    steps.push_back(stat("/", "root"));
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    int remote = 0;
    for (int i = 0; i < k_dirs; ++i) {
      const std::string k = std::to_string(i);
      ASSERT_EQ(a.code("rename " + k), StatusCode::ok) << a.errors["rename " + k];
      const proto::InodeDesc& made = a.inodes["mkdir " + k];
      if (made.dir_layout.owner != a.inodes["create " + k].owner_shard) ADD_FAILURE() << "a file's shard is its dir's";
      if (made.dir_layout.owner != 0) ++remote;  // its name is in /, on / 's shard
      EXPECT_GE(made.mtime_ns, k_virtual_wall_epoch_ns) << "a wall-clock time, not the run's";
      EXPECT_EQ(made.atime_ns, made.mtime_ns);
      EXPECT_EQ(made.ctime_ns, made.mtime_ns);
      const proto::InodeDesc& with_f = a.inodes["dir with f " + k];
      EXPECT_GT(with_f.mtime_ns, made.mtime_ns) << "a new entry moves the directory's mtime (dir " << k << ")";
      EXPECT_GT(with_f.ctime_ns, made.ctime_ns);
      EXPECT_EQ(with_f.atime_ns, made.atime_ns);
      const proto::InodeDesc& closed = a.inodes["closed " + k];
      const proto::InodeDesc& created = a.inodes["create " + k];
      EXPECT_GT(closed.mtime_ns, created.mtime_ns) << "a write's close sets mtime";
      EXPECT_GE(closed.ctime_ns, closed.mtime_ns) << "and ctime";
      EXPECT_EQ(closed.atime_ns, created.atime_ns);
      const proto::InodeDesc& utimed = a.inodes["utimes " + k];
      EXPECT_EQ(utimed.atime_ns, 1'000);
      EXPECT_EQ(utimed.mtime_ns, 2'000);
      EXPECT_GT(utimed.ctime_ns, closed.ctime_ns) << "utimens changes ctime";
      ASSERT_EQ(a.code("read close " + k), StatusCode::ok) << a.errors["read close " + k];
      const proto::InodeDesc& read = a.inodes["read " + k];
      EXPECT_GT(read.atime_ns, utimed.ctime_ns) << "relatime: an atime before mtime moves with a read";
      EXPECT_EQ(read.ctime_ns, utimed.ctime_ns) << "an access is not a change";
      EXPECT_EQ(read.mtime_ns, 2'000);
      EXPECT_EQ(a.inodes["read again " + k].atime_ns, read.atime_ns) << "relatime: a fresh atime stays";
      const proto::InodeDesc& chmodded = a.inodes["chmod " + k];
      EXPECT_EQ(chmodded.mode, 0600u);
      EXPECT_GT(chmodded.ctime_ns, read.atime_ns);
      EXPECT_EQ(chmodded.mtime_ns, 2'000) << "chmod keeps mtime";
      EXPECT_EQ(a.inodes["dir utimes " + k].mtime_ns, 5'000) << "older than its entries' changes, yet kept";
      EXPECT_EQ(a.inodes["dir after utimes " + k].mtime_ns, 5'000);
      const proto::InodeDesc& after_rename = a.inodes["dir after rename " + k];
      EXPECT_GT(after_rename.mtime_ns, chmodded.ctime_ns) << "a rename within the directory moves its mtime";
      EXPECT_EQ(after_rename.ctime_ns, after_rename.mtime_ns);
      const proto::InodeDesc& renamed = a.inodes["renamed " + k];
      EXPECT_GT(renamed.ctime_ns, chmodded.ctime_ns) << "a rename changes the moved inode's ctime";
      EXPECT_EQ(renamed.mtime_ns, 2'000);
      ASSERT_EQ(a.code("dir listed " + k), StatusCode::ok) << a.errors["dir listed " + k];
      const proto::InodeDesc& accessed = a.inodes["dir accessed " + k];
      EXPECT_GT(accessed.atime_ns, after_rename.mtime_ns) << "a listing after its entries changed moves atime";
      EXPECT_EQ(accessed.mtime_ns, after_rename.mtime_ns) << "an access is not a change";
      const proto::InodeDesc& with_h = a.inodes["dir with h " + k];
      EXPECT_EQ(with_h.atime_ns, accessed.atime_ns) << "a new entry is not an access";
      EXPECT_GT(with_h.mtime_ns, accessed.atime_ns);
      ASSERT_EQ(a.code("dir listed again " + k), StatusCode::ok) << a.errors["dir listed again " + k];
      EXPECT_GT(a.inodes["dir accessed again " + k].atime_ns, with_h.mtime_ns)
          << "relatime weighs the entries' changes, also on another shard than the name (dir " << k << ")";
    }
    EXPECT_GT(remote, 0) << "no directory whose entries live on another shard than its name";
    EXPECT_EQ(a.inodes["root"].nlink, 2u + k_dirs) << "a directory's link count: 2 + its subdirectories";
    EXPECT_EQ(a.inodes["dir with f 0"].nlink, 2u) << "a file is no subdirectory";
  });
}

// Extended attributes: set, get, list and remove in the user., trusted. and
// security. namespaces, create and replace flags, ENODATA (found false), the
// inode's 64 KiB (XATTR_LIST_MAX) refused as no_space, user.* refused on a
// symbolic link, system.* refused; a stat does not carry them, a set changes
// ctime, and they stay with the inode through a rename and a hard link.
TYPED_TEST_P(ServicesSuite, ExtendedAttributesAreKeptWithTheInode) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    std::map<std::string, Result<proto::XattrReply>> x;
    Answers a;
    auto op = [&x](std::string path, proto::XattrOp o, std::string name, std::string value, std::uint32_t flags,
                   std::string key) -> Step {
      return [&x, path, o, name, value, flags, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.xattr(path, o, name, value, flags, [&x, key, next](Result<proto::XattrReply> r) {
          x.insert_or_assign(key, std::move(r));
          next();
        });
      };
    };
    using proto::XattrOp;
    const std::string big(40'000, 'v');
    std::vector<Step> steps{
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.create("/x", CreateOptions{}, a.inode("create", next));
        },
        op("/x", XattrOp::set, "user.a", std::string("1\0two", 5), 0, "set a"),
        op("/x", XattrOp::get, "user.a", "", 0, "get a"),
        op("/x", XattrOp::set, "user.a", "3", proto::k_xattr_create, "create a again"),
        op("/x", XattrOp::set, "user.b", "4", proto::k_xattr_replace, "replace missing b"),
        op("/x", XattrOp::set, "trusted.t", "5", proto::k_xattr_create, "create t"),
        op("/x", XattrOp::set, "security.s", big, 0, "set big"),
        op("/x", XattrOp::set, "user.c", big, 0, "over the inode's room"),
        op("/x", XattrOp::set, "system.posix_acl_access", "x", 0, "system"),
        op("/x", XattrOp::get, "user.none", "", 0, "get missing"),
        op("/x", XattrOp::list, "", "", 0, "list"),
        [&a](WorkloadContext& ctx, std::function<void()> next) { ctx.client.stat("/x", a.inode("stat", next)); },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.rename("/x", "/y", a.status("rename", next));
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) { ctx.client.link("/y", "/z", a.inode("link", next)); },
        op("/z", XattrOp::get, "user.a", "", 0, "get through the link"),
        op("/y", XattrOp::remove, "user.a", "", 0, "remove a"),
        op("/z", XattrOp::remove, "user.a", "", 0, "remove a again"),
        op("/y", XattrOp::list, "", "", 0, "list after"),
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.symlink("/y", "/l", CreateOptions{}, a.inode("symlink", next));
        },
        op("/l", XattrOp::set, "user.a", "1", 0, "user on a link"),
        op("/l", XattrOp::set, "trusted.a", "1", 0, "trusted on a link"),
        op("/", XattrOp::set, "user.root", "r", 0, "set on root"),
        op("/", XattrOp::get, "user.root", "", 0, "get on root"),
        op("/nothing", XattrOp::get, "user.a", "", 0, "no file")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    auto code = [&x](const std::string& key) {
      return x.count(key) == 0 ? StatusCode::internal : x.at(key).status().code();
    };
    ASSERT_EQ(code("set a"), StatusCode::ok) << x.at("set a").status().to_string();
    ASSERT_EQ(code("get a"), StatusCode::ok);
    EXPECT_TRUE(x.at("get a")->found);
    EXPECT_EQ(x.at("get a")->value, std::string("1\0two", 5)) << "values are bytes";
    EXPECT_EQ(code("create a again"), StatusCode::already_exists);
    ASSERT_EQ(code("replace missing b"), StatusCode::ok);
    EXPECT_FALSE(x.at("replace missing b")->found);
    EXPECT_EQ(code("create t"), StatusCode::ok);
    EXPECT_EQ(code("set big"), StatusCode::ok);
    EXPECT_EQ(code("over the inode's room"), StatusCode::no_space);
    EXPECT_EQ(code("system"), StatusCode::invalid_argument);
    ASSERT_EQ(code("get missing"), StatusCode::ok);
    EXPECT_FALSE(x.at("get missing")->found);
    ASSERT_EQ(code("list"), StatusCode::ok);
    std::vector<std::string> names;
    for (const auto& n : x.at("list")->names) names.push_back(n.name);
    EXPECT_EQ(names, (std::vector<std::string>{"security.s", "trusted.t", "user.a"}));
    EXPECT_TRUE(a.inodes["stat"].xattrs.empty()) << "a stat does not carry them";
    EXPECT_GT(a.inodes["stat"].ctime_ns, a.inodes["create"].ctime_ns) << "a set changes ctime";
    ASSERT_EQ(a.code("rename"), StatusCode::ok);
    ASSERT_EQ(a.code("link"), StatusCode::ok) << a.errors["link"];
    ASSERT_EQ(code("get through the link"), StatusCode::ok);
    EXPECT_EQ(x.at("get through the link")->value, std::string("1\0two", 5));
    EXPECT_TRUE(x.at("remove a")->found);
    ASSERT_EQ(code("remove a again"), StatusCode::ok);
    EXPECT_FALSE(x.at("remove a again")->found) << "one inode: removed through either name";
    EXPECT_EQ(x.at("list after")->names.size(), 2u);
    EXPECT_EQ(code("user on a link"), StatusCode::permission_denied);
    EXPECT_EQ(code("trusted on a link"), StatusCode::ok);
    EXPECT_EQ(code("set on root"), StatusCode::ok) << x.at("set on root").status().to_string();
    ASSERT_EQ(code("get on root"), StatusCode::ok);
    EXPECT_EQ(x.at("get on root")->value, "r");
    EXPECT_EQ(code("no file"), StatusCode::not_found);
  });
}

// A file unlinked while its client holds it open (keep_open) keeps its data
// until release_orphan: its name is gone, a read through the inode returns
// every byte; so does a file a rename replaced; a release of what is no
// orphan is not_found; the orphan table is empty after the releases.
TYPED_TEST_P(ServicesSuite, AFileUnlinkedWhileOpenKeepsItsDataUntilItsLastClose) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    constexpr std::uint64_t k_bytes = 3 * k_mib;
    Answers a;
    auto create = [&a](std::string path) -> Step {
      return [&a, path](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.create(path, CreateOptions{}, a.inode(path, next));
      };
    };
    auto read_inode = [&a](std::string path, std::uint64_t seed) -> Step {
      return [&a, path, seed](WorkloadContext& ctx, std::function<void()> next) {
        proto::InodeDesc inode = a.inodes.at(path);
        inode.size_bytes = k_bytes;  // as the open handle knows it
        const auto fail = a.status("read orphan " + path, next);
        MemHandle in = ctx.env.alloc(MemKind::host, 0, k_bytes).value();
        ctx.client.read(inode, 0, in, [&ctx, seed, in, fail](Result<std::uint64_t> r) {
          if (!r.ok()) return fail(r.status());
          ctx.ops.expect(ctx.env.verify(in, PatternSpec{seed, 0}), [fail](Completion& c) { fail(c.status); });
        });
      };
    };
    auto release = [&a](std::string path, std::string key) -> Step {
      return [&a, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.release_orphan(a.inodes.at(path), a.status(key, next));
      };
    };
    std::vector<Step> steps{
        create("/o"),
        write_pattern("/o", a, "/o", k_bytes, 7),
        create("/r"),
        write_pattern("/r", a, "/r", k_bytes, 8),
        create("/new"),
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.unlink("/o", true, a.status("unlink", next));
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) { ctx.client.stat("/o", a.inode("stat", next)); },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.rename("/new", "/r", true, a.status("rename over", next));
        },
        read_inode("/o", 7),
        read_inode("/r", 8),
        release("/o", "release"),
        release("/r", "release replaced"),
        release("/o", "release again"),
        release("/new", "release a named file")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    ASSERT_EQ(a.code("write /o"), StatusCode::ok) << a.errors["write /o"];
    ASSERT_EQ(a.code("unlink"), StatusCode::ok) << a.errors["unlink"];
    EXPECT_EQ(a.code("stat"), StatusCode::not_found) << "the name is gone";
    ASSERT_EQ(a.code("rename over"), StatusCode::ok) << a.errors["rename over"];
    EXPECT_EQ(a.code("read orphan /o"), StatusCode::ok) << "an orphan's bytes stay: " << a.errors["read orphan /o"];
    EXPECT_EQ(a.code("read orphan /r"), StatusCode::ok) << a.errors["read orphan /r"];
    EXPECT_EQ(a.code("release"), StatusCode::ok) << a.errors["release"];
    EXPECT_EQ(a.code("release replaced"), StatusCode::ok) << a.errors["release replaced"];
    EXPECT_EQ(a.code("release again"), StatusCode::not_found);
    EXPECT_EQ(a.code("release a named file"), StatusCode::not_found);
  });
}

// A file one client holds open (Client::open) keeps its data when another
// client takes its last name, by unlink or by a rename over it, until that
// open is closed: the opener reads every byte after the names went, and its
// close, which finds the name gone or another file there, lets the orphan go
// (the reply is the orphan's inode). A file opened and closed before its
// unlink goes at once. Fails without the server holding the opens: the
// other client's unlink removed the data.
TYPED_TEST_P(ServicesSuite, AFileAnotherClientHoldsOpenOutlivesItsUnlinkUntilTheClose) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    constexpr std::uint64_t k_bytes = 3 * k_mib;
    Answers a;
    Answers b;
    std::map<std::string, std::uint64_t> opens;
    auto create = [](Answers& x, std::string path) -> Step {
      return [&x, path](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.create(path, CreateOptions{}, x.inode(path, next));
      };
    };
    auto open = [&a, &opens](std::string path) -> Step {
      return [&a, &opens, path](WorkloadContext& ctx, std::function<void()> next) {
        opens[path] = ctx.client.new_open_id();
        ctx.client.open(path, opens[path], a.inode("open " + path, next));
      };
    };
    auto close = [&a, &opens](std::string path) -> Step {
      return [&a, &opens, path](WorkloadContext& ctx, std::function<void()> next) {
        AttrChange change;
        change.accessed = true;
        change.close_open_id = opens.at(path);
        ctx.client.set_attr(path, change, a.inode("close " + path, next));
      };
    };
    auto read_back = [&a](std::string path, std::uint64_t seed) -> Step {
      return [&a, path, seed](WorkloadContext& ctx, std::function<void()> next) {
        const auto fail = a.status("read " + path, next);
        MemHandle in = ctx.env.alloc(MemKind::host, 0, k_bytes).value();
        ctx.client.read(a.inodes.at("open " + path), 0, in, [&ctx, seed, in, fail](Result<std::uint64_t> r) {
          if (!r.ok()) return fail(r.status());
          ctx.ops.expect(ctx.env.verify(in, PatternSpec{seed, 0}), [fail](Completion& c) { fail(c.status); });
        });
      };
    };
    auto sync = [](std::string name) -> Step {
      return [name](WorkloadContext& ctx, std::function<void()> next) {
        barrier(ctx, name, [name, next](Status s) {
          EXPECT_TRUE(s.ok()) << name << ": " << s.to_string();
          next();
        });
      };
    };
    std::vector<Step> opener{create(a, "/s"),    write_pattern("/s", a, "/s", k_bytes, 7),
                             create(a, "/r"),    write_pattern("/r", a, "/r", k_bytes, 8),
                             create(a, "/c"),    open("/s"),
                             open("/r"),         open("/c"),
                             close("/c"),        sync("held"),
                             sync("gone"),       read_back("/s", 7),
                             read_back("/r", 8), close("/s"),
                             close("/r"),        sync("closed")};
    std::vector<Step> other{
        sync("held"),
        [&b](WorkloadContext& ctx, std::function<void()> next) { ctx.client.unlink("/s", b.status("unlink", next)); },
        create(b, "/new"),
        [&b](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.rename("/new", "/r", b.status("rename over", next));
        },
        [&b](WorkloadContext& ctx, std::function<void()> next) { ctx.client.unlink("/c", b.status("unlink c", next)); },
        [&b](WorkloadContext& ctx, std::function<void()> next) { ctx.client.stat("/s", b.inode("stat", next)); },
        sync("gone"),
        sync("closed")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(opener))), 0, 2);
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(other))), 1, 2);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    ASSERT_EQ(a.code("open /s"), StatusCode::ok) << a.errors["open /s"];
    ASSERT_EQ(b.code("unlink"), StatusCode::ok) << b.errors["unlink"];
    ASSERT_EQ(b.code("rename over"), StatusCode::ok) << b.errors["rename over"];
    ASSERT_EQ(b.code("unlink c"), StatusCode::ok) << b.errors["unlink c"];
    EXPECT_EQ(b.code("stat"), StatusCode::not_found) << "the name is gone";
    EXPECT_EQ(a.code("read /s"), StatusCode::ok) << "held open elsewhere, its bytes stay: " << a.errors["read /s"];
    EXPECT_EQ(a.code("read /r"), StatusCode::ok) << "replaced by a rename, too: " << a.errors["read /r"];
    ASSERT_EQ(a.code("close /s"), StatusCode::ok) << a.errors["close /s"];
    EXPECT_EQ(a.inodes["close /s"].file_id, a.inodes["/s"].file_id) << "the close answers with the orphan";
    ASSERT_EQ(a.code("close /r"), StatusCode::ok) << a.errors["close /r"];
    EXPECT_EQ(a.inodes["close /r"].file_id, a.inodes["/r"].file_id) << "not the file now named /r";
    EXPECT_EQ(cluster.world().counter("meta.orphans_kept_for_other_opens"), 2.0) << "/s and /r, not /c";
    EXPECT_EQ(cluster.world().counter("meta.orphans_released"), 2.0) << "each at its close";
  });
}

// Opens are leases (MetaServiceConfig::open_lease_ns, here 4 s): a client
// no longer heard (one that sends no renewals, as a dead one sends nothing)
// loses its opens, and the orphan only it held goes with them; an idle
// client that renews (every 200 ms) keeps its open across two leases, and
// its orphan's bytes. Fails without the leases: the silent client's orphan
// stayed, its open held, for as long as the server ran.
TYPED_TEST_P(ServicesSuite, AnOpenOfAClientNoLongerHeardIsLetGoAfterItsLease) {
  TypeParam::isolate([] {
    TestClusterSpec spec;
    // HwEnv runs in real time beside other tests: a renewing client loses
    // its open only if it is not heard for 4 s, twenty renewals.
    spec.meta.open_lease_ns = 4 * k_ns_per_s;
    BasicTestCluster<typename TypeParam::World> cluster(spec);
    constexpr std::uint64_t k_bytes = 1 * k_mib;
    constexpr TimeNs k_wait_ns = 10 * k_ns_per_s;  // past the silent client's lease and its check
    Answers live, silent, other;
    std::map<std::string, std::uint64_t> open_ids;  // by path
    auto create = create_file;
    auto open = [&open_ids](Answers& x, std::string path) { return open_file(x, open_ids, std::move(path)); };
    auto close = [&open_ids](Answers& x, std::string path) -> Step {
      return [&open_ids, &x, path](WorkloadContext& ctx, std::function<void()> next) {
        AttrChange change;
        change.accessed = true;
        change.close_open_id = open_ids.at(path);
        ctx.client.set_attr(path, change, x.inode("close " + path, next));
      };
    };
    auto wait = [k_wait_ns]() -> Step {
      return [k_wait_ns](WorkloadContext& ctx, std::function<void()> next) {
        ctx.ops.expect(ctx.env.timer(k_wait_ns), [next](Completion&) { next(); });
      };
    };
    auto sync = [](std::string name) -> Step {
      return [name](WorkloadContext& ctx, std::function<void()> next) {
        barrier(ctx, name, [name, next](Status s) {
          EXPECT_TRUE(s.ok()) << name << ": " << s.to_string();
          next();
        });
      };
    };
    // Releases (open_id 0) the orphan `x` opened as `path`: ok while an open
    // holds it (it stays), not_found once it is gone.
    auto probe = [&other](Answers& x, std::string path, std::string key) -> Step {
      return [&other, &x, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.release_orphan(x.inodes.at("open " + path), other.status(key, next));
      };
    };
    std::vector<Step> renewing{create(live, "/live"),
                               write_pattern("/live", live, "/live", k_bytes, 7),
                               open(live, "/live"),
                               sync("held"),
                               wait(),
                               sync("waited"),
                               sync("probed"),  // the probes first: a close racing them removed the orphan (HwEnv)
                               close(live, "/live"),
                               sync("done")};
    std::vector<Step> quiet{create(silent, "/silent"),
                            write_pattern("/silent", silent, "/silent", k_bytes, 8),
                            open(silent, "/silent"),
                            sync("held"),
                            sync("waited"),
                            sync("probed"),
                            close(silent, "/silent"),
                            sync("done")};
    std::vector<Step> unlinker{sync("held"),
                               [&other](WorkloadContext& ctx, std::function<void()> next) {
                                 ctx.client.unlink("/live", other.status("unlink /live", next));
                               },
                               [&other](WorkloadContext& ctx, std::function<void()> next) {
                                 ctx.client.unlink("/silent", other.status("unlink /silent", next));
                               },
                               wait(),
                               sync("waited"),
                               probe(live, "/live", "probe /live"),
                               probe(silent, "/silent", "probe /silent"),
                               sync("probed"),
                               sync("done")};
    ClientConfig renews;
    renews.open_renew_ns = 200 * k_ns_per_ms;
    ClientConfig mute = renews;
    mute.open_renew_ns = 0;
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(renewing))), 0, 3, renews);
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(quiet))), 1, 3, mute);
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(unlinker))), 2, 3, renews);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    ASSERT_EQ(live.code("open /live"), StatusCode::ok) << live.errors["open /live"];
    ASSERT_EQ(silent.code("open /silent"), StatusCode::ok) << silent.errors["open /silent"];
    ASSERT_EQ(other.code("unlink /live"), StatusCode::ok) << other.errors["unlink /live"];
    ASSERT_EQ(other.code("unlink /silent"), StatusCode::ok) << other.errors["unlink /silent"];
    EXPECT_EQ(other.code("probe /live"), StatusCode::ok) << "renewed, still held: " << other.errors["probe /live"];
    EXPECT_EQ(other.code("probe /silent"), StatusCode::not_found)
        << "its lease ended, its orphan went: " << other.errors["probe /silent"];
    ASSERT_EQ(live.code("close /live"), StatusCode::ok) << live.errors["close /live"];
    EXPECT_EQ(live.inodes["close /live"].file_id, live.inodes["/live"].file_id) << "the close answers with the orphan";
    EXPECT_EQ(silent.code("close /silent"), StatusCode::not_found) << "the server had let it go";
    EXPECT_EQ(cluster.world().counter("meta.opens_expired"), 1.0);
    EXPECT_EQ(cluster.world().counter("meta.orphans_released_by_lease"), 1.0);
    EXPECT_EQ(cluster.world().counter("meta.orphans_released"), 2.0) << "one by the lease, one at its close";
  });
}

// Rename of a directory: its whole subtree moves (files, subdirectories,
// their data), the old path is gone, link counts follow; a rename into its
// own subtree, over a non-empty directory or over a file is refused, over an
// empty directory it replaces it. Across metadata shards (2 shards,
// directories spread) a directory whose subtree lives elsewhere is refused
// saying so, and one held by the renaming shard moves.
TYPED_TEST_P(ServicesSuite, ADirectoryRenameMovesItsSubtree) {
  TypeParam::isolate([] {
    TestClusterSpec one;
    one.meta_shards = 1;
    BasicTestCluster<typename TypeParam::World> cluster(one);
    Answers a;
    auto mkdir = [&a](std::string path) -> Step {
      return [&a, path](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.mkdir(path, 0755, a.inode(path, next));
      };
    };
    auto create = [&a](std::string path) -> Step {
      return [&a, path](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.create(path, CreateOptions{}, a.inode(path, next));
      };
    };
    auto rename = [&a](std::string from, std::string to, std::string key) -> Step {
      return [&a, from, to, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.rename(from, to, a.status(key, next));
      };
    };
    auto stat = [&a](std::string path, std::string key) -> Step {
      return [&a, path, key](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.stat(path, a.inode(key, next));
      };
    };
    std::vector<Step> steps{mkdir("/p"),
                            mkdir("/p/q"),
                            mkdir("/p/q/r"),
                            create("/p/q/r/f"),
                            write_pattern("/p/q/r/f", a, "/p/q/r/f", k_mib, 5),
                            create("/p/g"),
                            mkdir("/empty"),
                            mkdir("/full"),
                            create("/full/x"),
                            create("/file"),
                            rename("/p", "/p/q/inside", "into its subtree"),
                            rename("/p", "/full", "over full"),
                            rename("/p", "/file", "over a file"),
                            rename("/p", "/s", "rename"),
                            stat("/p", "old"),
                            stat("/s/g", "moved file"),
                            stat("/s/q/r", "moved dir"),
                            read_pattern("/s/q/r/f", a, k_mib, 5),
                            stat("/", "root before"),
                            rename("/s", "/empty", "over empty"),
                            stat("/empty/q/r/f", "in replaced"),
                            stat("/", "root after"),
                            mkdir("/s"),
                            mkdir("/s/again")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(a.code("into its subtree"), StatusCode::invalid_argument);
    EXPECT_EQ(a.code("over full"), StatusCode::not_empty);
    EXPECT_EQ(a.code("over a file"), StatusCode::not_a_directory);
    ASSERT_EQ(a.code("rename"), StatusCode::ok) << a.errors["rename"];
    EXPECT_EQ(a.code("old"), StatusCode::not_found);
    EXPECT_EQ(a.code("moved file"), StatusCode::ok) << a.errors["moved file"];
    EXPECT_EQ(a.inodes["moved file"].file_id, a.inodes["/p/g"].file_id);
    ASSERT_EQ(a.code("moved dir"), StatusCode::ok) << a.errors["moved dir"];
    EXPECT_EQ(a.inodes["moved dir"].type, proto::InodeType::dir);
    EXPECT_EQ(a.code("read /s/q/r/f"), StatusCode::ok) << "its data moved with it: " << a.errors["read /s/q/r/f"];
    ASSERT_EQ(a.code("over empty"), StatusCode::ok) << a.errors["over empty"];
    EXPECT_EQ(a.code("in replaced"), StatusCode::ok) << a.errors["in replaced"];
    EXPECT_EQ(a.inodes["root after"].nlink + 1, a.inodes["root before"].nlink) << "the replaced directory is gone";
    EXPECT_EQ(a.code("/s/again"), StatusCode::ok) << "the old name is free: " << a.errors["/s/again"];
  });
}

TYPED_TEST_P(ServicesSuite, ADirectoryRenameAcrossMetadataShardsIsRefusedClearly) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});  // 2 shards, directories spread
    constexpr int k_dirs = 12;
    Answers a;
    std::vector<Step> steps;
    for (int i = 0; i < k_dirs; ++i) {
      const std::string d = "/m" + std::to_string(i);
      steps.push_back(
          [&a, d](WorkloadContext& ctx, std::function<void()> next) { ctx.client.mkdir(d, 0755, a.inode(d, next)); });
      steps.push_back([&a, d](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.rename(d, d + "-renamed", a.status("rename " + d, next));
      });
    }
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    int refused = 0, moved = 0;
    for (int i = 0; i < k_dirs; ++i) {
      const std::string d = "/m" + std::to_string(i);
      if (a.code("rename " + d) == StatusCode::ok) {
        ++moved;
      } else {
        EXPECT_EQ(a.code("rename " + d), StatusCode::invalid_argument);
        EXPECT_NE(a.errors["rename " + d].find("rename across shards is not supported"), std::string::npos)
            << a.errors["rename " + d];
        ++refused;
      }
    }
    EXPECT_GT(refused, 0);
    EXPECT_GT(moved, 0);
  });
}

// A listing with attributes (readdirplus, `ls -l`) gives each entry what a
// stat of it shows: a file's mode, owner, size, times and link count (a hard
// link's from its record), a symbolic link's, a FIFO's device number; a
// listing without them carries none.
TYPED_TEST_P(ServicesSuite, AListingWithAttributesShowsWhatAStatShows) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    Answers a;
    std::vector<proto::DirEntryDesc> plus, plain;
    auto stat = [&a](std::string path) -> Step {
      return [&a, path](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.stat(path, a.inode("stat " + path, next));
      };
    };
    auto list = [&a](bool with_attrs, std::vector<proto::DirEntryDesc>* out) -> Step {
      return [&a, with_attrs, out](WorkloadContext& ctx, std::function<void()> next) {
        ctx.client.readdir("/l", with_attrs, [&a, out, next](Result<std::vector<proto::DirEntryDesc>> r) {
          if (r.ok()) *out = *r;
          a.status("list", next)(r.status());
        });
      };
    };
    CreateOptions owned;
    owned.mode = 0640;
    owned.uid = 1234;
    owned.gid = 5678;
    std::vector<Step> steps{[&a](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.mkdir("/l", 0755, a.inode("mkdir", next));
                            },
                            [&a, owned](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.create("/l/f", owned, a.inode("create", next));
                            },
                            write_pattern("/l/f", a, "create", 3000, 7),
                            [&a](WorkloadContext& ctx, std::function<void()> next) {
                              AttrChange times;
                              times.mtime_ns = 1'600'000'000'000'000'123;
                              times.atime_ns = 1'500'000'000'000'000'456;
                              ctx.client.set_attr("/l/f", times, a.inode("utimens", next));
                            },
                            [&a](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.link("/l/f", "/l/h", a.inode("link", next));
                            },
                            [&a](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.symlink("f", "/l/s", CreateOptions{}, a.inode("symlink", next));
                            },
                            [&a](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.mknod("/l/c", proto::InodeType::char_device, 0600, 0x0801, CreateOptions{},
                                               a.inode("mknod", next));
                            },
                            [&a](WorkloadContext& ctx, std::function<void()> next) {
                              ctx.client.mkdir("/l/d", 0700, a.inode("sub", next));
                            },
                            list(true, &plus),
                            list(false, &plain),
                            stat("/l/f"),
                            stat("/l/h"),
                            stat("/l/s"),
                            stat("/l/c"),
                            stat("/l/d")};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    for (const auto& [key, code] : a.codes) EXPECT_EQ(code, StatusCode::ok) << key << ": " << a.errors[key];
    ASSERT_EQ(plus.size(), 5u);
    ASSERT_EQ(plain.size(), 5u);
    for (const proto::DirEntryDesc& e : plain) EXPECT_FALSE(e.attrs.has_value()) << e.name;
    for (const proto::DirEntryDesc& e : plus) {
      ASSERT_TRUE(e.attrs.has_value()) << e.name;
      const proto::InodeDesc& st = a.inodes["stat /l/" + e.name];
      EXPECT_EQ(e.file_id, st.file_id) << e.name;
      EXPECT_EQ(e.type, st.type) << e.name;
      EXPECT_EQ(e.attrs->mode, st.mode) << e.name;
      EXPECT_EQ(e.attrs->uid, st.uid) << e.name;
      EXPECT_EQ(e.attrs->gid, st.gid) << e.name;
      EXPECT_EQ(e.attrs->rdev, st.rdev) << e.name;
      if (e.type == proto::InodeType::dir) continue;  // its times and link count: merged by a stat only
      EXPECT_EQ(e.attrs->atime_ns, st.atime_ns) << e.name;
      EXPECT_EQ(e.size_bytes, st.size_bytes) << e.name;
      EXPECT_EQ(e.attrs->nlink, st.nlink) << e.name;
      EXPECT_EQ(e.attrs->mtime_ns, st.mtime_ns) << e.name;
      EXPECT_EQ(e.attrs->ctime_ns, st.ctime_ns) << e.name;
      EXPECT_EQ(e.attrs->chunk_bytes, st.stripe.chunk_bytes) << e.name;
    }
    const proto::InodeDesc& f = a.inodes["stat /l/f"];
    EXPECT_EQ(f.size_bytes, 3000u);
    EXPECT_EQ(f.nlink, 2u);
    EXPECT_EQ(f.mode, 0640u);
    EXPECT_EQ(f.uid, 1234u);
    EXPECT_EQ(f.mtime_ns, 1'600'000'000'000'000'123);
    EXPECT_EQ(a.inodes["stat /l/c"].rdev, 0x0801u);
  });
}

// fallocate through the client: a hole punched across chunks of four
// targets and a zeroed range read as zeros (edges inside chunks and CRC
// blocks included), every other byte as written; a reservation past the end
// changes neither bytes nor size; a directory and a range past the largest
// file are refused clearly. Fails without AllocateChunk: the bytes stay.
TYPED_TEST_P(ServicesSuite, FallocatePunchesZerosAndReservesWhatItNames) {
  TypeParam::isolate([] {
    BasicTestCluster<typename TypeParam::World> cluster(TestClusterSpec{});
    ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
    constexpr std::uint64_t k_bytes = k_mib;
    Answers a;
    std::vector<Step> steps{
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          CreateOptions striped;
          striped.chunk_bytes = 64 * k_kib;
          striped.stripe_count = 4;
          ctx.client.create("/f", striped, a.inode("/f", next));
        },
        write_pattern("/f", a, "/f", k_bytes, 11),
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.allocate(a.inodes.at("/f"), 100'000, 300'000, proto::AllocMode::punch, a.status("punch", next));
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.allocate(a.inodes.at("/f"), 700'001, 70'000, proto::AllocMode::zero, a.status("zero", next));
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.allocate(a.inodes.at("/f"), 2 * k_mib, k_mib, proto::AllocMode::reserve,
                              a.status("reserve", next));
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.mkdir("/d", 0755, [&a, &ctx, next](Result<proto::InodeDesc> d) {
            if (!d.ok()) return a.status("directory", next)(d.status());
            ctx.client.allocate(*d, 0, 4096, proto::AllocMode::reserve, a.status("directory", next));
          });
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          ctx.client.allocate(a.inodes.at("/f"), k_max_file_bytes - 10, 11, proto::AllocMode::reserve,
                              a.status("past the end", next));
        },
        [&a](WorkloadContext& ctx, std::function<void()> next) {
          Scripted::Script read = read_with_zeros("/f", k_bytes, 11, {{100'000, 400'000}, {700'001, 770'001}});
          read(ctx, a.status("read", next));
        }};
    cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(a.code("write /f"), StatusCode::ok) << a.errors["write /f"];
    EXPECT_EQ(a.code("punch"), StatusCode::ok) << a.errors["punch"];
    EXPECT_EQ(a.code("zero"), StatusCode::ok) << a.errors["zero"];
    EXPECT_EQ(a.code("reserve"), StatusCode::ok) << a.errors["reserve"];
    EXPECT_EQ(a.code("directory"), StatusCode::is_a_directory) << a.errors["directory"];
    EXPECT_EQ(a.code("past the end"), StatusCode::invalid_argument) << a.errors["past the end"];
    EXPECT_EQ(a.code("read"), StatusCode::ok) << "size unchanged, holes and bytes as expected: " << a.errors["read"];
    // Chunks 1-6 of the punch hold all 4 targets, chunks 10-11 of the zero
    // two, the reservation's 16 chunks all 4; the refusals send nothing.
    EXPECT_EQ(cluster.world().counter("storage.allocations"), 10.0);
  });
}

TYPED_TEST_P(ServicesSuite, BuddyMirrorPunchReachesTheSecondary) {
  TypeParam::isolate([] { mirror_punch_reaches_the_secondary<typename TypeParam::World>(); });
}

REGISTER_TYPED_TEST_SUITE_P(
    ServicesSuite, AListingWithAttributesShowsWhatAStatShows, EndToEndOwnerRandomized, EndToEndStripedRoundRobin,
    EndToEndPathHashRandomRobin, EndToEndOwnerRandomInterNode, EndToEndStripedSpaceWeightedQos,
    LostChunkRequestsAreRetriedAndTheReadSucceeds, DuplicatedAndLateMessagesGiveTheSameAnswer,
    ADeadStorageServerGivesAClearErrorNamingTheTarget, ANeverAnsweredMetadataRequestTimesOutInsteadOfHanging,
    NamespaceErrorsAreClearAndItsRulesHold, ALargeDirectoryListsCompletelyInPages,
    AFullTargetQueueAnswersAgainAndTheClientStillGetsEveryByte, TheEgressLimitPacesReadsFromAServer,
    BuddyMirrorFailoverKeepsEveryAcknowledgedWrite, BuddyMirrorResyncThenFailoverKeepsTheData,
    MetaMirrorFailoverKeepsTheNamespace, AReadWhoseDataOutlivesTheRpcTimeoutIsWaitedForAndExecutedOnce,
    AReadTheClientGaveUpOnCannotWriteIntoTheCallersMemoryLater, SetAttrChangesWhatItNamesAndLongPathErrorsArrive,
    SymbolicLinksKeepTheirTargetAndUnlinkRemovesOnlyTheLink, HardLinksShareTheInodeAndTheLastUnlinkRemovesIt,
    HardLinksAcrossMetadataShardsAreRefusedClearly, SpecialFilesAreInodesWithTheirTypeModeAndDeviceNumber,
    TimesFollowEveryChangeOfAnInodeAndOfADirectorysEntries, ExtendedAttributesAreKeptWithTheInode,
    AFileUnlinkedWhileOpenKeepsItsDataUntilItsLastClose, AFileAnotherClientHoldsOpenOutlivesItsUnlinkUntilTheClose,
    AnOpenOfAClientNoLongerHeardIsLetGoAfterItsLease, ADirectoryRenameMovesItsSubtree,
    ADirectoryRenameAcrossMetadataShardsIsRefusedClearly, FallocatePunchesZerosAndReservesWhatItNames,
    BuddyMirrorPunchReachesTheSecondary);

}  // namespace sluice::testing::shared_suite
