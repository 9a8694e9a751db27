// Metadata buddy mirroring scenarios (issue 9), written against TestWorld's
// surface so they can run on every world of the shared services suite;
// meta_mirror_test.cpp runs them on TestEnv with store-level checks.
//
// meta_mirrored_spec() turns metadata mirroring on for a TestCluster: two
// servers per shard, heartbeats and switchover on.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tests/core/services/buddy_mirror_scenarios.hpp"
#include "tests/core/services/scripted_workload.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {

inline TestClusterSpec meta_mirrored_spec(std::uint32_t shards = 2) {
  TestClusterSpec spec;
  spec.meta_shards = shards;
  spec.meta_mirror = true;
  spec.mgmt.meta_mirror = true;
  with_mirror_heartbeats(spec);
  spec.meta.mirror.enabled = true;
  spec.meta.mirror.maps_refresh_interval_ns = k_mirror_maps_refresh_ns;
  return spec;
}

// The metadata servers of `shard` (primary first, per their own view), after the cluster settled.
template <class World>
std::vector<MetaService*> servers_of_shard(BasicTestCluster<World>& cluster, ShardId shard) {
  std::vector<MetaService*> out;
  for (MetaService* m : cluster.metas()) {
    if (m->name() == "meta:" + std::to_string(shard)) out.push_back(m);
  }
  std::stable_sort(out.begin(), out.end(), [](const MetaService* a, const MetaService* b) {
    return a->mirror_role() == MetaService::MirrorRole::primary && b->mirror_role() != MetaService::MirrorRole::primary;
  });
  return out;
}

// Runs step(i, next) for i = 0, 1, ... n - 1, one after the other (each step
// calls next with its outcome), then done(ok); the first error ends it.
// Copies, not a self-referencing closure, so nothing outlives the run.
inline void for_each_index(std::uint32_t n, std::function<void(std::uint32_t, std::function<void(Status)>)> step,
                           std::function<void(Status)> done, std::uint32_t i = 0) {
  if (i == n) return done(ok_status());
  auto next = [n, step, done, i](Status s) {
    if (!s.ok()) return done(s);
    for_each_index(n, step, done, i + 1);
  };
  step(i, std::move(next));
}

// mkdir /d, then create `files` empty files /d/f<i> and close each with size i.
inline Scripted::Script populate(std::string dir, std::uint32_t files) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.mkdir(dir, 0755, [&ctx, done, dir, files](Result<proto::InodeDesc> d) {
      if (!d.ok() && d.status().code() != StatusCode::already_exists) return done(d.status());
      for_each_index(
          files,
          [&ctx, dir](std::uint32_t i, std::function<void(Status)> next) {
            const std::string path = dir + "/f" + std::to_string(i);
            ctx.client.create(path, CreateOptions{}, [&ctx, path, i, next](Result<proto::InodeDesc> f) {
              if (!f.ok()) return next(error(f.status().code(), path + ": " + f.status().message()));
              ctx.client.close(path, i, [path, next](Status s) {
                next(s.ok() ? s : error(s.code(), "close " + path + ": " + s.message()));
              });
            });
          },
          done);
    });
  };
}

// Every file /d/f<i> (i < files) is there with size i, and a listing of /d names exactly them.
inline Scripted::Script check_populated(std::string dir, std::uint32_t files) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.readdir(dir, false, [&ctx, done, dir, files](Result<std::vector<proto::DirEntryDesc>> list) {
      if (!list.ok()) return done(error(list.status().code(), "readdir " + dir + ": " + list.status().message()));
      std::set<std::string> names;
      for (const auto& e : *list) names.insert(e.name);
      for (std::uint32_t i = 0; i < files; ++i) {
        if (names.erase("f" + std::to_string(i)) == 0) {
          return done(error(StatusCode::not_found, dir + "/f" + std::to_string(i) + " is missing from the listing"));
        }
      }
      if (!names.empty()) return done(error(StatusCode::internal, dir + " lists " + *names.begin() + " too"));
      for_each_index(
          files,
          [&ctx, dir](std::uint32_t i, std::function<void(Status)> next) {
            const std::string path = dir + "/f" + std::to_string(i);
            ctx.client.stat(path, [path, i, next](Result<proto::InodeDesc> st) {
              if (!st.ok()) return next(error(st.status().code(), "stat " + path + ": " + st.status().message()));
              next(st->size_bytes == i ? ok_status() : error(StatusCode::internal, path + " has the wrong size"));
            });
          },
          done);
    });
  };
}

// mkdir dir, a file dir/f with a hard link dir/h and a symbolic link dir/l -> "f".
inline Scripted::Script make_links(std::string dir) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    auto& c = ctx.client;
    c.mkdir(dir, 0755, [&c, done, dir](Result<proto::InodeDesc> d) {
      if (!d.ok()) return done(d.status());
      c.create(dir + "/f", CreateOptions{}, [&c, done, dir](Result<proto::InodeDesc> f) {
        if (!f.ok()) return done(f.status());
        c.link(dir + "/f", dir + "/h", [&c, done, dir](Result<proto::InodeDesc> h) {
          if (!h.ok()) return done(h.status());
          c.symlink("f", dir + "/l", CreateOptions{},
                    [done](Result<proto::InodeDesc> l) { done(l.ok() ? ok_status() : l.status()); });
        });
      });
    });
  };
}

// What make_links made is there (the link's target, two names of one inode);
// an unlink of one name leaves the other with one link.
inline Scripted::Script check_links(std::string dir) {
  return [=](WorkloadContext& ctx, std::function<void(Status)> done) {
    auto& c = ctx.client;
    c.readlink(dir + "/l", [&c, done, dir](Result<std::string> l) {
      if (!l.ok() || *l != "f")
        return done(error(StatusCode::internal, "readlink " + dir + "/l: " + l.status().to_string()));
      c.stat(dir + "/h", [&c, done, dir](Result<proto::InodeDesc> h) {
        if (!h.ok() || h->nlink != 2) return done(error(StatusCode::internal, dir + "/h: not 2 links after failover"));
        c.unlink(dir + "/f", [&c, done, dir](Status u) {
          if (!u.ok()) return done(u);
          c.stat(dir + "/h", [done, dir](Result<proto::InodeDesc> left) {
            done(left.ok() && left->nlink == 1 ? ok_status() : error(StatusCode::internal, dir + "/h: not 1 link"));
          });
        });
      });
    });
  };
}

// Runs until every mirrored shard's primary forwards to a good secondary
// (read between events: HwEnv's services run on their own threads) and
// returns the primaries' endpoints, or an empty list if that did not happen.
template <class World>
std::vector<Endpoint> settle_mirrors(BasicTestCluster<World>& cluster) {
  const std::uint32_t shards = cluster.spec().meta_shards;
  std::vector<Endpoint> primaries;
  auto in_sync = [&cluster, &primaries, shards] {
    primaries.clear();
    for (MetaService* m : cluster.metas()) {
      if (m->mirror_role() == MetaService::MirrorRole::primary &&
          m->mirror_mode() == MetaService::MirrorMode::forwarding) {
        primaries.push_back(cluster.world().endpoint_of(*m));
      }
    }
    return primaries.size() == shards;
  };
  // Registration, a maps refresh, a resync and the good report: a few refresh periods.
  if (!cluster.world().run_until(in_sync)) primaries.clear();
  return primaries;
}

// Primaries die after files were created: mgmt switches every shard to its
// secondary, and the whole namespace (listings, sizes, links) is there; new files
// can be created in the same directory afterwards.
template <class World>
void meta_mirror_failover_keeps_the_namespace() {
  BasicTestCluster<World> cluster(meta_mirrored_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  const std::vector<Endpoint> primaries = settle_mirrors(cluster);
  ASSERT_EQ(primaries.size(), cluster.spec().meta_shards);
  const Status made = run_script(cluster, populate("/d", 40));
  ASSERT_TRUE(made.ok()) << made.to_string();
  const Status linked = run_script(cluster, make_links("/links"));
  ASSERT_TRUE(linked.ok()) << linked.to_string();
  for (Endpoint p : primaries) cluster.world().kill(p);
  cluster.world().run_for(k_mirror_settle_ns);
  EXPECT_EQ(cluster.world().counter("mgmt.meta_switchovers"), static_cast<double>(primaries.size()));
  const Status checked = run_script(cluster, check_populated("/d", 40));
  EXPECT_TRUE(checked.ok()) << checked.to_string();
  const Status links = run_script(cluster, check_links("/links"));
  EXPECT_TRUE(links.ok()) << links.to_string();
  const Status more = run_script(cluster, populate("/e", 10));
  EXPECT_TRUE(more.ok()) << more.to_string();
}

}  // namespace sluice::testing
