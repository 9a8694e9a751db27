// Buddy mirroring scenarios (issue 9), written against TestWorld's surface so
// that they run on every world of the shared services suite (TestEnv, SimEnv,
// HwEnv) and in buddy_mirror_test.cpp with byte-level checks on TestEnv.
//
// buddy_mirrored_spec() is also the switch other tests use to turn mirroring
// on for a TestCluster: one target per storage server, servers paired into
// buddy groups, heartbeats and switchover on, new files buddy-mirrored.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/proto/crc32c.hpp"
#include "tests/core/services/scripted_workload.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {

// Heartbeats and their timeouts for mirrored test clusters: short, so that a
// switchover takes a couple of seconds, but far above the message latency of
// every world (HwEnv's real time on a loaded machine included).
inline constexpr TimeNs k_mirror_heartbeat_ns = 100 * k_ns_per_ms;
inline constexpr TimeNs k_mirror_probably_offline_ns = 1 * k_ns_per_s;
inline constexpr TimeNs k_mirror_offline_ns = 2 * k_ns_per_s;
inline constexpr TimeNs k_mirror_maps_refresh_ns = 200 * k_ns_per_ms;
// Long enough for heartbeats to mark a healed server online, a resync of a
// few MiB and a switchover (offline timeout + a maps refresh) to happen.
inline constexpr TimeNs k_mirror_settle_ns = 5 * k_ns_per_s;

// Heartbeats, mgmt's reachability timeouts and switchover for mirrored test
// clusters (storage and metadata mirroring alike).
inline void with_mirror_heartbeats(TestClusterSpec& spec) {
  spec.mgmt.check_interval_ns = k_mirror_heartbeat_ns;
  spec.mgmt.probably_offline_after_ns = k_mirror_probably_offline_ns;
  spec.mgmt.offline_after_ns = k_mirror_offline_ns;
  spec.storage.heartbeat_interval_ns = k_mirror_heartbeat_ns;
  spec.meta.mirror.heartbeat_interval_ns = k_mirror_heartbeat_ns;
}

// A TestClusterSpec with buddy mirroring on: `servers` storage servers (an
// even number) with one target each (targets 1..servers), groups
// {1: targets 1/2, 2: 3/4, ...} so buddies sit on different servers, and
// new files striped over every group in 64 KiB chunks.
inline TestClusterSpec buddy_mirrored_spec(std::uint32_t servers = 4) {
  TestClusterSpec spec;
  spec.targets_per_server.assign(servers, 1);
  spec.mgmt.buddy_groups.clear();
  for (std::uint32_t g = 0; g < servers / 2; ++g) {
    spec.mgmt.buddy_groups.push_back(proto::BuddyGroupDesc{g + 1, 2 * g + 1, 2 * g + 2});
  }
  with_mirror_heartbeats(spec);
  spec.storage.mirror.enabled = true;
  spec.storage.mirror.maps_refresh_interval_ns = k_mirror_maps_refresh_ns;
  spec.meta.mirror_file_data = true;
  spec.meta.default_stripe_count = servers / 2;
  spec.meta.default_chunk_bytes = 64 * k_kib;
  return spec;
}

// A network partition of one service: while on, every message from or to it
// is dropped (it keeps running, as a server cut off by a switch does).
// The flag is atomic: HwEnv calls fault matchers from its loop threads.
struct Partition {
  std::shared_ptr<std::atomic<bool>> on = std::make_shared<std::atomic<bool>>(false);

  template <class World>
  void install(World& world, Endpoint victim) {
    world.add_fault(MessageRule{[flag = on, victim](const Endpoint& from, const Endpoint& to, const proto::Message&) {
                                  return flag->load() && (from == victim || to == victim);
                                },
                                FaultAction::drop, 0, ~std::uint64_t{0}});
  }
};

// A broken link between two services: while on (from the start), every
// message between them, either way, is dropped; each keeps its other links.
struct LinkCut {
  std::shared_ptr<std::atomic<bool>> on = std::make_shared<std::atomic<bool>>(true);

  template <class World>
  void install(World& world, Endpoint a, Endpoint b) {
    world.add_fault(MessageRule{[flag = on, a, b](const Endpoint& from, const Endpoint& to, const proto::Message&) {
                                  return flag->load() && ((from == a && to == b) || (from == b && to == a));
                                },
                                FaultAction::drop, 0, ~std::uint64_t{0}});
  }
};

// create `path` + write `bytes` of pattern `seed` + close; *inode gets the created inode.
inline Scripted::Script write_file(std::string path, std::uint64_t bytes, std::uint64_t seed,
                                   std::shared_ptr<proto::InodeDesc> inode_out = nullptr) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.create(
        path, CreateOptions{}, [&ctx, done, path, bytes, seed, inode_out](Result<proto::InodeDesc> inode) {
          if (!inode.ok()) return done(inode.status());
          if (inode_out) *inode_out = *inode;
          Result<MemHandle> buf = ctx.env.alloc(MemKind::host, 0, bytes);
          if (!buf.ok()) return done(buf.status());
          ctx.ops.expect(ctx.env.fill(*buf, PatternSpec{seed, 0}), [&ctx, done, path, bytes, buf = *buf,
                                                                    inode = *inode](Completion&) {
            ctx.client.write(inode, 0, buf, false, [&ctx, done, path, bytes, buf](Result<std::uint64_t> w) {
              ctx.env.free(buf);
              if (!w.ok()) return done(w.status());
              if (*w != bytes) return done(error(StatusCode::internal, "short write of " + path));
              ctx.client.close(path, bytes, done);
            });
          });
        });
  };
}

// stat `path`, read all of it, check its size is `bytes` and its content pattern `seed`.
inline Scripted::Script read_and_verify(std::string path, std::uint64_t bytes, std::uint64_t seed) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.stat(path, [&ctx, done, path, bytes, seed](Result<proto::InodeDesc> st) {
      if (!st.ok()) return done(st.status());
      if (st->size_bytes != bytes) return done(error(StatusCode::internal, path + " has the wrong size"));
      Result<MemHandle> buf = ctx.env.alloc(MemKind::host, 0, bytes);
      if (!buf.ok()) return done(buf.status());
      ctx.client.read(*st, 0, *buf, [&ctx, done, path, bytes, seed, buf = *buf](Result<std::uint64_t> r) {
        if (!r.ok()) {
          ctx.env.free(buf);
          return done(r.status());
        }
        if (*r != bytes) {
          ctx.env.free(buf);
          return done(error(StatusCode::internal, "short read of " + path));
        }
        ctx.ops.expect(ctx.env.verify(buf, PatternSpec{seed, 0}), [&ctx, done, path, buf](Completion& c) {
          ctx.env.free(buf);
          if (!c.status.ok()) return done(error(c.status.code(), path + ": " + c.status.message()));
          done(ok_status());
        });
      });
    });
  };
}

// fallocate of [offset, offset + length) of `path` (stat, then Client::allocate).
inline Scripted::Script allocate_range(std::string path, std::uint64_t offset, std::uint64_t length,
                                       proto::AllocMode mode) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.stat(path, [&ctx, done, offset, length, mode](Result<proto::InodeDesc> st) {
      if (!st.ok()) return done(st.status());
      ctx.client.allocate(*st, offset, length, mode, done);
    });
  };
}

// stat `path`, read all of it, check its size is `bytes`, the ranges in
// `zeros` ([begin, end) pairs, in order) read as zeros and every other byte
// is pattern `seed` at its offset. Byte checks bite where the world moves bytes.
inline Scripted::Script read_with_zeros(std::string path, std::uint64_t bytes, std::uint64_t seed,
                                        std::vector<std::pair<std::uint64_t, std::uint64_t>> zeros) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.stat(path, [&ctx, done, path, bytes, seed, zeros](Result<proto::InodeDesc> st) {
      if (!st.ok()) return done(st.status());
      if (st->size_bytes != bytes) return done(error(StatusCode::internal, path + " has the wrong size"));
      Result<MemHandle> buf = ctx.env.alloc(MemKind::host, 0, bytes);
      if (!buf.ok()) return done(buf.status());
      ctx.client.read(*st, 0, *buf, [&ctx, done, path, bytes, seed, zeros, buf = *buf](Result<std::uint64_t> r) {
        if (!r.ok() || *r != bytes) {
          ctx.env.free(buf);
          return done(r.ok() ? error(StatusCode::internal, "short read of " + path) : r.status());
        }
        // Each range is checked in turn: pattern between the holes, the CRC32C of zeros in them.
        struct Check {
          std::uint64_t begin, end;
          bool zero;
        };
        auto checks = std::make_shared<std::vector<Check>>();
        std::uint64_t at = 0;
        for (const auto& [b, e] : zeros) {
          if (b > at) checks->push_back({at, b, false});
          checks->push_back({b, e, true});
          at = e;
        }
        if (at < bytes) checks->push_back({at, bytes, false});
        auto next = std::make_shared<std::function<void(std::size_t)>>();
        *next = [&ctx, done, path, seed, buf, checks, next](std::size_t i) {
          if (i == checks->size()) {
            ctx.env.free(buf);
            const auto finish = done;  // *next is this lambda: what runs after it is cleared is a copy
            *next = nullptr;           // the cycle through the shared pointer ends
            return finish(ok_status());
          }
          const Check c = (*checks)[i];
          const MemHandle range = buf.slice(c.begin, c.end - c.begin);
          auto failed = [&ctx, done, buf, next](Status s) {
            ctx.env.free(buf);
            *next = nullptr;
            done(s);
          };
          if (!c.zero) {
            return ctx.ops.expect(
                ctx.env.verify(range, PatternSpec{seed, c.begin}), [path, c, i, next, failed](Completion& v) {
                  if (!v.status.ok()) {
                    return failed(error(v.status.code(), path + " [" + std::to_string(c.begin) + ", " +
                                                             std::to_string(c.end) + "): " + v.status.message()));
                  }
                  (*next)(i + 1);
                });
          }
          ctx.ops.expect(ctx.env.checksum(range), [path, c, i, next, failed](Completion& sum) {
            const std::vector<std::byte> nothing(c.end - c.begin);
            if (sum.status.ok() && sum.crc_valid && sum.crc32c != proto::crc32c(nothing)) {
              return failed(error(StatusCode::corrupt, path + " [" + std::to_string(c.begin) + ", " +
                                                           std::to_string(c.end) + ") does not read as zeros"));
            }
            (*next)(i + 1);
          });
        };
        (*next)(0);
      });
    });
  };
}

// Runs one script on a new host (rank 0 of 1) and returns its result.
template <class World>
Status run_script(BasicTestCluster<World>& cluster, Scripted::Script script, std::uint64_t max_events = 20'000'000) {
  ClientHost& host = cluster.add_host(std::make_unique<Scripted>(std::move(script)), 0, 1);
  if (!cluster.run(max_events)) return error(StatusCode::timed_out, "the script did not finish: " + cluster.failures());
  return host.result();
}

// The storage service holding `target` in a cluster built from buddy_mirrored_spec.
template <class World>
Endpoint server_of_target(BasicTestCluster<World>& cluster, TargetId target) {
  return cluster.world().endpoint_of(*cluster.storages().at(target - 1));
}

// The primary of group 1 dies while a file is being written: mgmt switches
// the group to its secondary, the client retries the chunks on the new
// primary, and every acknowledged write (a file written before, and the file
// written across the failure) reads back with the right bytes.
template <class World>
void mirror_failover_keeps_every_acknowledged_write() {
  BasicTestCluster<World> cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  constexpr std::uint64_t k_bytes = k_mib;
  ASSERT_TRUE(run_script(cluster, write_file("/before", k_bytes, 11)).ok());
  // Kill the primary of group 1 as the first chunk of the next file goes to it.
  const Endpoint victim = server_of_target(cluster, 1);
  auto killed = std::make_shared<std::atomic<bool>>(false);
  World* world = &cluster.world();
  cluster.world().add_fault(
      MessageRule{[world, victim, killed](const Endpoint&, const Endpoint& to, const proto::Message& m) {
                    if (to == victim && std::holds_alternative<proto::WriteChunk>(m) && !killed->exchange(true)) {
                      world->kill(victim);
                    }
                    return false;
                  },
                  FaultAction::delay, 0, ~std::uint64_t{0}});
  const Status across = run_script(cluster, write_file("/across", k_bytes, 12));
  ASSERT_TRUE(across.ok()) << across.to_string();
  EXPECT_TRUE(killed->load());
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 1.0);
  EXPECT_GE(cluster.world().counter("client.mirror_failovers"), 1.0);
  const Status before = run_script(cluster, read_and_verify("/before", k_bytes, 11));
  EXPECT_TRUE(before.ok()) << before.to_string();
  const Status after = run_script(cluster, read_and_verify("/across", k_bytes, 12));
  EXPECT_TRUE(after.ok()) << after.to_string();
  EXPECT_EQ(cluster.world().counter("client.crc_mismatches"), 0.0);
}

// The secondary of group 1 is cut off while a file is written: its primary
// goes on alone (after mgmt recorded the secondary as needs_resync). When
// the secondary is back, the primary resyncs it and it becomes good; then
// the primary dies, and the data is still there, on the former secondary.
template <class World>
void mirror_resync_then_failover_keeps_the_data() {
  BasicTestCluster<World> cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  constexpr std::uint64_t k_bytes = k_mib;
  Partition cut;
  cut.install(cluster.world(), server_of_target(cluster, 2));
  cut.on->store(true);
  const Status written = run_script(cluster, write_file("/away", k_bytes, 21));
  ASSERT_TRUE(written.ok()) << written.to_string();
  EXPECT_GE(cluster.world().counter("storage.mirror_writes_alone"), 1.0);
  EXPECT_EQ(cluster.world().counter("storage.resyncs_completed"), 0.0);
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_GE(cluster.world().counter("storage.resyncs_completed"), 1.0);
  // Half of the file (group 1's chunks) was copied by the resync.
  EXPECT_GE(cluster.world().counter("storage.resync_bytes"), static_cast<double>(k_bytes / 2));
  cluster.world().kill(server_of_target(cluster, 1));
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 1.0);
  const Status read = run_script(cluster, read_and_verify("/away", k_bytes, 21));
  EXPECT_TRUE(read.ok()) << read.to_string();
}

// Holes punched in a mirrored file reach the secondary: one forwarded while
// both targets are up (MirrorAllocate), one made while group 1's secondary
// is cut off (the primary goes on alone and records the range, which the
// resync copies). Then the primary dies, and the former secondary serves
// the file with both holes and every other byte. Fails without the forward
// or the resync record: the secondary still holds the punched bytes.
template <class World>
void mirror_punch_reaches_the_secondary() {
  BasicTestCluster<World> cluster(buddy_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  constexpr std::uint64_t k_bytes = k_mib;
  ASSERT_TRUE(run_script(cluster, write_file("/p", k_bytes, 31)).ok());
  // 64 KiB chunks over groups 1 and 2 in turn: each range covers both groups' chunks.
  const Status forwarded = run_script(cluster, allocate_range("/p", 128 * k_kib, 256 * k_kib, proto::AllocMode::punch));
  ASSERT_TRUE(forwarded.ok()) << forwarded.to_string();
  Partition cut;
  cut.install(cluster.world(), server_of_target(cluster, 2));
  cut.on->store(true);
  const Status alone = run_script(cluster, allocate_range("/p", 512 * k_kib, 160 * k_kib, proto::AllocMode::zero));
  ASSERT_TRUE(alone.ok()) << alone.to_string();
  cut.on->store(false);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_GE(cluster.world().counter("storage.resyncs_completed"), 1.0);
  cluster.world().kill(server_of_target(cluster, 1));
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("mgmt.switchovers"), 1.0);
  const Status read =
      run_script(cluster, read_with_zeros("/p", k_bytes, 31, {{128 * k_kib, 384 * k_kib}, {512 * k_kib, 672 * k_kib}}));
  EXPECT_TRUE(read.ok()) << read.to_string();
}

}  // namespace sluice::testing
