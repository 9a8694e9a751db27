// The conformance suite: one set of tests instantiated over every registered,
// available transport (UCX UCT's approach). A test skips what a transport does
// not declare, and the declared capabilities are checked against behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/transports/transport_test_util.hpp"
#include "transports/transport.hpp"

namespace sluice::transport {
namespace {

using testing::EventPump;
using testing::crc_of;
using testing::make_frame;

constexpr std::uint32_t k_rails = 2;
constexpr std::uint64_t k_region_bytes = 8ULL << 20;
constexpr std::uint64_t k_src_key = 11;
constexpr std::uint64_t k_dst_key = 22;

// Every registered transport: one that is unavailable here (no RDMA device,
// say) is instantiated too and skips with its probe's reason, so the report
// says why the suite did not run over it.
std::vector<std::string> registered_transport_names() {
  std::vector<std::string> names;
  for (const auto& listing : list_transports()) names.push_back(listing.name);
  return names;
}

// Two transports of the same kind on this host, A connected to B.
class TransportConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const TransportListing listing = find_listing();
    if (!listing.available) GTEST_SKIP() << GetParam() << " unavailable here: " << listing.why_unavailable;
    caps_ = listing.capabilities;
    a_ = make(1);
    b_ = make(2);
    ASSERT_TRUE(a_ && b_);
    pump_a_ = std::make_unique<EventPump>(*a_);
    pump_b_ = std::make_unique<EventPump>(*b_);
    src_.resize(k_region_bytes);
    dst_.resize(k_region_bytes);
    fill_pattern(src_, 7, 0);
    std::fill(dst_.begin(), dst_.end(), std::byte{0xEE});
    ASSERT_TRUE(a_->register_region(k_src_key, src_, RegionKind::host).ok());
    ASSERT_TRUE(b_->register_region(k_dst_key, dst_, RegionKind::host).ok());
    Result<PeerId> peer = a_->connect(b_->listen_address());
    ASSERT_TRUE(peer.ok()) << peer.status().to_string();
    peer_ = *peer;
    auto up_a = pump_a_->wait_kind<PeerUp>();
    auto up_b = pump_b_->wait_kind<PeerUp>();
    ASSERT_TRUE(up_a && up_b);
    EXPECT_EQ(up_a->peer, peer_);
    EXPECT_FALSE(up_a->accepted);
    EXPECT_EQ(up_a->remote_id, 2u);
    EXPECT_TRUE(up_b->accepted);
    EXPECT_EQ(up_b->remote_id, 1u);
    b_peer_ = up_b->peer;
  }

  TransportListing find_listing() const {
    for (auto& listing : list_transports()) {
      if (listing.name == GetParam()) return listing;
    }
    return {};
  }

  std::unique_ptr<Transport> make(std::uint64_t id, std::uint32_t max_pending_ops = 4096) {
    TransportConfig config;
    config.local_id = id;
    Result<std::vector<std::string>> rails = loopback_rail_addresses(GetParam(), k_rails);
    EXPECT_TRUE(rails.ok());
    if (!rails.ok()) return nullptr;
    config.rail_addresses = *rails;
    config.connections_per_rail = 2;
    config.max_pending_ops = max_pending_ops;
    Result<std::unique_ptr<Transport>> t = create_transport(GetParam(), config);
    EXPECT_TRUE(t.ok()) << t.status().to_string();
    return t.ok() ? std::move(t).value() : nullptr;
  }

  BulkRequest request(std::uint64_t bytes, std::uint64_t cookie) const {
    BulkRequest r;
    r.peer = peer_;
    r.bytes = bytes;
    r.cookie = cookie;
    r.local_key = k_src_key;
    r.remote_key = k_dst_key;
    return r;
  }

  Capabilities caps_;
  std::vector<std::byte> src_, dst_;  // declared first: they outlive the transports using them
  std::unique_ptr<Transport> a_, b_;
  std::unique_ptr<EventPump> pump_a_, pump_b_;
  PeerId peer_ = 0;
  PeerId b_peer_ = 0;
};

TEST_P(TransportConformance, DeclaresUsableCapabilities) {
  EXPECT_EQ(a_->name(), GetParam());
  const Capabilities& c = a_->capabilities();
  EXPECT_EQ(c.to_string(), caps_.to_string()) << "the registry and the object must declare the same";
  EXPECT_FALSE(c.region_kinds.empty());
  EXPECT_GE(c.max_message_bytes, proto::k_frame_header_bytes + 1024);
  EXPECT_GT(c.max_transfer_bytes, 0u);
  EXPECT_GE(c.max_rails, 1u);
  EXPECT_GE(c.max_connections_per_rail, 1u);
  EXPECT_EQ(a_->listen_address().rails.size(), k_rails);
}

TEST_P(TransportConformance, RegistersOnlyDeclaredRegionKinds) {
  std::vector<std::byte> mem(4096);
  for (std::size_t k = 0; k < k_region_kind_count; ++k) {
    const auto kind = static_cast<RegionKind>(k);
    const Status st = a_->register_region(100 + k, mem, kind);
    if (caps_.reaches(kind)) {
      if (kind != RegionKind::host) continue;  // device memory is not at hand here
      EXPECT_TRUE(st.ok()) << st.to_string();
      EXPECT_TRUE(a_->deregister_region(100 + k).ok());
    } else {
      EXPECT_EQ(st.code(), StatusCode::unavailable) << to_string(kind) << ": " << st.to_string();
    }
  }
  EXPECT_EQ(a_->register_region(k_src_key, mem, RegionKind::host).code(), StatusCode::already_exists);
  EXPECT_EQ(a_->register_region(200, std::span<std::byte>(), RegionKind::host).code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(a_->deregister_region(999).code(), StatusCode::not_found);
}

TEST_P(TransportConformance, RegistersDmabufMemoryOnlyWhereDeclared) {
  std::vector<std::byte> mem(4096);
  const Status st = a_->register_dmabuf_region(300, mem, -1, 0);
  if (caps_.reaches(RegionKind::dmabuf)) {
    // No dma-buf exporter is at hand here: a missing fd is refused as such.
    EXPECT_EQ(st.code(), StatusCode::invalid_argument) << st.to_string();
  } else {
    EXPECT_EQ(st.code(), StatusCode::unavailable) << st.to_string();
  }
}

TEST_P(TransportConformance, DeliversFramesInOrderWithTagAndSender) {
  constexpr int k_frames = 64;
  std::vector<std::vector<std::byte>> sent;
  for (int i = 0; i < k_frames; ++i) {
    sent.push_back(make_frame(static_cast<std::uint32_t>(i * 97 % 5000), static_cast<std::uint64_t>(i)));
    ASSERT_TRUE(a_->send_message(peer_, 1000 + static_cast<std::uint64_t>(i), sent.back()).ok());
  }
  for (int i = 0; i < k_frames; ++i) {
    auto got = pump_b_->wait_kind<MessageReceived>();
    ASSERT_TRUE(got) << "frame " << i << " never arrived";
    EXPECT_EQ(got->tag, 1000u + static_cast<std::uint64_t>(i));
    EXPECT_EQ(got->remote_id, 1u);
    EXPECT_EQ(got->peer, b_peer_);
    ASSERT_EQ(got->frame, sent[static_cast<std::size_t>(i)]) << "frame " << i;
  }
}

TEST_P(TransportConformance, AnswersOnTheAcceptedPeer) {
  // A reply goes back on the peer that the request came from.
  const auto frame = make_frame(100, 3);
  ASSERT_TRUE(b_->send_message(b_peer_, 5, frame).ok());
  auto got = pump_a_->wait_kind<MessageReceived>();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->peer, peer_);
  EXPECT_EQ(got->remote_id, 2u);
  EXPECT_EQ(got->frame, frame);
}

TEST_P(TransportConformance, RefusesMalformedAndOversizedFramesAtOnce) {
  std::vector<std::byte> garbage(64, std::byte{0x5A});
  EXPECT_EQ(a_->send_message(peer_, 0, garbage).code(), StatusCode::invalid_argument);
  auto truncated = make_frame(100, 1);
  truncated.pop_back();
  EXPECT_EQ(a_->send_message(peer_, 0, truncated).code(), StatusCode::invalid_argument);
  auto trailing = make_frame(100, 1);
  trailing.push_back(std::byte{0});
  EXPECT_EQ(a_->send_message(peer_, 0, trailing).code(), StatusCode::invalid_argument);
  std::vector<std::byte> too_big(caps_.max_message_bytes + 1);
  EXPECT_EQ(a_->send_message(peer_, 0, too_big).code(), StatusCode::invalid_argument);
  EXPECT_EQ(a_->send_message(987654, 0, make_frame(10, 1)).code(), StatusCode::unavailable);
}

TEST_P(TransportConformance, CarriesAFrameOfMaxMessageBytes) {
  if (caps_.max_message_bytes > (64ULL << 20)) GTEST_SKIP() << "max message too large for a unit test";
  const auto payload = static_cast<std::uint32_t>(caps_.max_message_bytes - proto::k_frame_header_bytes);
  const auto frame = make_frame(payload, 9);
  ASSERT_EQ(frame.size(), caps_.max_message_bytes);
  ASSERT_TRUE(a_->send_message(peer_, 1, frame).ok());
  auto got = pump_b_->wait_kind<MessageReceived>();
  ASSERT_TRUE(got);
  EXPECT_EQ(crc_of(got->frame), crc_of(frame));
}

TEST_P(TransportConformance, PutPlacesBytesAtTheRemoteOffset) {
  if (!caps_.can_put()) GTEST_SKIP() << "put not declared";
  struct Case {
    std::uint64_t src_offset, dst_offset, bytes;
  };
  // Small, odd, split-sized and whole-region transfers.
  const std::vector<Case> cases{{0, 0, 1}, {3, 4097, 777}, {0, 1 << 20, 3 << 20}, {0, 0, k_region_bytes}};
  std::uint64_t cookie = 1;
  for (const Case& c : cases) {
    std::fill(dst_.begin(), dst_.end(), std::byte{0xEE});
    BulkRequest r = request(c.bytes, cookie);
    r.local_offset = c.src_offset;
    r.remote_offset = c.dst_offset;
    ASSERT_TRUE(a_->put(r).ok());
    auto done = pump_a_->wait_op(cookie++);
    ASSERT_TRUE(done);
    ASSERT_TRUE(done->status.ok()) << done->status.to_string();
    EXPECT_EQ(done->bytes, c.bytes);
    EXPECT_EQ(crc_of(std::span(dst_).subspan(c.dst_offset, c.bytes)),
              crc_of(std::span(src_).subspan(c.src_offset, c.bytes)))
        << "bytes " << c.bytes;
    // Nothing outside the destination range changed.
    const auto untouched = [](std::span<const std::byte> s) {
      return std::all_of(s.begin(), s.end(), [](std::byte b) { return b == std::byte{0xEE}; });
    };
    EXPECT_TRUE(untouched(std::span(dst_).first(c.dst_offset)));
    EXPECT_TRUE(untouched(std::span(dst_).subspan(c.dst_offset + c.bytes)));
  }
}

TEST_P(TransportConformance, GetFetchesBytesFromTheRemoteOffset) {
  if (!caps_.can_get()) GTEST_SKIP() << "get not declared";
  fill_pattern(dst_, 99, 0);  // B's region is the source this time
  std::vector<std::byte> landing(k_region_bytes, std::byte{0});
  ASSERT_TRUE(a_->register_region(33, landing, RegionKind::host).ok());
  std::uint64_t cookie = 50;
  for (std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{4095}, std::uint64_t{5 << 20}}) {
    BulkRequest r = request(bytes, cookie);
    r.local_key = 33;
    r.local_offset = 8;
    r.remote_offset = 1000;
    ASSERT_TRUE(a_->get(r).ok());
    auto done = pump_a_->wait_op(cookie++);
    ASSERT_TRUE(done);
    ASSERT_TRUE(done->status.ok()) << done->status.to_string();
    EXPECT_EQ(crc_of(std::span(landing).subspan(8, bytes)), crc_of(std::span(dst_).subspan(1000, bytes)));
  }
  EXPECT_TRUE(a_->deregister_region(33).ok());
}

TEST_P(TransportConformance, RemoteRangeErrorsComeBackInTheCompletion) {
  if (!caps_.can_put()) GTEST_SKIP() << "put not declared";
  BulkRequest unknown = request(100, 1);
  unknown.remote_key = 4242;
  ASSERT_TRUE(a_->put(unknown).ok());
  auto done = pump_a_->wait_op(1);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::not_found) << done->status.to_string();
  EXPECT_NE(done->status.message().find("4242"), std::string::npos) << done->status.message();

  BulkRequest outside = request(100, 2);
  outside.remote_offset = k_region_bytes - 50;
  ASSERT_TRUE(a_->put(outside).ok());
  done = pump_a_->wait_op(2);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::invalid_argument) << done->status.to_string();

  if (caps_.can_get()) {
    BulkRequest get_unknown = request(100, 3);
    get_unknown.remote_key = 4343;
    ASSERT_TRUE(a_->get(get_unknown).ok());
    done = pump_a_->wait_op(3);
    ASSERT_TRUE(done);
    EXPECT_EQ(done->status.code(), StatusCode::not_found) << done->status.to_string();
  }
  // The connection survives refused operations.
  ASSERT_TRUE(a_->put(request(64, 4)).ok());
  done = pump_a_->wait_op(4);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->status.ok()) << done->status.to_string();
}

TEST_P(TransportConformance, RefusesBadLocalArgumentsAtOnce) {
  EXPECT_EQ(a_->put(request(0, 1)).code(), StatusCode::invalid_argument);
  EXPECT_EQ(a_->put(request(caps_.max_transfer_bytes + 1, 1)).code(), StatusCode::invalid_argument);
  BulkRequest bad_rail = request(10, 1);
  bad_rail.rail = k_rails;
  EXPECT_EQ(a_->put(bad_rail).code(), StatusCode::invalid_argument);
  BulkRequest bad_key = request(10, 1);
  bad_key.local_key = 777;
  EXPECT_EQ(a_->get(bad_key).code(), StatusCode::invalid_argument);
  BulkRequest bad_range = request(10, 1);
  bad_range.local_offset = k_region_bytes - 5;
  EXPECT_EQ(a_->put(bad_range).code(), StatusCode::invalid_argument);
  BulkRequest no_peer = request(10, 1);
  no_peer.peer = 987654;
  EXPECT_EQ(a_->put(no_peer).code(), StatusCode::unavailable);
  EXPECT_TRUE(pump_a_->drain().empty()) << "a refused call must not produce an event";
}

// Carried keys (transport.hpp "Memory."): a one-sided transport grants the
// key of a region per rail and uses one handed back in BulkRequest; a stream
// transport has none to give and ignores whatever a request carries.
TEST_P(TransportConformance, GrantsRemoteKeysIffOneSidedAndUsesOrIgnoresACarriedOne) {
  const bool one_sided = caps_.rdma_write || caps_.rdma_read;
  for (std::uint32_t rail = 0; rail < k_rails; ++rail) {
    SCOPED_TRACE("rail " + std::to_string(rail));
    Result<RemoteRegionAccess> key = b_->remote_access(k_dst_key, rail, 1);
    if (!one_sided) {
      EXPECT_EQ(key.status().code(), StatusCode::unavailable) << key.status().to_string();
      key = RemoteRegionAccess{0xDEAD0000, 0xBAD, 16};  // garbage: must be ignored
    } else {
      ASSERT_TRUE(key.ok()) << key.status().to_string();
      EXPECT_EQ(key->length, k_region_bytes);
      EXPECT_EQ(b_->remote_access(999, rail, 1).status().code(), StatusCode::not_found);
    }
    BulkRequest r = request(64 * 1024, 500 + rail);
    r.rail = rail;  // reaches b's rail `rail` (both have k_rails)
    r.local_offset = rail * 4096;
    r.remote_offset = 1ULL << 20;
    r.remote_access = *key;
    ASSERT_TRUE(a_->put(r).ok());
    auto done = pump_a_->wait_op(500 + rail);
    ASSERT_TRUE(done);
    ASSERT_TRUE(done->status.ok()) << done->status.to_string();
    EXPECT_TRUE(std::equal(src_.begin() + static_cast<std::ptrdiff_t>(r.local_offset),
                           src_.begin() + static_cast<std::ptrdiff_t>(r.local_offset + r.bytes),
                           dst_.begin() + (1 << 20)));
  }
  if (one_sided) {
    EXPECT_EQ(b_->remote_access(k_dst_key, k_rails, 1).status().code(), StatusCode::invalid_argument);
  }
}

TEST_P(TransportConformance, EveryRailMovesBytes) {
  if (!caps_.can_put()) GTEST_SKIP() << "put not declared";
  for (std::uint32_t rail = 0; rail < std::min(k_rails, caps_.max_rails); ++rail) {
    BulkRequest r = request(3 << 20, 10 + rail);
    r.rail = rail;
    r.remote_offset = rail * (4ULL << 20);
    ASSERT_TRUE(a_->put(r).ok());
    auto done = pump_a_->wait_op(10 + rail);
    ASSERT_TRUE(done);
    EXPECT_TRUE(done->status.ok()) << "rail " << rail << ": " << done->status.to_string();
    EXPECT_EQ(crc_of(std::span(dst_).subspan(r.remote_offset, r.bytes)), crc_of(std::span(src_).first(r.bytes)));
  }
}

TEST_P(TransportConformance, CompletionFdSignalsPendingEvents) {
  ASSERT_TRUE(a_->send_message(peer_, 1, make_frame(10, 1)).ok());
  pollfd pfd{b_->completion_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, testing::k_wait_round_ms * testing::k_wait_rounds), 1) << "fd never became readable";
  ASSERT_TRUE(pump_b_->wait_kind<MessageReceived>());
  // Drained: the fd is quiet again until something new arrives.
  pfd.revents = 0;
  EXPECT_EQ(::poll(&pfd, 1, 0), 0);
}

TEST_P(TransportConformance, PostsFromManyThreadsAllCompleteOnce) {
  if (!caps_.can_put()) GTEST_SKIP() << "put not declared";
  constexpr int k_threads = 4;
  constexpr int k_ops_per_thread = 40;
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < k_ops_per_thread; ++i) {
        BulkRequest r = request(4096, static_cast<std::uint64_t>(t * 1000 + i));
        r.local_offset = static_cast<std::uint64_t>(t * k_ops_per_thread + i) * 4096;
        r.remote_offset = r.local_offset;
        r.rail = static_cast<std::uint32_t>(i) % k_rails;
        if (!a_->put(r).ok()) ++refused;
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(refused.load(), 0);
  std::vector<int> seen(k_threads * 1000, 0);
  for (int n = 0; n < k_threads * k_ops_per_thread; ++n) {
    auto e = pump_a_->wait_kind<OpDone>();
    ASSERT_TRUE(e) << "only " << n << " completions";
    EXPECT_TRUE(e->status.ok()) << e->status.to_string();
    ++seen[e->cookie];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c <= 1; }));
  const std::uint64_t span_bytes = std::uint64_t{k_threads} * k_ops_per_thread * 4096;
  EXPECT_EQ(crc_of(std::span(dst_).first(span_bytes)), crc_of(std::span(src_).first(span_bytes)));
}

TEST_P(TransportConformance, VanishingPeerFailsPendingOpsNamingIt) {
  if (!caps_.can_put()) GTEST_SKIP() << "put not declared";
  constexpr int k_ops = 8;
  for (int i = 0; i < k_ops; ++i) {
    BulkRequest r = request(1 << 20, static_cast<std::uint64_t>(i));
    r.remote_offset = static_cast<std::uint64_t>(i) << 20;
    ASSERT_TRUE(a_->put(r).ok());
  }
  b_.reset();  // the peer vanishes, some operations possibly still on the wire
  int failed = 0;
  for (int i = 0; i < k_ops; ++i) {
    auto done = pump_a_->wait_op(static_cast<std::uint64_t>(i));
    ASSERT_TRUE(done) << "op " << i << " never completed";
    if (!done->status.ok()) {
      ++failed;
      EXPECT_EQ(done->status.code(), StatusCode::unavailable);
      EXPECT_NE(done->status.message().find("peer " + std::to_string(peer_)), std::string::npos)
          << done->status.message();
    }
  }
  auto down = pump_a_->wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_EQ(down->peer, peer_);
  EXPECT_EQ(down->reason.code(), StatusCode::unavailable);
  EXPECT_EQ(a_->put(request(10, 99)).code(), StatusCode::unavailable);
  EXPECT_EQ(a_->send_message(peer_, 0, make_frame(1, 1)).code(), StatusCode::unavailable);
  (void)failed;  // 0..k_ops: how many were still in flight is up to the scheduler
}

TEST_P(TransportConformance, DisconnectCompletesPendingWorkAndForgetsThePeer) {
  ASSERT_TRUE(a_->disconnect(peer_).ok());
  auto down = pump_a_->wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_NE(down->reason.message().find("disconnected"), std::string::npos) << down->reason.message();
  EXPECT_EQ(a_->disconnect(peer_).code(), StatusCode::not_found);
  // The other side sees its accepted peer go.
  auto far = pump_b_->wait_kind<PeerDown>();
  ASSERT_TRUE(far);
  EXPECT_EQ(far->peer, b_peer_);
}

TEST_P(TransportConformance, ConnectingToNobodyEndsInPeerDown) {
  PeerAddress gone;
  {
    auto c = make(3);
    ASSERT_TRUE(c);
    gone = c->listen_address();
  }  // nothing listens there any more
  Result<PeerId> peer = a_->connect(gone);
  if (!peer.ok()) {
    EXPECT_EQ(peer.status().code(), StatusCode::unavailable);
    return;
  }
  auto down = pump_a_->wait_for([&](const TransportEvent& e) {
    const auto* d = std::get_if<PeerDown>(&e);
    return d != nullptr && d->peer == *peer;
  });
  ASSERT_TRUE(down) << "no PeerDown for a peer that never answered";
}

INSTANTIATE_TEST_SUITE_P(Registered, TransportConformance, ::testing::ValuesIn(registered_transport_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

TEST(TransportRegistry, ListsTcpAsAvailableWithCapabilities) {
  const auto listings = list_transports();
  auto tcp = std::find_if(listings.begin(), listings.end(), [](const auto& l) { return l.name == "tcp"; });
  ASSERT_NE(tcp, listings.end());
  EXPECT_TRUE(tcp->available);
  EXPECT_TRUE(tcp->why_unavailable.empty());
  EXPECT_TRUE(tcp->capabilities.stream);
  EXPECT_TRUE(tcp->capabilities.reaches(RegionKind::host));
  EXPECT_FALSE(tcp->capabilities.reaches(RegionKind::cuda));
  EXPECT_NE(tcp->capabilities.to_string().find("stream"), std::string::npos);
  EXPECT_TRUE(std::is_sorted(listings.begin(), listings.end(),
                             [](const auto& x, const auto& y) { return x.name < y.name; }));
}

TEST(TransportRegistry, UnknownNameListsWhatExists) {
  Result<std::unique_ptr<Transport>> t = create_transport("carrier-pigeon", TransportConfig{});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::not_found);
  EXPECT_NE(t.status().message().find("tcp"), std::string::npos) << t.status().message();
  EXPECT_EQ(loopback_rail_addresses("carrier-pigeon", 1).status().code(), StatusCode::not_found);
}

TEST(TransportRegistry, UnavailableEntryIsListedWithItsReasonAndRefused) {
  static const bool k_added = register_transport(TransportEntry{
      "zz-test-unavailable", [] { return Status(StatusCode::unavailable, "no such hardware in tests"); },
      [] { return Capabilities{}; }, nullptr, nullptr});
  ASSERT_TRUE(k_added);
  const auto listings = list_transports();
  auto entry = std::find_if(listings.begin(), listings.end(),
                            [](const auto& l) { return l.name == "zz-test-unavailable"; });
  ASSERT_NE(entry, listings.end());
  EXPECT_FALSE(entry->available);
  EXPECT_EQ(entry->why_unavailable, "no such hardware in tests");
  Result<std::unique_ptr<Transport>> t = create_transport("zz-test-unavailable", TransportConfig{});
  EXPECT_EQ(t.status().code(), StatusCode::unavailable);
  EXPECT_NE(t.status().message().find("no such hardware"), std::string::npos);
}

}  // namespace
}  // namespace sluice::transport
