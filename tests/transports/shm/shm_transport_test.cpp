// shm-specific behaviour: addresses, back-pressure through a full ring, a
// hand-written peer that never acks, refuses the hand-shake or corrupts its
// ring, and a peer in another process (process_vm_readv/writev) that is
// killed mid-run. The shared behaviour is in transport_conformance_test.cpp.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/transports/transport_test_util.hpp"
#include "transports/shm/shm_os.hpp"
#include "transports/shm/shm_ring.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/shm/shm_wire.hpp"

namespace sluice::transport::shm {
namespace {

using testing::crc_of;
using testing::EventPump;
using testing::make_frame;

// Bound on one blocking wait of the hand-written peer or the child process.
constexpr int k_fake_wait_ms = 10000;

std::unique_ptr<Transport> make(std::uint64_t id, std::uint32_t max_pending_ops = 4096, std::uint32_t rails = 1) {
  TransportConfig config;
  config.local_id = id;
  config.rail_addresses.assign(rails, "shm:auto");
  config.max_pending_ops = max_pending_ops;
  Result<std::unique_ptr<Transport>> t = make_shm_transport(config);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(t).value() : nullptr;
}

bool readable(int fd) {
  pollfd pfd{fd, POLLIN, 0};
  return ::poll(&pfd, 1, k_fake_wait_ms) == 1;
}

// The acceptor side of the hand-shake, written by hand: it listens, takes
// one hello, maps the segment and answers (or refuses); the test then
// drives the rings directly.
class FakeAcceptor {
 public:
  FakeAcceptor() {
    name_ = "sluice-shm-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_++);
    Result<int> fd = listen_abstract(name_);
    EXPECT_TRUE(fd.ok()) << fd.status().to_string();
    listen_fd_ = fd.ok() ? *fd : -1;
    doorbell_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  }
  ~FakeAcceptor() {
    for (int fd : {listen_fd_, socket_fd_, doorbell_, remote_doorbell_}) {
      if (fd >= 0) ::close(fd);
    }
    unmap_segment(segment_, segment_bytes_);
  }
  PeerAddress address() const { return PeerAddress{{"shm:" + name_}}; }

  // Accepts and reads the hello; true when one arrived with two descriptors.
  bool take_hello() {
    if (!readable(listen_fd_)) return false;
    socket_fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (socket_fd_ < 0 || !readable(socket_fd_)) return false;
    std::array<int, k_shm_max_passed_fds> fds{-1, -1};
    std::size_t count = 0;
    bool eof = false;
    if (!receive_with_fds(socket_fd_, std::as_writable_bytes(std::span(&hello, 1)), fds.data(), &count, &eof).ok() ||
        count != 2) {
      return false;
    }
    segment_bytes_ = 2 * ShmRing::footprint_bytes(hello.ring_bytes);
    Result<std::byte*> seg = map_segment(fds[0], segment_bytes_);
    ::close(fds[0]);
    remote_doorbell_ = fds[1];
    if (!seg.ok()) return false;
    segment_ = *seg;
    in = ShmRing(segment_, hello.ring_bytes, false);
    out = ShmRing(segment_ + ShmRing::footprint_bytes(hello.ring_bytes), hello.ring_bytes, false);
    return true;
  }

  bool reply(std::uint16_t status = 0, const std::string& text = "") {
    ShmHelloReply r;
    r.status = status;
    r.local_id = 77;
    r.pid = static_cast<std::uint64_t>(::getpid());
    std::memcpy(r.text, text.data(), std::min(text.size(), sizeof(r.text) - 1));
    const std::array<int, 1> fds{doorbell_};
    return send_with_fds(socket_fd_, std::as_bytes(std::span(&r, 1)),
                         status == 0 ? std::span<const int>(fds) : std::span<const int>())
        .ok();
  }

  // Writes one raw record into the transport's inbound ring and rings it.
  bool write_record(std::uint16_t kind, std::span<const std::byte> payload) {
    std::byte* at = out.reserve(kind, payload.size());
    if (at == nullptr) return false;
    std::memcpy(at, payload.data(), payload.size());
    out.commit();
    const std::uint64_t one = 1;
    return ::write(remote_doorbell_, &one, sizeof one) == sizeof one;
  }

  void hang_up() {
    ::close(socket_fd_);
    socket_fd_ = -1;
  }

  ShmHello hello;
  ShmRing in, out;

 private:
  static inline int next_ = 0;
  std::string name_;
  int listen_fd_ = -1, socket_fd_ = -1, doorbell_ = -1, remote_doorbell_ = -1;
  std::byte* segment_ = nullptr;
  std::size_t segment_bytes_ = 0;
};

TEST(ShmAddress, ParsesShmNamesAndRefusesOthers) {
  Result<std::string> name = parse_shm_address("shm:abc");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "abc");
  EXPECT_EQ(parse_shm_address("tcp:1.2.3.4:5").status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(parse_shm_address("shm:").status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(parse_shm_address("shm:" + std::string(k_shm_max_name_bytes + 1, 'x')).status().code(),
            StatusCode::invalid_argument);
}

TEST(ShmTransportConfig, RefusesBadConfigsAndTakenNames) {
  TransportConfig config;
  EXPECT_EQ(make_shm_transport(config).status().code(), StatusCode::invalid_argument);  // no rails
  config.rail_addresses = {"127.0.0.1:0"};
  EXPECT_EQ(make_shm_transport(config).status().code(), StatusCode::invalid_argument);
  config.rail_addresses = {"shm:auto"};
  config.connections_per_rail = 0;
  EXPECT_EQ(make_shm_transport(config).status().code(), StatusCode::invalid_argument);
  config.connections_per_rail = 1;
  config.max_pending_ops = 0;
  EXPECT_EQ(make_shm_transport(config).status().code(), StatusCode::invalid_argument);
  config.max_pending_ops = 8;
  config.shared_secret = std::string(k_min_shared_secret_bytes, 's');
  const Status refused = make_shm_transport(config).status();
  EXPECT_EQ(refused.code(), StatusCode::unavailable) << "a secret shm cannot check must not be ignored";
  EXPECT_NE(refused.message().find("shared_secret"), std::string::npos) << refused.message();
  config.shared_secret.clear();
  config.rail_addresses = {"shm:sluice-shm-test-taken-" + std::to_string(::getpid())};
  Result<std::unique_ptr<Transport>> first = make_shm_transport(config);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.value()->listen_address().rails[0], config.rail_addresses[0]);
  EXPECT_EQ(make_shm_transport(config).status().code(), StatusCode::already_exists);
  auto t = make(1);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->connect(PeerAddress{{"shm:auto"}}).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(t->connect(PeerAddress{{"nonsense"}}).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(t->connect(PeerAddress{}).status().code(), StatusCode::invalid_argument);
}

TEST(ShmTransport, DeliversMoreFramesThanTheRingHoldsInOrder) {
  auto a = make(1);
  auto b = make(2);
  ASSERT_TRUE(a && b);
  EventPump pa(*a), pb(*b);
  Result<PeerId> peer = a->connect(b->listen_address());
  ASSERT_TRUE(peer.ok());
  ASSERT_TRUE(pa.wait_kind<PeerUp>());
  // 96 x 64 KiB = 6 MiB through a 1 MiB ring: the sender must wait for room.
  constexpr int k_frames = 96;
  std::vector<std::uint32_t> crcs;
  for (int i = 0; i < k_frames; ++i) {
    auto frame = make_frame(64 << 10, static_cast<std::uint64_t>(i));
    crcs.push_back(crc_of(frame));
    ASSERT_TRUE(a->send_message(*peer, static_cast<std::uint64_t>(i), std::move(frame)).ok());
  }
  for (int i = 0; i < k_frames; ++i) {
    auto got = pb.wait_kind<MessageReceived>();
    ASSERT_TRUE(got) << "frame " << i;
    EXPECT_EQ(got->tag, static_cast<std::uint64_t>(i));
    EXPECT_EQ(crc_of(got->frame), crcs[static_cast<std::size_t>(i)]);
  }
}

TEST(ShmTransport, QueuedMessageBytesLimitAnswersAgain) {
  TransportConfig config;
  config.local_id = 1;
  config.rail_addresses = {"shm:auto"};
  config.max_queued_message_bytes = 100000;
  auto a = make_shm_transport(config);
  ASSERT_TRUE(a.ok());
  // Before the peer is up nothing leaves the queue.
  FakeAcceptor fake;
  Result<PeerId> peer = a.value()->connect(fake.address());
  ASSERT_TRUE(peer.ok());
  ASSERT_TRUE(a.value()->send_message(*peer, 1, make_frame(60000, 1)).ok());
  EXPECT_EQ(a.value()->send_message(*peer, 1, make_frame(60000, 2)).code(), StatusCode::again);
}

TEST(ShmTransport, PendingOpsLimitAnswersAgainAndAHangUpFailsThem) {
  auto a = make(1, 2);
  ASSERT_TRUE(a);
  EventPump pump(*a);
  std::vector<std::byte> region(1 << 16);
  ASSERT_TRUE(a->register_region(1, region, RegionKind::host).ok());
  FakeAcceptor fake;
  Result<PeerId> peer = a->connect(fake.address());
  ASSERT_TRUE(peer.ok());
  ASSERT_TRUE(fake.take_hello());
  EXPECT_EQ(fake.hello.local_id, 1u);
  EXPECT_EQ(fake.hello.channels, 1u);
  ASSERT_TRUE(fake.reply());
  auto up = pump.wait_kind<PeerUp>();
  ASSERT_TRUE(up);
  EXPECT_EQ(up->remote_id, 77u);
  BulkRequest r{*peer, 0, 1, 0, 5, 0, 4096, 100};
  ASSERT_TRUE(a->put(r).ok());
  r.cookie = 101;
  ASSERT_TRUE(a->get(r).ok());
  r.cookie = 102;
  EXPECT_EQ(a->put(r).code(), StatusCode::again) << "the fake never acks: two ops stay pending";
  // The put descriptor reached the ring (posted from this thread once the
  // peer is up) with the sender's address.
  RingRecord record;
  bool has = false;
  ASSERT_TRUE(fake.in.peek(record, has).ok());
  ASSERT_TRUE(has);
  EXPECT_EQ(record.kind, static_cast<std::uint16_t>(ShmRecord::put));
  ShmBulk bulk;
  ASSERT_EQ(record.payload.size(), sizeof bulk);
  std::memcpy(&bulk, record.payload.data(), sizeof bulk);
  EXPECT_EQ(bulk.remote_key, 5u);
  EXPECT_EQ(bulk.bytes, 4096u);
  EXPECT_EQ(bulk.address, reinterpret_cast<std::uint64_t>(region.data()));
  fake.hang_up();
  for (std::uint64_t cookie : {100, 101}) {
    auto done = pump.wait_op(cookie);
    ASSERT_TRUE(done);
    EXPECT_EQ(done->status.code(), StatusCode::unavailable);
    EXPECT_NE(done->status.message().find("shm peer " + std::to_string(*peer)), std::string::npos)
        << done->status.message();
  }
  auto down = pump.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_NE(down->reason.message().find("closed"), std::string::npos) << down->reason.message();
}

TEST(ShmTransport, RefusedHandShakeEndsInPeerDownWithTheReason) {
  auto a = make(1);
  ASSERT_TRUE(a);
  EventPump pump(*a);
  FakeAcceptor fake;
  Result<PeerId> peer = a->connect(fake.address());
  ASSERT_TRUE(peer.ok());
  ASSERT_TRUE(fake.take_hello());
  ASSERT_TRUE(fake.reply(static_cast<std::uint16_t>(StatusCode::unavailable), "no room for you"));
  auto down = pump.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_NE(down->reason.message().find("no room for you"), std::string::npos) << down->reason.message();
}

TEST(ShmTransport, CorruptRecordsAndStrayAcksAreHandled) {
  auto a = make(1);
  ASSERT_TRUE(a);
  EventPump pump(*a);
  FakeAcceptor fake;
  Result<PeerId> peer = a->connect(fake.address());
  ASSERT_TRUE(peer.ok());
  ASSERT_TRUE(fake.take_hello());
  ASSERT_TRUE(fake.reply());
  ASSERT_TRUE(pump.wait_kind<PeerUp>());
  // A frame in two records arrives whole.
  const auto frame = make_frame(3000, 4);
  std::vector<std::byte> first(sizeof(ShmMessageHead) + 1000);
  const ShmMessageHead head{9, frame.size()};
  std::memcpy(first.data(), &head, sizeof head);
  std::memcpy(first.data() + sizeof head, frame.data(), 1000);
  ASSERT_TRUE(fake.write_record(static_cast<std::uint16_t>(ShmRecord::message_first), first));
  ASSERT_TRUE(fake.write_record(static_cast<std::uint16_t>(ShmRecord::message_more), std::span(frame).subspan(1000)));
  auto got = pump.wait_kind<MessageReceived>();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->tag, 9u);
  EXPECT_EQ(got->remote_id, 77u);
  EXPECT_EQ(got->frame, frame);
  // An ack for an operation nobody posted is ignored; the peer stays.
  const ShmAck stray{12345, 0, 0};
  ASSERT_TRUE(fake.write_record(static_cast<std::uint16_t>(ShmRecord::ack), std::as_bytes(std::span(&stray, 1))));
  // A record of unknown kind loses the peer, naming the problem.
  const std::array<std::byte, 8> junk{};
  ASSERT_TRUE(fake.write_record(42, junk));
  auto down = pump.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_EQ(down->peer, *peer);
  EXPECT_NE(down->reason.message().find("corrupt ring record (kind 42"), std::string::npos) << down->reason.message();
  EXPECT_TRUE(pump.drain().empty()) << "the stray ack produced no event";
}

TEST(ShmTransport, AMalformedHelloIsRefused) {
  auto b = make(2);
  ASSERT_TRUE(b);
  Result<std::string> name = parse_shm_address(b->listen_address().rails[0]);
  ASSERT_TRUE(name.ok());
  Result<int> fd = connect_abstract(*name);
  ASSERT_TRUE(fd.ok());
  ShmHello hello;
  hello.magic = 0xBAD;
  const int no_fds[] = {::eventfd(0, EFD_CLOEXEC), ::eventfd(0, EFD_CLOEXEC)};
  ASSERT_TRUE(send_with_fds(*fd, std::as_bytes(std::span(&hello, 1)), no_fds).ok());
  ASSERT_TRUE(readable(*fd));
  ShmHelloReply reply;
  std::array<int, k_shm_max_passed_fds> fds{-1, -1};
  std::size_t count = 0;
  bool eof = false;
  ASSERT_TRUE(receive_with_fds(*fd, std::as_writable_bytes(std::span(&reply, 1)), fds.data(), &count, &eof).ok());
  EXPECT_EQ(reply.status, static_cast<std::uint16_t>(StatusCode::corrupt));
  EXPECT_NE(std::string(reply.text).find("malformed hello"), std::string::npos) << reply.text;
  EXPECT_EQ(count, 0u);
  for (int f : {*fd, no_fds[0], no_fds[1]}) ::close(f);
}

// A peer in another process: bytes move with process_vm_readv/writev, and a
// SIGKILL of that process is a clean PeerDown.
TEST(ShmTransport, MovesBytesToAnotherProcessAndSurvivesItsDeath) {
  constexpr std::size_t k_bytes = 4 << 20;
  int to_parent[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child: a transport with one region of pattern bytes, serving until
    // killed, and killed with the test process whatever happens to it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(to_parent[0]);
    std::vector<std::byte> region(k_bytes);
    fill_pattern(region, 31, 0);
    TransportConfig config;
    config.local_id = 9;
    config.rail_addresses = {"shm:auto"};
    auto t = make_shm_transport(config);
    if (!t.ok() || !t.value()->register_region(7, region, RegionKind::host).ok()) ::_exit(2);
    const std::string address = t.value()->listen_address().rails[0];
    if (::write(to_parent[1], address.data(), address.size()) != static_cast<ssize_t>(address.size())) ::_exit(3);
    ::close(to_parent[1]);
    ::poll(nullptr, 0, 60000);  // bounded: the parent kills it long before
    ::_exit(0);
  }
  ::close(to_parent[1]);
  std::array<char, 256> text{};
  ASSERT_TRUE(readable(to_parent[0]));
  const ssize_t n = ::read(to_parent[0], text.data(), text.size());
  ::close(to_parent[0]);
  ASSERT_GT(n, 0);
  const PeerAddress child_address{{std::string(text.data(), static_cast<std::size_t>(n))}};

  auto a = make(1);
  ASSERT_TRUE(a);
  EventPump pump(*a);
  std::vector<std::byte> mine(k_bytes);
  fill_pattern(mine, 55, 0);
  std::vector<std::byte> landing(k_bytes, std::byte{0});
  ASSERT_TRUE(a->register_region(1, mine, RegionKind::host).ok());
  ASSERT_TRUE(a->register_region(2, landing, RegionKind::host).ok());
  Result<PeerId> peer = a->connect(child_address);
  ASSERT_TRUE(peer.ok());
  auto up = pump.wait_kind<PeerUp>();
  ASSERT_TRUE(up) << "no PeerUp from the child";
  EXPECT_EQ(up->remote_id, 9u);
  // get: the child writes its pattern into our landing region.
  ASSERT_TRUE(a->get(BulkRequest{*peer, 0, 2, 0, 7, 0, k_bytes, 1}).ok());
  auto done = pump.wait_op(1);
  ASSERT_TRUE(done);
  ASSERT_TRUE(done->status.ok()) << done->status.to_string();
  std::vector<std::byte> expected(k_bytes);
  fill_pattern(expected, 31, 0);
  EXPECT_EQ(crc_of(landing), crc_of(expected));
  // put then get back: the child read our bytes.
  ASSERT_TRUE(a->put(BulkRequest{*peer, 0, 1, 0, 7, 4096, 1 << 20, 2}).ok());
  done = pump.wait_op(2);
  ASSERT_TRUE(done && done->status.ok());
  ASSERT_TRUE(a->get(BulkRequest{*peer, 0, 2, 0, 7, 4096, 1 << 20, 3}).ok());
  done = pump.wait_op(3);
  ASSERT_TRUE(done && done->status.ok());
  EXPECT_EQ(crc_of(std::span(landing).first(1 << 20)), crc_of(std::span(mine).first(1 << 20)));
  // The child dies; we hear of it.
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  auto down = pump.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_EQ(down->peer, *peer);
  EXPECT_EQ(a->get(BulkRequest{*peer, 0, 2, 0, 7, 0, 10, 4}).code(), StatusCode::unavailable);
}

}  // namespace
}  // namespace sluice::transport::shm
