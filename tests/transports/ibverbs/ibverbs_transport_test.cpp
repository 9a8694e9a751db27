// The ibverbs transport through the registry: the no-device path everywhere
// (CI has rdma-core but no RDMA device), and, where a device exists (label
// rdma), what only RDMA does beyond the conformance suite.
#include "transports/ibverbs/ibverbs_transport.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/transports/transport_test_util.hpp"
#include "transports/ibverbs/ibverbs_device.hpp"

namespace sluice::transport::ibverbs {
namespace {

using testing::EventPump;

TransportListing listing() {
  for (auto& l : list_transports()) {
    if (l.name == "ibverbs") return l;
  }
  return {};
}

TEST(IbverbsRegistry, IsListedWithCapabilitiesOrTheReasonItIsUnavailable) {
  const TransportListing l = listing();
  ASSERT_EQ(l.name, "ibverbs") << "the ibverbs entry is registered (linked whole-archive)";
  EXPECT_TRUE(l.capabilities.rdma_write);
  EXPECT_TRUE(l.capabilities.rdma_read);
  EXPECT_TRUE(l.capabilities.reaches(RegionKind::host));
  const Status probe = ibverbs_probe();
  EXPECT_EQ(l.available, probe.ok());
  if (l.available) {
    EXPECT_TRUE(l.why_unavailable.empty());
  } else {
    EXPECT_EQ(l.why_unavailable, probe.message());
    const bool known_reason = l.why_unavailable.starts_with("no RDMA device") ||
                              l.why_unavailable.starts_with("built without rdma-core") ||
                              l.why_unavailable.find("none with an active port") != std::string::npos;
    EXPECT_TRUE(known_reason) << l.why_unavailable;
  }
}

TEST(IbverbsRegistry, WithoutADeviceCreationIsRefusedWithTheReason) {
  const Status probe = ibverbs_probe();
  if (probe.ok()) GTEST_SKIP() << "an RDMA device exists here";
  TransportConfig config;
  config.rail_addresses = {"10.0.0.1:0"};
  Result<std::unique_ptr<Transport>> t = create_transport("ibverbs", config);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::unavailable);
  EXPECT_NE(t.status().message().find(probe.message()), std::string::npos) << t.status().message();
  Result<std::unique_ptr<IbverbsTransport>> direct = make_ibverbs_transport(config);
  EXPECT_EQ(direct.status().code(), StatusCode::unavailable);
  EXPECT_NE(direct.status().message().find(probe.message()), std::string::npos);
  EXPECT_TRUE(ibverbs_loopback_rails(2).empty());
}

TEST(IbverbsRegistry, DiscoveryAgreesWithTheProbe) {
  Result<std::vector<DeviceInfo>> devices = discover_devices();
  if (!devices.ok()) {
    EXPECT_EQ(devices.status().message(), build_unavailable_reason());
    return;
  }
  EXPECT_TRUE(build_unavailable_reason().empty());
  EXPECT_EQ(devices_usable(*devices).ok(), ibverbs_probe().ok());
  EXPECT_EQ(ibverbs_capabilities().to_string(), declare_capabilities(*devices, detect_platform()).to_string());
}

// The conformance suite (tests/transports/transport_conformance_test.cpp)
// instantiates itself over every available transport; this states, in the
// test log, whether ibverbs was among them and why not.
TEST(IbverbsConformance, RunsWhereADeviceExistsElseSkipsWithTheReason) {
  const Status probe = ibverbs_probe();
  if (!probe.ok()) GTEST_SKIP() << "ibverbs conformance not run: " << probe.message();
  EXPECT_FALSE(ibverbs_loopback_rails(2).empty()) << "a device without an IPv4 RoCE/IPoIB address";
}

// ---- on a device (label rdma; skipped elsewhere) -----------------------------------

class IbverbsDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status probe = ibverbs_probe();
    if (!probe.ok()) GTEST_SKIP() << probe.message();
    const std::vector<std::string> rails = ibverbs_loopback_rails(1);
    if (rails.empty()) GTEST_SKIP() << "no device port with an IPv4 address";
    a_ = make(1, rails);
    b_ = make(2, rails);
    ASSERT_TRUE(a_ && b_);
    pump_a_ = std::make_unique<EventPump>(*a_);
    pump_b_ = std::make_unique<EventPump>(*b_);
    Result<PeerId> peer = a_->connect(b_->listen_address());
    ASSERT_TRUE(peer.ok()) << peer.status().to_string();
    peer_ = *peer;
    ASSERT_TRUE(pump_a_->wait_kind<PeerUp>());
    auto up = pump_b_->wait_kind<PeerUp>();
    ASSERT_TRUE(up);
    b_peer_ = up->peer;
  }

  static std::unique_ptr<IbverbsTransport> make(std::uint64_t id, const std::vector<std::string>& rails) {
    TransportConfig config;
    config.local_id = id;
    config.rail_addresses = rails;
    config.connections_per_rail = 1;
    Result<std::unique_ptr<IbverbsTransport>> t = make_ibverbs_transport(config);
    EXPECT_TRUE(t.ok()) << t.status().to_string();
    return t.ok() ? std::move(t).value() : nullptr;
  }

  std::vector<std::byte> src_ = std::vector<std::byte>(1 << 20), dst_ = std::vector<std::byte>(1 << 20);
  std::unique_ptr<IbverbsTransport> a_, b_;
  std::unique_ptr<EventPump> pump_a_, pump_b_;
  PeerId peer_ = 0, b_peer_ = 0;
};

TEST_F(IbverbsDevice, ImportedRegionIsWrittenWithoutAQuery) {
  fill_pattern(src_, 3, 0);
  ASSERT_TRUE(a_->register_region(1, src_, RegionKind::host).ok());
  ASSERT_TRUE(b_->register_region(2, dst_, RegionKind::host).ok());
  Result<RemoteRegionDesc> desc = b_->export_region(2, 0, b_peer_);
  ASSERT_TRUE(desc.ok()) << desc.status().to_string();
  EXPECT_EQ(desc->address, reinterpret_cast<std::uint64_t>(dst_.data()));
  EXPECT_EQ(desc->length, dst_.size());
  ASSERT_TRUE(a_->import_region(peer_, 0, 2, *desc).ok());
  BulkRequest r;
  r.peer = peer_;
  r.local_key = 1;
  r.remote_key = 2;
  r.bytes = 4096;
  r.remote_offset = 8192;
  r.cookie = 5;
  ASSERT_TRUE(a_->put(r).ok());
  auto done = pump_a_->wait_op(5);
  ASSERT_TRUE(done);
  ASSERT_TRUE(done->status.ok()) << done->status.to_string();
  EXPECT_TRUE(std::equal(src_.begin(), src_.begin() + 4096, dst_.begin() + 8192));
  EXPECT_EQ(b_->export_region(99, 0, b_peer_).status().code(), StatusCode::not_found);
  EXPECT_EQ(b_->export_region(2, 7, b_peer_).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(b_->export_region(2, 0, 999).status().code(), StatusCode::unavailable);
  // The exported region is revoked at `a` before it goes.
  EXPECT_TRUE(b_->deregister_region(2).ok());
  r.cookie = 6;
  ASSERT_TRUE(a_->put(r).ok());
  done = pump_a_->wait_op(6);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::not_found) << done->status.to_string();
}

TEST_F(IbverbsDevice, DeregisteringARegionAPeerUsesWaitsForItsAck) {
  ASSERT_TRUE(a_->register_region(1, src_, RegionKind::host).ok());
  ASSERT_TRUE(b_->register_region(2, dst_, RegionKind::host).ok());
  BulkRequest r;
  r.peer = peer_;
  r.local_key = 1;
  r.remote_key = 2;
  r.bytes = 100;
  r.cookie = 1;
  ASSERT_TRUE(a_->put(r).ok());  // a learns b's rkey through a query
  ASSERT_TRUE(pump_a_->wait_op(1)->status.ok());
  // b revokes; a's progress thread acks; only then does b deregister.
  EXPECT_TRUE(b_->deregister_region(2).ok());
  r.cookie = 2;
  ASSERT_TRUE(a_->put(r).ok());
  auto done = pump_a_->wait_op(2);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::not_found) << done->status.to_string();
}

TEST_F(IbverbsDevice, ACarriedKeyMovesBytesWithoutAQueryAndIsRevokedAtTheGrantee) {
  fill_pattern(src_, 4, 0);
  ASSERT_TRUE(a_->register_region(1, src_, RegionKind::host).ok());
  ASSERT_TRUE(b_->register_region(2, dst_, RegionKind::host).ok());
  // b grants its key to node 1 (a's local_id), as a client puts it in a ReadChunk.
  Result<RemoteRegionAccess> key = b_->remote_access(2, 0, 1);
  ASSERT_TRUE(key.ok()) << key.status().to_string();
  EXPECT_EQ(key->address, reinterpret_cast<std::uint64_t>(dst_.data()));
  EXPECT_EQ(key->length, dst_.size());
  EXPECT_EQ(b_->remote_access(99, 0, 1).status().code(), StatusCode::not_found);
  EXPECT_EQ(b_->remote_access(2, 7, 1).status().code(), StatusCode::invalid_argument);
  BulkRequest r;
  r.peer = peer_;
  r.local_key = 1;
  r.remote_key = 2;
  r.bytes = 4096;
  r.remote_offset = 4096;
  r.cookie = 7;
  r.remote_access = *key;
  ASSERT_TRUE(a_->put(r).ok());
  auto done = pump_a_->wait_op(7);
  ASSERT_TRUE(done);
  ASSERT_TRUE(done->status.ok()) << done->status.to_string();
  EXPECT_TRUE(std::equal(src_.begin(), src_.begin() + 4096, dst_.begin() + 4096));
  EXPECT_EQ(a_->key_stats().queries, 0u) << "the carried key needs no region_query";
  EXPECT_EQ(a_->key_stats().carried, 1u);
  // A range beyond what the key covers fails at once in OpDone, naming it.
  r.cookie = 8;
  r.remote_offset = dst_.size() - 100;
  ASSERT_TRUE(a_->put(r).ok());
  done = pump_a_->wait_op(8);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::invalid_argument) << done->status.to_string();
  // Freeing the region revokes the grant at a (which never asked), so a's
  // next put without a key has to ask, and is told the region is gone.
  EXPECT_TRUE(b_->deregister_region(2).ok());
  r.cookie = 9;
  r.remote_offset = 0;
  r.remote_access.reset();
  ASSERT_TRUE(a_->put(r).ok());
  done = pump_a_->wait_op(9);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::not_found) << done->status.to_string();
  EXPECT_EQ(a_->key_stats().queries, 1u);
}

TEST_F(IbverbsDevice, DmabufNeedsItsFd) {
  std::vector<std::byte> mem(4096);
  if (!a_->capabilities().reaches(RegionKind::dmabuf)) {
    EXPECT_EQ(a_->register_region(9, mem, RegionKind::dmabuf).code(), StatusCode::unavailable);
    return;
  }
  EXPECT_EQ(a_->register_region(9, mem, RegionKind::dmabuf).code(), StatusCode::invalid_argument);
  EXPECT_EQ(a_->register_dmabuf_region(9, mem, -1, 0).code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace sluice::transport::ibverbs
