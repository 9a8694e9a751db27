// Opens across a restart of their metadata server (TestEnv: the restart is
// the world's, between events). The server keeps its opens in memory, so a
// restart loses them; the clients' renewals (proto::RenewOpens) hold them
// again within the recovery window, one lease, before the server removes the
// orphans its previous run kept and no client holds any more.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/core/services/step_script.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

constexpr std::uint64_t k_bytes = 1 * k_mib;

// An orphan a renewing client holds open keeps its data through a restart
// of its metadata server until that client's close; an orphan whose client
// sends no renewals (as a dead one) goes one lease after the start. Fails
// without the renewals: the restarted server removed both orphans at once,
// and the holder's read found no data.
TEST(OpenLeases, AnOrphanARenewingClientHoldsOutlivesARestartOfItsMetadataServer) {
  TestClusterSpec spec;
  spec.meta_shards = 1;
  spec.durable_meta = true;  // the namespace, its orphans with it, survives the restart
  spec.meta.open_lease_ns = 2 * k_ns_per_s;
  TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  Answers holder, silent, other;
  std::map<std::string, std::uint64_t> open_ids;
  bool opened = false;
  auto create = create_file;
  auto open = [&open_ids](Answers& x, std::string path) { return open_file(x, open_ids, std::move(path)); };
  std::vector<Step> holding{
      create(holder, "/kept"),
      write_pattern("/kept", holder, "/kept", k_bytes, 7),
      open(holder, "/kept"),
      [&opened](WorkloadContext&, std::function<void()> next) {
        opened = true;
        next();
      },
      [](WorkloadContext& ctx, std::function<void()> next) {  // idle through the restart and the window
        ctx.ops.expect(ctx.env.timer(10 * k_ns_per_s), [next](Completion&) { next(); });
      },
      [&holder](WorkloadContext& ctx, std::function<void()> next) {
        const auto fail = holder.status("read", next);
        MemHandle in = ctx.env.alloc(MemKind::host, 0, k_bytes).value();
        ctx.client.read(holder.inodes.at("open /kept"), 0, in, [&ctx, in, fail](Result<std::uint64_t> r) {
          if (!r.ok()) return fail(r.status());
          ctx.ops.expect(ctx.env.verify(in, PatternSpec{7, 0}), [fail](Completion& c) { fail(c.status); });
        });
      },
      [&holder, &open_ids](WorkloadContext& ctx, std::function<void()> next) {
        AttrChange close;
        close.close_open_id = open_ids.at("/kept");
        ctx.client.set_attr("/kept", close, holder.inode("close", next));
      }};
  std::vector<Step> quiet{create(silent, "/lost"), write_pattern("/lost", silent, "/lost", k_bytes, 8),
                          open(silent, "/lost")};
  std::vector<Step> unlinking{[&other](WorkloadContext& ctx, std::function<void()> next) {
                                ctx.client.unlink("/kept", other.status("unlink /kept", next));
                              },
                              [&other](WorkloadContext& ctx, std::function<void()> next) {
                                ctx.client.unlink("/lost", other.status("unlink /lost", next));
                              }};
  ClientConfig renews;
  renews.open_renew_ns = 500 * k_ns_per_ms;
  ClientConfig mute;
  mute.open_renew_ns = 0;
  ClientHost& h = cluster.add_host(std::make_unique<Scripted>(in_order(std::move(holding))), 0, 1, renews);
  ClientHost& s = cluster.add_host(std::make_unique<Scripted>(in_order(std::move(quiet))), 0, 1, mute);
  ASSERT_TRUE(cluster.world().run_until([&] { return opened && s.finished(); }));
  ASSERT_EQ(silent.code("open /lost"), StatusCode::ok) << silent.errors["open /lost"];
  ClientHost& u = cluster.add_host(std::make_unique<Scripted>(in_order(std::move(unlinking))), 0, 1);
  ASSERT_TRUE(cluster.world().run_until([&] { return u.finished(); }));
  ASSERT_EQ(other.code("unlink /kept"), StatusCode::ok) << other.errors["unlink /kept"];
  ASSERT_EQ(other.code("unlink /lost"), StatusCode::ok) << other.errors["unlink /lost"];
  EXPECT_EQ(cluster.world().counter("meta.orphans_kept_for_other_opens"), 2.0);
  ASSERT_FALSE(h.finished()) << "the holder waits through the restart";
  ASSERT_TRUE(cluster.world().restart(cluster.world().endpoint_of(*cluster.metas().at(0))).ok());
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  EXPECT_EQ(holder.code("read"), StatusCode::ok) << "held again, its bytes stayed: " << holder.errors["read"];
  ASSERT_EQ(holder.code("close"), StatusCode::ok) << holder.errors["close"];
  EXPECT_EQ(holder.inodes["close"].file_id, holder.inodes["/kept"].file_id) << "the close answers with the orphan";
  EXPECT_GE(cluster.world().counter("meta.opens_held_again"), 1.0);
  EXPECT_EQ(cluster.world().counter("meta.orphans_removed_at_start"), 1.0) << "/lost alone";
  EXPECT_EQ(cluster.world().counter("meta.orphans_released"), 1.0) << "/kept at its close";
}

}  // namespace
}  // namespace sluice::testing
