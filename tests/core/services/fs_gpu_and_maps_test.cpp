// GPU destinations through the client's planner, mgmt's reachability states
// from heartbeats, and the storage server's small requests.
#include <gtest/gtest.h>

#include <memory>

#include "tests/core/services/scripted_workload.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

// Writes 2 MiB from host memory, reads it into GPU 1's memory, verifies it there.
Scripted::Script host_to_gpu(std::uint64_t* read_bytes) {
  return [read_bytes](WorkloadContext& ctx, std::function<void(Status)> done) {
    constexpr std::uint64_t k_bytes = 2 * k_mib;
    ctx.client.create("/g", CreateOptions{}, [&ctx, done, read_bytes](Result<proto::InodeDesc> inode) {
      if (!inode.ok()) return done(inode.status());
      MemHandle src = ctx.env.alloc(MemKind::host, 0, k_bytes).value();
      ctx.ops.expect(ctx.env.fill(src, PatternSpec{3, 0}), [&ctx, done, read_bytes, src, inode = *inode](Completion&) {
        ctx.client.write(inode, 0, src, true, [&ctx, done, read_bytes, inode](Result<std::uint64_t> w) {
          if (!w.ok()) return done(w.status());
          proto::InodeDesc sized = inode;
          sized.size_bytes = k_bytes;
          MemHandle gpu = ctx.env.alloc(MemKind::gpu, 1, k_bytes).value();
          ctx.client.read(sized, 0, gpu, [&ctx, done, read_bytes, gpu](Result<std::uint64_t> r) {
            if (!r.ok()) return done(r.status());
            *read_bytes = *r;
            ctx.ops.expect(ctx.env.verify(gpu, PatternSpec{3, 0}), [done](Completion& c) { done(c.status); });
          });
        });
      });
    });
  };
}

TEST(FileSystemGpu, ReadsIntoGpuMemoryBounceWhenTheTransportCannotReachIt) {
  TestCluster cluster(TestClusterSpec{});
  std::uint64_t read_bytes = 0;
  ClientConfig client;
  client.planner.caps.gpu_memory_reachable = false;
  auto& host = cluster.add_host(std::make_unique<Scripted>(host_to_gpu(&read_bytes)), 0, 1, client);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok()) << host.result().to_string();
  EXPECT_EQ(read_bytes, 2 * k_mib);
  EXPECT_EQ(cluster.world().counter("client.chunks_bounce"), 4.0);  // the 4 read chunks (writes come from host)
  EXPECT_EQ(cluster.world().counter("client.chunks_direct"), 4.0);
}

TEST(FileSystemGpu, ReadsIntoGpuMemoryGoDirectWhenTheTransportReachesIt) {
  TestCluster cluster(TestClusterSpec{});
  std::uint64_t read_bytes = 0;
  ClientConfig client;
  client.planner.caps.gpu_memory_reachable = true;
  auto& host = cluster.add_host(std::make_unique<Scripted>(host_to_gpu(&read_bytes)), 0, 1, client);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok()) << host.result().to_string();
  EXPECT_EQ(read_bytes, 2 * k_mib);
  EXPECT_EQ(cluster.world().counter("client.chunks_bounce"), 0.0);
}

TEST(Mgmt, TargetsGoProbablyOfflineThenOfflineWhenHeartbeatsStopAndComeBack) {
  TestWorld world;
  MgmtConfig mc;
  mc.check_interval_ns = 1 * k_ns_per_s;
  mc.buddy_groups = {proto::BuddyGroupDesc{1, 1, 2}};
  auto& mgmt = world.add_service<MgmtService>(0, mc);
  world.add_target(1, 1);
  StorageServiceConfig sc;
  sc.mgmt = world.endpoint_of(mgmt);
  sc.targets = {1};
  sc.heartbeat_interval_ns = 1 * k_ns_per_s;
  auto& storage = world.add_service<StorageService>(1, sc);
  world.run_for(5 * k_ns_per_s);
  ASSERT_TRUE(storage.registered());
  EXPECT_EQ(mgmt.targets().at(1).reachability, proto::Reachability::online);
  EXPECT_EQ(mgmt.targets().at(1).pool, proto::CapacityPool::normal);
  const auto version = mgmt.version();
  world.kill(world.endpoint_of(storage));
  world.run_for(mc.probably_offline_after_ns + 1 * k_ns_per_s);
  EXPECT_EQ(mgmt.targets().at(1).reachability, proto::Reachability::probably_offline);
  world.run_for(mc.offline_after_ns);
  EXPECT_EQ(mgmt.targets().at(1).reachability, proto::Reachability::offline);
  EXPECT_GT(mgmt.version(), version);
  // A restarted server on the node registers again and heartbeats: online.
  auto& restarted = world.add_service<StorageService>(1, sc);
  world.run_for(3 * k_ns_per_s);
  EXPECT_TRUE(restarted.registered());
  EXPECT_EQ(mgmt.targets().at(1).reachability, proto::Reachability::online);
}

// FlushStorage (a file sweep's sync_dropcache between phases): a retry of a
// flush still running is answered in_progress, not flushed again; the call
// gets one Ack once every target of the server has flushed.
TEST(StorageService, AFlushRetriedWhileItRunsIsAnsweredInProgressAndFlushedOnce) {
  TestCluster cluster(TestClusterSpec{});
  std::vector<StatusCode> codes;
  auto& host = cluster.add_host(std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
                                  const Endpoint server = ctx.client.targets().begin()->second.endpoint;
                                  const RequestId rid =
                                      ctx.rpc.call(server, proto::FlushStorage{}, [&, done](Result<proto::Message> r) {
                                        codes.push_back(r.status().code());
                                        done(ok_status());
                                      });
                                  ctx.env.send(server, proto::FlushStorage{rid}).ignore();  // the retry, sent at once
                                }),
                                0, 1);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok());
  EXPECT_EQ(codes, std::vector<StatusCode>{StatusCode::ok});
  EXPECT_EQ(cluster.world().counter("storage.flushes"), 1.0);
}

TEST(StorageService, AnswersChunkSizeAndRefusesTargetsItDoesNotOwnOrBadRequests) {
  TestCluster cluster(TestClusterSpec{});
  std::vector<StatusCode> codes;
  std::uint64_t object_bytes = 0;
  auto& host = cluster.add_host(
      std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
        ctx.client.create("/s", CreateOptions{}, [&, done](Result<proto::InodeDesc> inode) {
          MemHandle buf = ctx.env.alloc(MemKind::host, 0, 700 * k_kib).value();
          ctx.client.write(*inode, 0, buf, false, [&, done, inode = *inode, buf](Result<std::uint64_t>) {
            const TargetId first = inode.stripe.targets[0];
            const Endpoint server = ctx.client.targets().at(first).endpoint;
            proto::ChunkSize size;
            size.file_id = inode.file_id;
            size.target = first;
            ctx.rpc.call(server, size, [&, done, inode, buf, server, first](Result<proto::Message> r) {
              codes.push_back(r.status().code());
              if (r.ok()) object_bytes = std::get<proto::ChunkSizeReply>(r.value()).object_bytes;
              proto::ReadChunk wrong;
              wrong.file_id = inode.file_id;
              wrong.target = 999;  // not on that server
              wrong.length = 10;
              wrong.dst = buf.slice(0, 10);
              ctx.rpc.call(server, wrong, [&, done, inode, buf, server, first](Result<proto::Message> r2) {
                codes.push_back(r2.status().code());
                proto::ReadChunk mismatched;
                mismatched.file_id = inode.file_id;
                mismatched.target = first;
                mismatched.length = 20;
                mismatched.dst = buf.slice(0, 10);  // handle shorter than the length
                ctx.rpc.call(server, mismatched, [&, done, server](Result<proto::Message> r3) {
                  codes.push_back(r3.status().code());
                  ctx.rpc.call(server, proto::Mkdir{0, "/x", 0755}, [&, done](Result<proto::Message> r4) {
                    codes.push_back(r4.status().code());
                    done(ok_status());
                  });
                });
              });
            });
          });
        });
      }),
      0, 1);
  ASSERT_TRUE(cluster.run());
  ASSERT_TRUE(host.result().ok());
  EXPECT_EQ(codes, (std::vector<StatusCode>{StatusCode::ok, StatusCode::not_found, StatusCode::invalid_argument,
                                            StatusCode::invalid_argument}));
  EXPECT_EQ(object_bytes, 512 * k_kib);  // the first target holds chunk 0 (512 KiB) of 700 KiB
}

TEST(ClientMaps, AShardThatRegistersLateIsWaitedForWithABoundedBackoff) {
  TestClusterSpec spec;
  spec.wait_for_registration = false;  // the client starts with the servers
  TestCluster cluster(spec);
  Status mkdir_status = error(StatusCode::internal, "not run");
  cluster.add_host(std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
                     ctx.client.mkdir("/late", 0755, [&, done](Result<proto::InodeDesc> r) {
                       mkdir_status = r.status();
                       done(ok_status());
                     });
                   }),
                   0, 1);
  // Metadata shards register 250 ms late, as servers on real machines may start after a client.
  cluster.world().add_fault(MessageRule{is_a<proto::RegisterMetaShard>(), FaultAction::delay, 250 * k_ns_per_ms, 10});
  ASSERT_TRUE(cluster.run());
  EXPECT_TRUE(mkdir_status.ok()) << mkdir_status.to_string();
}

TEST(ClientMaps, AShardThatNeverRegistersFailsWithAClearErrorAfterTheBackoff) {
  TestClusterSpec spec;
  spec.wait_for_registration = false;
  TestCluster cluster(spec);
  Status mkdir_status;
  cluster.add_host(std::make_unique<Scripted>([&](WorkloadContext& ctx, std::function<void(Status)> done) {
                     ctx.client.mkdir("/never", 0755, [&, done](Result<proto::InodeDesc> r) {
                       mkdir_status = r.status();
                       done(ok_status());
                     });
                   }),
                   0, 1);
  cluster.world().add_fault(MessageRule{is_a<proto::RegisterMetaShard>(), FaultAction::drop, 0, 1000});
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(mkdir_status.code(), StatusCode::unavailable);
  EXPECT_NE(mkdir_status.message().find("metadata shard"), std::string::npos) << mkdir_status.to_string();
}

}  // namespace
}  // namespace sluice::testing
