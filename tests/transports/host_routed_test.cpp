// tcp+shm (transports/host_routed): a peer of this host, namespace and user
// is reached through shm, any other through tcp; both carry messages and
// bulk bytes under one transport. (The conformance suite runs over it too,
// as two transports of one host: through its shm side.)
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/transports/transport_test_util.hpp"
#include "transports/host_routed/host_routed_transport.hpp"

namespace sluice::transport {
namespace {

using testing::EventPump;
using testing::make_frame;

constexpr std::uint64_t k_region_bytes = 1 << 20;
constexpr std::uint64_t k_src_key = 5;
constexpr std::uint64_t k_dst_key = 6;
constexpr PeerId k_shm_ids_from = PeerId{1} << 62;

struct Side {
  std::unique_ptr<Transport> transport;
  std::unique_ptr<EventPump> pump;
  std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::mutex> log_mu = std::make_shared<std::mutex>();
  std::vector<std::byte> region = std::vector<std::byte>(k_region_bytes);

  bool logged(const std::string& text) const {
    std::lock_guard lock(*log_mu);
    return std::any_of(log->begin(), log->end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
};

Side make_side(std::uint64_t id, const std::string& secret = "", std::vector<std::string> rails = {"127.0.0.1:0"}) {
  Side s;
  TransportConfig c;
  c.local_id = id;
  c.rail_addresses = std::move(rails);
  c.shared_secret = secret;
  c.log = [log = s.log, mu = s.log_mu](std::string_view line) {
    std::lock_guard lock(*mu);
    log->emplace_back(line);
  };
  Result<std::unique_ptr<Transport>> t = create_transport("tcp+shm", c);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  if (!t.ok()) return s;
  s.transport = std::move(t).value();
  s.pump = std::make_unique<EventPump>(*s.transport);
  return s;
}

// The peer's address as a process elsewhere would give it: another host KEY.
PeerAddress elsewhere(PeerAddress address) {
  for (std::string& rail : address.rails) rail = rail.substr(0, rail.find(";host=")) + ";host=another-host:1:0";
  return address;
}

// A message and a put from a to b's region over `peer`; the bytes arrive.
void exchange(Side& a, Side& b, PeerId peer) {
  fill_pattern(a.region, 3, 0);
  ASSERT_TRUE(a.transport->register_region(k_src_key, a.region, RegionKind::host).ok());
  ASSERT_TRUE(b.transport->register_region(k_dst_key, b.region, RegionKind::host).ok());
  ASSERT_TRUE(a.transport->send_message(peer, 7, make_frame(100, 1)).ok());
  auto got = b.pump->wait_kind<MessageReceived>();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->tag, 7u);
  EXPECT_EQ(got->remote_id, 1u);
  BulkRequest r;
  r.peer = peer;
  r.local_key = k_src_key;
  r.remote_key = k_dst_key;
  r.bytes = k_region_bytes;
  r.cookie = 42;
  ASSERT_TRUE(a.transport->put(r).ok());
  auto done = a.pump->wait_op(42);
  ASSERT_TRUE(done);
  ASSERT_TRUE(done->status.ok()) << done->status.to_string();
  EXPECT_FALSE(first_pattern_mismatch(b.region, 3, 0).has_value()) << "every byte in place";
}

TEST(HostRouted, APeerOfThisHostIsReachedThroughShmAndSaysSo) {
  Side a = make_side(1);
  Side b = make_side(2);
  ASSERT_TRUE(a.transport && b.transport);
  const PeerAddress address = b.transport->listen_address();
  ASSERT_EQ(address.rails.size(), 1u);
  EXPECT_NE(address.rails[0].find(";shm:"), std::string::npos) << address.rails[0];
  EXPECT_NE(address.rails[0].find(";host=" + host_routed::host_key()), std::string::npos) << address.rails[0];
  Result<PeerId> peer = a.transport->connect(address);
  ASSERT_TRUE(peer.ok()) << peer.status().to_string();
  EXPECT_GE(*peer, k_shm_ids_from);
  exchange(a, b, *peer);
  EXPECT_TRUE(a.logged("via shm")) << "the log says which side";
}

TEST(HostRouted, APeerElsewhereIsReachedThroughTcpWithTheSecret) {
  const std::string secret = "a-secret-of-at-least-16-bytes";
  Side a = make_side(1, secret);
  Side b = make_side(2, secret);
  ASSERT_TRUE(a.transport && b.transport);
  Result<PeerId> peer = a.transport->connect(elsewhere(b.transport->listen_address()));
  ASSERT_TRUE(peer.ok()) << peer.status().to_string();
  EXPECT_LT(*peer, k_shm_ids_from);
  exchange(a, b, *peer);
  EXPECT_TRUE(a.logged("via tcp"));
  // A plain tcp address (a peer that runs tcp alone) goes through tcp too.
  PeerAddress tcp_only = b.transport->listen_address();
  for (std::string& rail : tcp_only.rails) rail = rail.substr(0, rail.find(';'));
  Result<PeerId> again = a.transport->connect(tcp_only);
  ASSERT_TRUE(again.ok());
  EXPECT_LT(*again, k_shm_ids_from);
}

TEST(HostRouted, ATcpPeerWithAnotherSecretIsRefused) {
  Side a = make_side(1, "a-secret-of-at-least-16-bytes");
  Side b = make_side(2, "another-secret-of-16-bytes-or-more");
  ASSERT_TRUE(a.transport && b.transport);
  Result<PeerId> peer = a.transport->connect(elsewhere(b.transport->listen_address()));
  ASSERT_TRUE(peer.ok());
  auto down = a.pump->wait_kind<PeerDown>();
  ASSERT_TRUE(down) << "the connection is refused, not served";
  EXPECT_EQ(down->peer, *peer);
}

TEST(HostRouted, AProcessStartedAgainListensWhereItsPeersConnect) {
  Side first = make_side(2);
  ASSERT_TRUE(first.transport);
  const PeerAddress address = first.transport->listen_address();
  first.transport.reset();  // the process dies
  Side again = make_side(2, "", address.rails);
  ASSERT_TRUE(again.transport);
  EXPECT_EQ(again.transport->listen_address().rails, address.rails) << "same tcp port, shm name and key";
  Side a = make_side(1);
  Result<PeerId> peer = a.transport->connect(address);
  ASSERT_TRUE(peer.ok());
  exchange(a, again, *peer);
}

TEST(HostRouted, AnAddressOfAnotherSyntaxIsRefusedNamingIt) {
  Side a = make_side(1);
  ASSERT_TRUE(a.transport);
  Result<PeerId> peer = a.transport->connect(PeerAddress{{"127.0.0.1:1;shm:x"}});
  ASSERT_FALSE(peer.ok());
  EXPECT_EQ(peer.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(peer.status().message().find("127.0.0.1:1;shm:x"), std::string::npos) << peer.status().message();
  TransportConfig c;
  c.rail_addresses = {"127.0.0.1:0;shm:auto;nothost"};
  EXPECT_EQ(create_transport("tcp+shm", c).status().code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace sluice::transport
