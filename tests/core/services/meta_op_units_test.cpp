// The service time a metadata server charges per request (MetaOpUnits): the
// file system it models picks the units, every request charges its units of
// the Env's cost, and a close that changes nothing is a request that writes
// nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "det/test_world.hpp"

namespace sluice::testing {
namespace {

// Sends its messages to the metadata server on start; keeps each reply's
// arrival time and status.
class MetaProbe final : public Service {
 public:
  MetaProbe(Env& env, Endpoint meta, std::vector<proto::Message> requests)
      : env_(env), meta_(meta), requests_(std::move(requests)) {}
  void start() override { send_next(); }
  void on_event(Event& event) override {
    auto* d = std::get_if<Delivery>(&event);
    if (d == nullptr) return;
    reply_ns.push_back(env_.now());
    if (auto* r = std::get_if<proto::InodeReply>(&d->message)) {
      statuses.push_back(r->status);
      inodes.push_back(r->inode);
    }
    if (sequential) send_next();
  }
  std::string name() const override { return "meta-probe"; }

  // One request at a time (the next after each reply) instead of all at once.
  bool sequential = false;
  std::vector<TimeNs> reply_ns;
  std::vector<StatusCode> statuses;
  std::vector<proto::InodeDesc> inodes;

 private:
  void send_next() {
    while (next_ < requests_.size()) {
      proto::Message m = requests_[next_];
      *request_id_of(m) = ++next_;
      ASSERT_TRUE(env_.send(meta_, m).ok());
      if (sequential) return;
    }
  }
  Env& env_;
  Endpoint meta_;
  std::vector<proto::Message> requests_;
  std::size_t next_ = 0;
};

proto::Message stat_of(const std::string& path) {
  proto::Stat s;
  s.path = path;
  return s;
}

TEST(MetaOpUnits, TheStripeFlavorPicksTheServerModelled) {
  EXPECT_EQ(meta_op_units_for(StripeFlavor::lustre), lustre_mdt_op_units());
  EXPECT_EQ(meta_op_units_for(StripeFlavor::beegfs), beegfs_meta_op_units());
  const MetaOpUnits mdt = lustre_mdt_op_units();
  EXPECT_EQ(mdt.stat, 1u);
  EXPECT_EQ(mdt.create, 1u);
  // A BeeGFS server does more per request than an MDT, and a create more than a stat.
  const MetaOpUnits beegfs = beegfs_meta_op_units();
  EXPECT_GT(beegfs.stat, mdt.stat);
  EXPECT_GT(beegfs.create, beegfs.stat);
  EXPECT_TRUE(validate(beegfs).ok());
}

TEST(MetaOpUnits, UnitsAboveTheLimitAreRefusedByName) {
  MetaOpUnits u;
  u.rename = k_meta_op_units_max + 1;
  const Status s = validate(u);
  EXPECT_EQ(s.code(), StatusCode::invalid_argument);
  EXPECT_NE(s.message().find("rename"), std::string::npos) << s.message();
  u.rename = k_meta_op_units_max;
  EXPECT_TRUE(validate(u).ok());
}

// Time between the first and the last of n stats sent at once: the server
// runs them one at a time, so n - 1 service times.
TimeNs stat_train_ns(const MetaServiceConfig& config, std::size_t n) {
  TestWorld world;
  MetaService& meta = world.add_service<MetaService>(1, config);
  MetaProbe& probe =
      world.add_service<MetaProbe>(2, world.endpoint_of(meta), std::vector<proto::Message>(n, stat_of("/")));
  world.start();
  world.run_until([&] { return probe.reply_ns.size() == n; });
  EXPECT_EQ(probe.reply_ns.size(), n);
  for (StatusCode c : probe.statuses) EXPECT_EQ(c, StatusCode::ok);
  return probe.reply_ns.back() - probe.reply_ns.front();
}

TEST(MetaServiceCost, EveryRequestChargesItsUnitsOfTheEnvCost) {
  const TimeNs stat_ns = TestWorldConfig{}.cost_ns_per_unit[static_cast<std::size_t>(CostKind::meta_stat)];
  constexpr std::size_t k_n = 50;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  MetaOpUnits units;
  units.stat = 1;
  config.op_units = units;
  EXPECT_EQ(stat_train_ns(config, k_n), static_cast<TimeNs>(k_n - 1) * stat_ns);
  units.stat = 4;
  config.op_units = units;
  EXPECT_EQ(stat_train_ns(config, k_n), static_cast<TimeNs>(k_n - 1) * 4 * stat_ns);
  // Unset: the units of the stripe flavor's file system.
  config.op_units.reset();
  config.stripe_flavor = StripeFlavor::beegfs;
  EXPECT_EQ(stat_train_ns(config, k_n), static_cast<TimeNs>(k_n - 1) * beegfs_meta_op_units().stat * stat_ns);
  config.stripe_flavor = StripeFlavor::lustre;
  EXPECT_EQ(stat_train_ns(config, k_n), static_cast<TimeNs>(k_n - 1) * stat_ns);
}

TEST(MetaServiceCost, InvalidUnitsFallBackToTheFlavorsDefaults) {
  TestWorld world;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  MetaOpUnits units;
  units.create = k_meta_op_units_max + 1;
  config.op_units = units;
  MetaService& meta = world.add_service<MetaService>(1, config);
  world.start();
  world.run_until([&] { return !world.logs().empty(); }, 10'000);
  EXPECT_EQ(meta.op_units(), beegfs_meta_op_units());
  bool logged = false;
  for (const std::string& line : world.logs()) logged = logged || line.find("create") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST(MetaServiceCost, AnEmptySetAttrIsACloseThatWritesNothing) {
  TestWorld world;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  MetaService& meta = world.add_service<MetaService>(1, config);
  proto::Mkdir mkdir;
  mkdir.path = "/d";
  mkdir.mode = 0755;
  proto::SetAttr close;
  close.path = "/d";
  close.mask = 0;
  close.size_bytes = 12345;  // ignored: not in the mask
  MetaProbe& probe = world.add_service<MetaProbe>(2, world.endpoint_of(meta),
                                                  std::vector<proto::Message>{mkdir, close, stat_of("/d")});
  probe.sequential = true;
  world.start();
  world.run_until([&] { return probe.reply_ns.size() == 3; });
  ASSERT_EQ(probe.statuses.size(), 3u);
  for (StatusCode c : probe.statuses) EXPECT_EQ(c, StatusCode::ok);
  EXPECT_EQ(probe.inodes[1], probe.inodes[0]) << "the close returns the inode unchanged";
  EXPECT_EQ(probe.inodes[2], probe.inodes[0]) << "and nothing was written";
  EXPECT_EQ(world.counter("meta.close_ops"), 1.0);
  // It cost a setattr's units: the close's reply came that much after the mkdir's
  // (plus one message round trip).
  const TimeNs setattr_ns = TestWorldConfig{}.cost_ns_per_unit[static_cast<std::size_t>(CostKind::meta_setattr)];
  const TimeNs round_trip_ns = 2 * TestWorldConfig{}.message_latency_ns;
  EXPECT_EQ(probe.reply_ns[1] - probe.reply_ns[0], round_trip_ns + beegfs_meta_op_units().setattr * setattr_ns);
}

}  // namespace
}  // namespace sluice::testing
