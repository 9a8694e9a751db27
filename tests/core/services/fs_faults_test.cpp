// Services under TestEnv's fault controls, and large directories: messages
// that arrive late, twice or never lead to a retry or a clear error, never a
// hang or a wrong answer; a 100,000-entry directory lists completely.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <set>
#include <string>

#include "tests/core/services/scripted_workload.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

// create + write 1 MiB + close + read back; reports the read size.
Scripted::Script write_then_read(std::uint64_t* read_bytes) {
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

TEST(FileSystemFaults, LostChunkRequestsAreRetriedAndTheReadSucceeds) {
  TestCluster cluster(TestClusterSpec{});
  std::uint64_t read_bytes = 0;
  cluster.add_host(std::make_unique<Scripted>(write_then_read(&read_bytes)), 0, 1);
  cluster.world().add_fault(MessageFault{is_a<proto::ReadChunk>(), FaultAction::drop, 0, 2});
  cluster.world().add_fault(MessageFault{is_a<proto::WriteChunk>(), FaultAction::drop, 0, 1});
  ASSERT_TRUE(cluster.run());
  EXPECT_TRUE(cluster.hosts()[0]->result().ok()) << cluster.hosts()[0]->result().to_string();
  EXPECT_EQ(read_bytes, k_mib);
  EXPECT_EQ(cluster.world().messages_dropped(), 3u);
  EXPECT_GE(cluster.world().counter("rpc.retries"), 3.0);
}

TEST(FileSystemFaults, DuplicatedAndLateMessagesGiveTheSameAnswer) {
  TestCluster cluster(TestClusterSpec{});
  std::uint64_t read_bytes = 0;
  cluster.add_host(std::make_unique<Scripted>(write_then_read(&read_bytes)), 0, 1);
  // Every metadata request twice, replies late (past one timeout: the retry races the reply).
  cluster.world().add_fault(MessageFault{is_a<proto::Create>(), FaultAction::duplicate, 0, 10});
  cluster.world().add_fault(MessageFault{is_a<proto::InodeReply>(), FaultAction::delay, 3 * k_ns_per_s, 1});
  cluster.world().add_fault(MessageFault{is_a<proto::ChunkReply>(), FaultAction::duplicate, 0, 100});
  ASSERT_TRUE(cluster.run());
  EXPECT_TRUE(cluster.hosts()[0]->result().ok()) << cluster.hosts()[0]->result().to_string();
  EXPECT_EQ(read_bytes, k_mib);
  // The duplicated create did not create a second file or fail with already_exists.
  EXPECT_EQ(cluster.world().counter("meta.create_ops"), 1.0);
}

TEST(FileSystemFaults, ADeadStorageServerGivesAClearErrorNamingTheTarget) {
  TestClusterSpec spec;
  spec.targets_per_server = {1, 1, 1, 1};
  spec.meta.default_stripe_count = 4;  // with 64 KiB chunks, a 1 MiB file touches every server
  spec.meta.default_chunk_bytes = 64 * k_kib;
  TestCluster cluster(spec);
  std::uint64_t read_bytes = 0;
  auto& host = cluster.add_host(std::make_unique<Scripted>(write_then_read(&read_bytes)), 0, 1);
  // Kill one storage server as soon as the first read goes out.
  Endpoint victim = cluster.world().endpoint_of(*cluster.storages()[1]);
  bool killed = false;
  cluster.world().add_fault(MessageFault{[&](const Endpoint&, const Endpoint&, const proto::Message& m) {
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
}

TEST(FileSystemFaults, ANeverAnsweredMetadataRequestTimesOutInsteadOfHanging) {
  TestCluster cluster(TestClusterSpec{});
  auto& host = cluster.add_host(std::make_unique<Scripted>([](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.mkdir("/never", 0755, [done](Result<proto::InodeDesc> r) { done(r.status()); });
  }), 0, 1);
  cluster.world().add_fault(MessageFault{is_a<proto::Mkdir>(), FaultAction::drop, 0, 1000});
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(host.result().code(), StatusCode::timed_out);
  EXPECT_NE(host.result().message().find("Mkdir"), std::string::npos) << host.result().to_string();
}

TEST(FileSystemNamespace, ErrorsAreClearAndNamespaceRulesHold) {
  TestCluster cluster(TestClusterSpec{});
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
  }), 0, 1);
  ASSERT_TRUE(cluster.run());
  const std::vector<StatusCode> expected{StatusCode::already_exists, StatusCode::not_found, StatusCode::not_empty,
                                         StatusCode::is_a_directory, StatusCode::ok, StatusCode::not_found,
                                         StatusCode::invalid_argument};
  EXPECT_EQ(codes, expected);
}

TEST(FileSystemNamespace, AHundredThousandEntryDirectoryListsCompletelyInPages) {
  TestClusterSpec spec;
  spec.policy = MetaPolicy::striped_dir;
  spec.meta.ns.dir_stripe_count = 2;
  spec.world.roundtrip_messages_through_codec = false;  // speed; the codec has its own tests
  TestCluster cluster(spec);
  constexpr std::size_t k_entries = 100'000;
  std::size_t listed = 0;
  std::set<std::string> names;
  auto& host = cluster.add_host(std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.mkdir("/big", 0755, [&, done](Result<proto::InodeDesc> r) {
      if (!r.ok()) return done(r.status());
      auto created = std::make_shared<std::size_t>(0);
      auto next = std::make_shared<std::size_t>(0);
      auto failed = std::make_shared<Status>();
      auto launch = std::make_shared<std::function<void()>>();
      *launch = [&, done, created, next, failed, launch]() {
        while (*next < k_entries && *next - *created < 64) {
          const std::size_t i = (*next)++;
          ctx.client.create("/big/e" + std::to_string(i), CreateOptions{}, [&, done, created, failed, launch](
                                                                                Result<proto::InodeDesc> c) {
            if (!c.ok() && failed->ok()) *failed = c.status();
            if (++*created == k_entries) {
              *launch = nullptr;
              if (!failed->ok()) return done(*failed);
              ctx.client.readdir("/big", false, [&, done](Result<std::vector<proto::DirEntryDesc>> entries) {
                if (!entries.ok()) return done(entries.status());
                listed = entries->size();
                for (const auto& e : *entries) names.insert(e.name);
                done(ok_status());
              });
              return;
            }
            (*launch)();
          });
        }
      };
      (*launch)();
    });
  }), 0, 1);
  ASSERT_TRUE(cluster.run(500'000'000));
  ASSERT_TRUE(host.result().ok()) << host.result().to_string();
  EXPECT_EQ(listed, k_entries);
  EXPECT_EQ(names.size(), k_entries);  // no entry twice, none missing
  // It took many pages: the server caps a page.
  EXPECT_GE(cluster.world().messages_sent(), 2 * k_entries + k_entries / 1024);
}

// Writes then reads `bytes` of /big with many chunks in flight; reports the read's virtual duration.
Scripted::Script big_read(std::uint64_t bytes, TimeNs* read_ns) {
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

TEST(FileSystemBackPressure, AFullTargetQueueAnswersAgainAndTheClientStillGetsEveryByte) {
  TestClusterSpec spec;
  spec.storage.max_queued_per_target = 2;
  spec.storage.max_active_per_target = 1;
  TestCluster cluster(spec);
  TimeNs read_ns = 0;
  auto& host = cluster.add_host(std::make_unique<Scripted>(big_read(16 * k_mib, &read_ns)), 0, 1);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok()) << host.result().to_string();
  EXPECT_GT(cluster.world().counter("storage.again_replies"), 0.0);
  EXPECT_EQ(cluster.world().counter("client.read_bytes"), static_cast<double>(16 * k_mib));
}

TEST(FileSystemBackPressure, TheEgressLimitPacesReadsFromAServer) {
  constexpr std::uint64_t k_bytes = 16 * k_mib;
  constexpr double k_limit_bytes_per_s = 200e6;
  TimeNs unlimited_ns = 0, limited_ns = 0;
  {
    TestCluster cluster(TestClusterSpec{});
    cluster.add_host(std::make_unique<Scripted>(big_read(k_bytes, &unlimited_ns)), 0, 1);
    ASSERT_TRUE(cluster.run());
  }
  {
    TestClusterSpec spec;
    spec.storage.egress_limit_bytes_per_s = k_limit_bytes_per_s;
    spec.storage.egress_burst_bytes = k_mib;
    TestCluster cluster(spec);
    cluster.add_host(std::make_unique<Scripted>(big_read(k_bytes, &limited_ns)), 0, 1);
    ASSERT_TRUE(cluster.run());
    EXPECT_GT(cluster.world().counter("storage.egress_throttled_ns"), 0.0);
  }
  // Without the limit the read runs at the disk's 3.2 GB/s; with it, at the limit (minus the 1 MiB burst).
  const double floor_ns = static_cast<double>(k_bytes - k_mib) / k_limit_bytes_per_s * 1e9;
  EXPECT_LT(static_cast<double>(unlimited_ns), floor_ns / 5);
  EXPECT_GE(static_cast<double>(limited_ns), floor_ns);
  EXPECT_LT(static_cast<double>(limited_ns), floor_ns * 1.2);
}

}  // namespace
}  // namespace sluice::testing
