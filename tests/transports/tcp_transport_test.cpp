// TCP-specific behaviour, driven against a hand-written peer speaking the
// packet format of tcp_wire.hpp over raw loopback sockets (127.0.0.1 only),
// so the peer can stop mid-transfer, stay silent or send garbage on purpose.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/transports/transport_test_util.hpp"
#include "transports/tcp/tcp_address.hpp"
#include "transports/tcp/tcp_transport.hpp"
#include "transports/tcp/tcp_auth.hpp"
#include "transports/tcp/tcp_wire.hpp"

namespace sluice::transport::tcp {
namespace {

using testing::crc_of;
using testing::EventPump;
using testing::make_frame;

// Bound on a blocking read of the hand-written peer: a hang becomes a failure.
constexpr int k_fake_read_timeout_s = 10;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

void set_read_timeout(int fd) {
  timeval tv{k_fake_read_timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

bool read_exact(int fd, void* out, std::size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::optional<PacketHeader> read_header(int fd) {
  PacketHeaderBytes bytes{};
  if (!read_exact(fd, bytes.data(), bytes.size())) return std::nullopt;
  Result<PacketHeader> h = decode_packet_header(bytes);
  if (!h.ok()) return std::nullopt;
  return *h;
}

bool write_header(int fd, const PacketHeader& h) {
  const PacketHeaderBytes bytes = encode_packet_header(h);
  return write_all(fd, bytes.data(), bytes.size());
}

// A listening socket on 127.0.0.1 standing in for a remote transport.
struct FakeListener {
  Fd fd;
  std::string address;

  FakeListener() {
    Result<sockaddr_in> a = parse_ipv4_address("127.0.0.1:0");
    sockaddr_in bound = *a;
    Result<int> l = listen_socket(bound, -1);
    fd = Fd(*l);
    address = format_address(bound);
  }

  // Accepts one connection (blocking, bounded by poll) and answers its hello.
  Fd accept_and_greet(std::uint64_t local_id, PacketHeader* hello_out = nullptr) {
    pollfd pfd{fd.get(), POLLIN, 0};
    if (::poll(&pfd, 1, k_fake_read_timeout_s * 1000) != 1) return Fd();
    Fd c(::accept4(fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
    set_read_timeout(c.get());
    auto hello = read_header(c.get());
    if (!hello || hello->kind != PacketKind::hello) return Fd();
    if (hello_out != nullptr) *hello_out = *hello;
    write_header(c.get(), PacketHeader{PacketKind::hello, StatusCode::ok, 0, local_id, 0, 0, 0});
    return c;
  }
};

TransportConfig one_rail_config(std::uint32_t connections) {
  TransportConfig config;
  config.local_id = 1;
  config.rail_addresses = {"127.0.0.1:0"};
  config.connections_per_rail = connections;
  return config;
}

std::unique_ptr<Transport> make(const TransportConfig& config) {
  Result<std::unique_ptr<Transport>> t = make_tcp_transport(config);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(t).value() : nullptr;
}

TEST(TcpWire, HeaderRoundTripsEveryField) {
  const PacketHeader h{PacketKind::get_data,    StatusCode::not_found, 17, 0x0102030405060708ULL, ~0ULL, 42,
                       k_tcp_max_transfer_bytes};
  const auto bytes = encode_packet_header(h);
  EXPECT_EQ(bytes[0], std::byte{'S'});
  EXPECT_EQ(bytes[3], std::byte{'1'});
  Result<PacketHeader> back = decode_packet_header(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, h);
}

TEST(TcpWire, RefusesBadMagicKindStatusAndTextLength) {
  const PacketHeader h{PacketKind::put, StatusCode::ok, 0, 1, 2, 3, 4};
  auto bad_magic = encode_packet_header(h);
  bad_magic[0] = std::byte{'X'};
  EXPECT_EQ(decode_packet_header(bad_magic).status().code(), StatusCode::corrupt);
  auto bad_kind = encode_packet_header(h);
  bad_kind[4] = std::byte{99};
  EXPECT_EQ(decode_packet_header(bad_kind).status().code(), StatusCode::corrupt);
  bad_kind[4] = std::byte{0};
  EXPECT_EQ(decode_packet_header(bad_kind).status().code(), StatusCode::corrupt);
  auto bad_status = encode_packet_header(h);
  bad_status[5] = std::byte{200};
  EXPECT_EQ(decode_packet_header(bad_status).status().code(), StatusCode::corrupt);
  PacketHeader long_text = h;
  long_text.text_bytes = k_tcp_max_error_text_bytes + 1;
  Result<PacketHeader> r = decode_packet_header(encode_packet_header(long_text));
  EXPECT_EQ(r.status().code(), StatusCode::corrupt);
  EXPECT_NE(r.status().message().find("k_tcp_max_error_text_bytes"), std::string::npos);
}

TEST(TcpAddress, ParsesAndFormatsIpv4WithPort) {
  Result<sockaddr_in> a = parse_ipv4_address("127.0.0.1:4567");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(ntohs(a->sin_port), 4567);
  EXPECT_EQ(format_address(*a), "127.0.0.1:4567");
  for (const char* bad : {"127.0.0.1", "localhost:80", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:8x", ":80"}) {
    Result<sockaddr_in> r = parse_ipv4_address(bad);
    EXPECT_EQ(r.status().code(), StatusCode::invalid_argument) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

TEST(TcpTransport, RefusesConfigsOutsideItsLimits) {
  TransportConfig none = one_rail_config(1);
  none.rail_addresses.clear();
  EXPECT_EQ(make_tcp_transport(none).status().code(), StatusCode::invalid_argument);
  TransportConfig too_many = one_rail_config(1);
  too_many.rail_addresses.assign(k_max_rails + 1, "127.0.0.1:0");
  EXPECT_EQ(make_tcp_transport(too_many).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(make_tcp_transport(one_rail_config(0)).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(make_tcp_transport(one_rail_config(k_max_connections_per_rail + 1)).status().code(),
            StatusCode::invalid_argument);
  TransportConfig bad_address = one_rail_config(1);
  bad_address.rail_addresses = {"not-an-address"};
  EXPECT_EQ(make_tcp_transport(bad_address).status().code(), StatusCode::invalid_argument);
  TransportConfig no_ops = one_rail_config(1);
  no_ops.max_pending_ops = 0;
  EXPECT_EQ(make_tcp_transport(no_ops).status().code(), StatusCode::invalid_argument);
  auto t = make(one_rail_config(1));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->connect(PeerAddress{}).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(t->connect(PeerAddress{{"nowhere"}}).status().code(), StatusCode::invalid_argument);
}

TEST(TcpTransport, SplitsALargePutOverEveryConnectionOfTheRail) {
  constexpr std::uint32_t k_conns = 4;
  FakeListener fake;
  auto t = make(one_rail_config(k_conns));
  ASSERT_TRUE(t);
  EventPump pump(*t);
  std::vector<std::byte> src(4 * k_tcp_split_min_bytes);
  fill_pattern(src, 5, 0);
  ASSERT_TRUE(t->register_region(1, src, RegionKind::host).ok());
  Result<PeerId> peer = t->connect(PeerAddress{{fake.address}});
  ASSERT_TRUE(peer.ok());
  std::vector<Fd> conns;
  std::vector<bool> seen_index(k_conns, false);
  for (std::uint32_t i = 0; i < k_conns; ++i) {
    PacketHeader hello;
    conns.push_back(fake.accept_and_greet(77, &hello));
    ASSERT_GE(conns.back().get(), 0);
    EXPECT_EQ(hello.op, 1u) << "hello carries the local id";
    EXPECT_EQ(hello.length, k_conns) << "hello carries the group size";
    EXPECT_EQ(hello.offset >> 32, 0u) << "rail 0";
    seen_index[hello.offset & 0xFFFFFFFFu] = true;
  }
  EXPECT_EQ(std::count(seen_index.begin(), seen_index.end(), true), k_conns);
  auto up = pump.wait_kind<PeerUp>();
  ASSERT_TRUE(up);
  EXPECT_EQ(up->remote_id, 77u);

  BulkRequest r;
  r.peer = *peer;
  r.local_key = 1;
  r.remote_key = 9;
  r.remote_offset = 1000;
  r.bytes = src.size();
  r.cookie = 5;
  ASSERT_TRUE(t->put(r).ok());
  // Every connection carries one piece of k_tcp_split_min_bytes; together they cover the range once.
  std::vector<std::byte> landed(src.size());
  std::vector<bool> covered(k_conns, false);
  for (Fd& c : conns) {
    auto h = read_header(c.get());
    ASSERT_TRUE(h);
    EXPECT_EQ(h->kind, PacketKind::put);
    EXPECT_EQ(h->key, 9u);
    ASSERT_EQ(h->length, k_tcp_split_min_bytes);
    const std::uint64_t at = h->offset - 1000;
    ASSERT_EQ(at % k_tcp_split_min_bytes, 0u);
    covered[at / k_tcp_split_min_bytes] = true;
    ASSERT_TRUE(read_exact(c.get(), landed.data() + at, h->length));
    ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::put_ack, StatusCode::ok, 0, h->op, h->key, 0, 0}));
  }
  EXPECT_EQ(std::count(covered.begin(), covered.end(), true), k_conns);
  EXPECT_EQ(crc_of(landed), crc_of(src));
  auto done = pump.wait_op(5);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->status.ok()) << done->status.to_string();
  EXPECT_EQ(done->bytes, src.size());
}

TEST(TcpTransport, PeerVanishingMidPutFailsTheOpNamingThePeer) {
  FakeListener fake;
  auto t = make(one_rail_config(1));
  ASSERT_TRUE(t);
  EventPump pump(*t);
  std::vector<std::byte> src(1 << 20);
  ASSERT_TRUE(t->register_region(1, src, RegionKind::host).ok());
  Result<PeerId> peer = t->connect(PeerAddress{{fake.address}});
  ASSERT_TRUE(peer.ok());
  Fd c = fake.accept_and_greet(2);
  ASSERT_GE(c.get(), 0);
  BulkRequest r;
  r.peer = *peer;
  r.local_key = 1;
  r.bytes = src.size();
  r.cookie = 42;
  ASSERT_TRUE(t->put(r).ok());
  auto h = read_header(c.get());
  ASSERT_TRUE(h);
  std::vector<std::byte> part(1000);
  ASSERT_TRUE(read_exact(c.get(), part.data(), part.size()));
  c.reset();  // gone, 1000 bytes into a 1 MiB body
  auto done = pump.wait_op(42);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::unavailable);
  EXPECT_NE(done->status.message().find("tcp peer " + std::to_string(*peer) + " (" + fake.address + ")"),
            std::string::npos)
      << done->status.message();
  EXPECT_NE(done->status.message().find("lost"), std::string::npos);
  auto down = pump.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_EQ(down->peer, *peer);
  EXPECT_EQ(down->remote_id, 2u);
}

TEST(TcpTransport, GarbageOnTheStreamLosesThePeer) {
  FakeListener fake;
  std::vector<std::string> logs;
  std::mutex logs_mu;
  TransportConfig config = one_rail_config(1);
  config.log = [&](std::string_view line) {
    std::lock_guard lock(logs_mu);
    logs.emplace_back(line);
  };
  auto t = make(config);
  ASSERT_TRUE(t);
  EventPump pump(*t);
  Result<PeerId> peer = t->connect(PeerAddress{{fake.address}});
  ASSERT_TRUE(peer.ok());
  Fd c = fake.accept_and_greet(2);
  ASSERT_GE(c.get(), 0);
  std::vector<char> garbage(k_tcp_packet_header_bytes, 'x');
  ASSERT_TRUE(write_all(c.get(), garbage.data(), garbage.size()));
  auto down = pump.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_NE(down->reason.message().find("bad magic"), std::string::npos) << down->reason.message();
  std::lock_guard lock(logs_mu);
  ASSERT_FALSE(logs.empty());
  EXPECT_NE(logs.back().find("bad magic"), std::string::npos);
}

TEST(TcpTransport, LimitsOnQueuedWorkAnswerAgain) {
  FakeListener fake;
  TransportConfig config = one_rail_config(1);
  config.max_pending_ops = 2;
  config.max_queued_message_bytes = 100;
  auto t = make(config);
  ASSERT_TRUE(t);
  EventPump pump(*t);
  std::vector<std::byte> src(4096);
  ASSERT_TRUE(t->register_region(1, src, RegionKind::host).ok());
  Result<PeerId> peer = t->connect(PeerAddress{{fake.address}});
  ASSERT_TRUE(peer.ok());
  Fd c = fake.accept_and_greet(2);  // greets, then never acknowledges anything
  BulkRequest r;
  r.peer = *peer;
  r.local_key = 1;
  r.bytes = 100;
  EXPECT_TRUE(t->put(r).ok());
  EXPECT_TRUE(t->put(r).ok());
  const Status third = t->put(r);
  EXPECT_EQ(third.code(), StatusCode::again);
  EXPECT_NE(third.message().find("max_pending_ops"), std::string::npos);
  const Status big = t->send_message(*peer, 0, make_frame(200, 1));
  EXPECT_EQ(big.code(), StatusCode::again);
  EXPECT_NE(big.message().find("max_queued_message_bytes"), std::string::npos);
  EXPECT_TRUE(t->send_message(*peer, 0, make_frame(50, 1)).ok());
}

TEST(TcpTransport, AcceptorDropsAConnectionThatDoesNotStartWithHello) {
  std::vector<std::string> logs;
  std::mutex logs_mu;
  TransportConfig config = one_rail_config(1);
  config.log = [&](std::string_view line) {
    std::lock_guard lock(logs_mu);
    logs.emplace_back(line);
  };
  auto t = make(config);
  ASSERT_TRUE(t);
  EventPump pump(*t);
  Result<sockaddr_in> to = parse_ipv4_address(t->listen_address().rails[0]);
  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)), 0);
  set_read_timeout(c.get());
  ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::put, StatusCode::ok, 0, 1, 1, 0, 10}));
  char byte = 0;
  EXPECT_EQ(::recv(c.get(), &byte, 1, 0), 0) << "the transport must close the connection";
  EXPECT_TRUE(pump.drain().empty()) << "no peer came up";
  std::lock_guard lock(logs_mu);
  ASSERT_FALSE(logs.empty());
  EXPECT_NE(logs.back().find("not a hello"), std::string::npos) << logs.back();
}

TEST(TcpTransport, IncomingPutLandsInPlaceAndAVanishedSenderReleasesTheRegion) {
  auto t = make(one_rail_config(1));
  ASSERT_TRUE(t);
  EventPump pump(*t);
  std::vector<std::byte> region(64 * 1024, std::byte{0});
  ASSERT_TRUE(t->register_region(5, region, RegionKind::host).ok());
  Result<sockaddr_in> to = parse_ipv4_address(t->listen_address().rails[0]);
  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)), 0);
  set_read_timeout(c.get());
  // A one-connection group from remote id 9.
  ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::hello, StatusCode::ok, 0, 9, 1234, 0, 1}));
  auto reply = read_header(c.get());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->kind, PacketKind::hello);
  EXPECT_EQ(reply->op, 1u) << "the acceptor answers with its local id";
  auto up = pump.wait_kind<PeerUp>();
  ASSERT_TRUE(up);
  EXPECT_TRUE(up->accepted);
  EXPECT_EQ(up->remote_id, 9u);

  // A whole put: placed at the offset, acknowledged.
  std::vector<std::byte> body(1000);
  fill_pattern(body, 3, 0);
  ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::put, StatusCode::ok, 0, 1, 5, 100, body.size()}));
  ASSERT_TRUE(write_all(c.get(), body.data(), body.size()));
  auto ack = read_header(c.get());
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->kind, PacketKind::put_ack);
  EXPECT_EQ(ack->status, StatusCode::ok);
  EXPECT_EQ(crc_of(std::span(region).subspan(100, body.size())), crc_of(body));

  // Half a put, then the sender vanishes: the region is released (no hang).
  ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::put, StatusCode::ok, 0, 2, 5, 0, 32768}));
  ASSERT_TRUE(write_all(c.get(), body.data(), 500));
  c.reset();
  auto down = pump.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_EQ(down->peer, up->peer);
  EXPECT_TRUE(t->deregister_region(5).ok());
}

TEST(TcpTransport, GetAnswerOfTheWrongLengthLosesThePeer) {
  FakeListener fake;
  auto t = make(one_rail_config(1));
  ASSERT_TRUE(t);
  EventPump pump(*t);
  std::vector<std::byte> dst(4096);
  ASSERT_TRUE(t->register_region(1, dst, RegionKind::host).ok());
  Result<PeerId> peer = t->connect(PeerAddress{{fake.address}});
  ASSERT_TRUE(peer.ok());
  Fd c = fake.accept_and_greet(2);
  BulkRequest r;
  r.peer = *peer;
  r.local_key = 1;
  r.bytes = 100;
  r.cookie = 8;
  ASSERT_TRUE(t->get(r).ok());
  auto h = read_header(c.get());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, PacketKind::get_request);
  ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::get_data, StatusCode::ok, 0, h->op, 0, 0, 101}));
  auto done = pump.wait_op(8);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.code(), StatusCode::unavailable);
  EXPECT_NE(done->status.message().find("101 bytes"), std::string::npos) << done->status.message();
}

// ---- socket buffer sizes (TransportConfig::socket_buffer_bytes) ----------------

// What the kernel says about one of this process's TCP sockets on 127.0.0.1.
struct SocketView {
  int local_port = 0;
  int peer_port = 0;  // 0: not connected (a listener)
  int send_buffer_bytes = 0;
  int receive_buffer_bytes = 0;
  int receive_window_scale = -1;  // connected sockets: the scale offered in the handshake
};

// Every TCP/IPv4 socket this process holds, found through /proc/self/fd: the
// transport does not hand out its descriptors, and the kernel is the
// authority on what was set anyway.
std::vector<SocketView> sockets_of_this_process() {
  std::vector<SocketView> out;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    int fd = -1;
    const std::string_view name(entry->d_name);
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc() || fd == ::dirfd(dir)) continue;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_in local{};
    socklen_t len = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 || local.sin_family != AF_INET) continue;
    int type = 0;
    len = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    SocketView view;
    view.local_port = ntohs(local.sin_port);
    sockaddr_in peer{};
    len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0) {
      view.peer_port = ntohs(peer.sin_port);
      tcp_info info{};
      len = sizeof info;
      if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0) view.receive_window_scale = info.tcpi_rcv_wscale;
    }
    len = sizeof view.send_buffer_bytes;
    ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &view.send_buffer_bytes, &len);
    len = sizeof view.receive_buffer_bytes;
    ::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &view.receive_buffer_bytes, &len);
    out.push_back(view);
  }
  ::closedir(dir);
  return out;
}

std::vector<int> ports_of(const PeerAddress& address) {
  std::vector<int> ports;
  for (const std::string& rail : address.rails) ports.push_back(ntohs(parse_ipv4_address(rail)->sin_port));
  return ports;
}

// A client and a server transport (2 rails x 2 connections) with
// `socket_buffer_bytes`, connected; the sockets of both, by role.
struct BufferedPair {
  std::unique_ptr<Transport> server, client;
  std::vector<SocketView> listeners, connected, accepted;

  explicit BufferedPair(std::uint32_t socket_buffer_bytes) {
    TransportConfig config = one_rail_config(2);
    config.rail_addresses = {"127.0.0.1:0", "127.0.0.1:0"};
    config.socket_buffer_bytes = socket_buffer_bytes;
    server = make(config);
    config.local_id = 2;
    client = make(config);
    if (!server || !client) return;
    EventPump server_pump(*server);
    EventPump client_pump(*client);
    if (!client->connect(server->listen_address()).ok()) return;
    if (!client_pump.wait_kind<PeerUp>() || !server_pump.wait_kind<PeerUp>()) return;
    const std::vector<int> server_ports = ports_of(server->listen_address());
    std::vector<int> own_ports = server_ports;
    for (int port : ports_of(client->listen_address())) own_ports.push_back(port);
    const auto in = [](const std::vector<int>& ports, int port) {
      return std::find(ports.begin(), ports.end(), port) != ports.end();
    };
    for (const SocketView& s : sockets_of_this_process()) {
      if (s.peer_port == 0 && in(own_ports, s.local_port)) listeners.push_back(s);
      if (s.peer_port != 0 && in(server_ports, s.peer_port)) connected.push_back(s);
      if (s.peer_port != 0 && in(server_ports, s.local_port)) accepted.push_back(s);
    }
    // The progress threads close these descriptors (at tear-down) with their
    // transport's lock held; taking each lock once more (poll) orders the
    // reads above before any such close, for ThreadSanitizer as in fact.
    server_pump.drain();
    client_pump.drain();
  }
};

TEST(TcpTransport, SocketBufferBytesIsSetOnEveryDataSocketBeforeTheHandshake) {
  constexpr std::uint32_t k_bytes = 5000;  // unlike any default (tcp_wmem[1] is 16384)
  BufferedPair pair(k_bytes);
  ASSERT_TRUE(pair.server && pair.client);
  EXPECT_EQ(pair.listeners.size(), 4u) << "2 rails per transport";
  EXPECT_EQ(pair.connected.size(), 4u) << "2 rails x 2 connections";
  EXPECT_EQ(pair.accepted.size(), 4u) << "2 rails x 2 connections";
  std::vector<SocketView> all = pair.listeners;
  all.insert(all.end(), pair.connected.begin(), pair.connected.end());
  all.insert(all.end(), pair.accepted.begin(), pair.accepted.end());
  for (const SocketView& s : all) {
    SCOPED_TRACE("socket on port " + std::to_string(s.local_port) + " to port " + std::to_string(s.peer_port));
    // The kernel doubles the value for its bookkeeping (socket(7)).
    EXPECT_EQ(s.send_buffer_bytes, 2 * static_cast<int>(k_bytes));
    EXPECT_EQ(s.receive_buffer_bytes, 2 * static_cast<int>(k_bytes));
    // Set before connect()/listen(): the handshake offered a window that
    // fits the small buffer, with no scaling. Set afterwards, the scale
    // would have been fixed from the kernel's large tcp_rmem maximum.
    if (s.peer_port != 0) {
      EXPECT_EQ(s.receive_window_scale, 0);
    }
  }
}

TEST(TcpTransport, SocketBufferBytesZeroLeavesTheKernelDefaults) {
  BufferedPair pair(0);
  ASSERT_TRUE(pair.server && pair.client);
  ASSERT_EQ(pair.connected.size(), 4u);
  ASSERT_EQ(pair.accepted.size(), 4u);
  for (const SocketView& s : pair.connected) {
    EXPECT_NE(s.receive_buffer_bytes, 2 * 5000);
    EXPECT_GT(s.receive_window_scale, 0) << "an unlocked receive buffer may grow: the window is scaled";
  }
}

TEST(TcpTransport, RefusesSocketBufferBytesOutsideItsLimitsNamingTheField) {
  for (const std::uint32_t bytes :
       {std::uint32_t{100}, k_min_socket_buffer_bytes - 1, k_max_socket_buffer_bytes + 1, std::uint32_t{1} << 30}) {
    TransportConfig config = one_rail_config(1);
    config.socket_buffer_bytes = bytes;
    Result<std::unique_ptr<Transport>> t = make_tcp_transport(config);
    EXPECT_EQ(t.status().code(), StatusCode::invalid_argument) << bytes;
    EXPECT_NE(t.status().message().find("socket_buffer_bytes"), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find(std::to_string(bytes)), std::string::npos) << t.status().message();
  }
  for (const std::uint32_t bytes : {k_min_socket_buffer_bytes, k_max_socket_buffer_bytes}) {
    TransportConfig config = one_rail_config(1);
    config.socket_buffer_bytes = bytes;
    EXPECT_TRUE(make_tcp_transport(config).ok()) << bytes << " is inside the limits";
  }
}

// ---- connection authentication (tcp_auth.hpp) ---------------------------------

constexpr std::string_view k_secret = "cluster-secret-0123456789abcdef";

struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view line) {
      std::lock_guard lock(mu);
      lines.emplace_back(line);
    };
  }
  bool contains(std::string_view what) {
    std::lock_guard lock(mu);
    for (const auto& l : lines) {
      if (l.find(what) != std::string::npos) return true;
    }
    return false;
  }
};

TransportConfig secret_config(std::uint64_t id, std::string_view secret, LogSink* sink = nullptr) {
  TransportConfig config = one_rail_config(2);
  config.local_id = id;
  config.shared_secret = std::string(secret);
  if (sink != nullptr) config.log = sink->fn();
  return config;
}

TEST(TcpAuth, ProofsDependOnSecretRoleAndBothNonces) {
  AuthBytes n1{};
  AuthBytes n2{};
  n2[0] = std::byte{1};
  const AuthBytes p = auth_proof(k_secret, AuthRole::connector, n1, n2, 7);
  EXPECT_TRUE(auth_proof_matches(p, auth_proof(k_secret, AuthRole::connector, n1, n2, 7)));
  EXPECT_FALSE(auth_proof_matches(p, auth_proof(k_secret, AuthRole::acceptor, n1, n2, 7))) << "no reflection";
  EXPECT_FALSE(auth_proof_matches(p, auth_proof(k_secret, AuthRole::connector, n2, n2, 7))) << "acceptor nonce";
  EXPECT_FALSE(auth_proof_matches(p, auth_proof(k_secret, AuthRole::connector, n1, n1, 7))) << "connector nonce";
  EXPECT_FALSE(auth_proof_matches(p, auth_proof(k_secret, AuthRole::connector, n2, n1, 7))) << "nonces in order";
  EXPECT_FALSE(auth_proof_matches(p, auth_proof("another-secret-0123456789", AuthRole::connector, n1, n2, 7)));
  EXPECT_FALSE(auth_proof_matches(p, auth_proof(k_secret, AuthRole::connector, n1, n2, 8))) << "bound to the node id";
  auto a = make_auth_nonce();
  auto b = make_auth_nonce();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST(TcpAuth, RefusesASecretOutsideItsLimits) {
  TransportConfig config = one_rail_config(1);
  config.shared_secret = "short";
  EXPECT_EQ(make_tcp_transport(config).status().code(), StatusCode::invalid_argument);
  config.shared_secret = std::string(k_max_shared_secret_bytes + 1, 'x');
  EXPECT_EQ(make_tcp_transport(config).status().code(), StatusCode::invalid_argument);
}

TEST(TcpAuth, PeersWithTheSameSecretConnectAndExchangeMessagesAndBulk) {
  auto server = make(secret_config(10, k_secret));
  auto client = make(secret_config(20, k_secret));
  ASSERT_TRUE(server && client);
  EventPump sp(*server);
  EventPump cp(*client);
  std::vector<std::byte> remote(1 << 20);
  std::vector<std::byte> local(1 << 20);
  fill_pattern(local, 9, 0);
  ASSERT_TRUE(server->register_region(3, remote, RegionKind::host).ok());
  ASSERT_TRUE(client->register_region(4, local, RegionKind::host).ok());
  Result<PeerId> peer = client->connect(server->listen_address());
  ASSERT_TRUE(peer.ok());
  auto up = cp.wait_kind<PeerUp>();
  ASSERT_TRUE(up);
  EXPECT_EQ(up->remote_id, 10u);
  ASSERT_TRUE(sp.wait_kind<PeerUp>());
  ASSERT_TRUE(client->send_message(*peer, 7, make_frame(100, 1)).ok());
  auto m = sp.wait_kind<MessageReceived>();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->remote_id, 20u);
  BulkRequest r;
  r.peer = *peer;
  r.local_key = 4;
  r.remote_key = 3;
  r.bytes = local.size();
  r.cookie = 11;
  ASSERT_TRUE(client->put(r).ok());
  auto done = cp.wait_op(11);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->status.ok()) << done->status.to_string();
  EXPECT_EQ(crc_of(remote), crc_of(local));
}

TEST(TcpAuth, AWrongSecretIsRefusedAndLoggedWhileOthersAreStillServed) {
  LogSink server_log;
  auto server = make(secret_config(10, k_secret, &server_log));
  auto intruder = make(secret_config(30, "not-the-cluster-secret-at-all"));
  auto client = make(secret_config(20, k_secret));
  ASSERT_TRUE(server && intruder && client);
  EventPump sp(*server);
  EventPump ip(*intruder);
  EventPump cp(*client);
  Result<PeerId> bad = intruder->connect(server->listen_address());
  ASSERT_TRUE(bad.ok());
  auto down = ip.wait_kind<PeerDown>();
  ASSERT_TRUE(down) << "the intruder's connection must fail";
  EXPECT_FALSE(down->reason.ok());
  Result<PeerId> good = client->connect(server->listen_address());
  ASSERT_TRUE(good.ok());
  ASSERT_TRUE(cp.wait_kind<PeerUp>());
  ASSERT_TRUE(client->send_message(*good, 1, make_frame(10, 2)).ok());
  auto m = sp.wait_kind<MessageReceived>();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->remote_id, 20u) << "only the authenticated client's message arrives";
  EXPECT_TRUE(server_log.contains("wrong authentication proof")) << "the refusal is logged";
}

TEST(TcpAuth, APeerWithoutTheSecretIsRefusedBothWays) {
  LogSink server_log;
  auto server = make(secret_config(10, k_secret, &server_log));
  ASSERT_TRUE(server);
  EventPump sp(*server);
  // A raw client that skips authentication and says hello at once.
  Result<sockaddr_in> to = parse_ipv4_address(server->listen_address().rails[0]);
  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)), 0);
  set_read_timeout(c.get());
  ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::hello, StatusCode::ok, 0, 5, 1, 0, 1}));
  auto challenge = read_header(c.get());
  ASSERT_TRUE(challenge);
  EXPECT_EQ(challenge->kind, PacketKind::challenge);
  std::vector<std::byte> nonce(challenge->length);
  ASSERT_TRUE(read_exact(c.get(), nonce.data(), nonce.size()));
  char byte = 0;
  EXPECT_EQ(::recv(c.get(), &byte, 1, 0), 0) << "the server must close the connection";
  EXPECT_TRUE(sp.drain().empty()) << "no peer came up";
  EXPECT_TRUE(server_log.contains("refused unauthenticated peer"));
  // A transport without a secret that meets a server with one: refused with the reason.
  auto plain = make(one_rail_config(1));
  ASSERT_TRUE(plain);
  EventPump pp(*plain);
  ASSERT_TRUE(plain->connect(server->listen_address()).ok());
  auto down = pp.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_NE(down->reason.message().find("no shared secret"), std::string::npos) << down->reason.message();
}

// Issue 24: the raw-socket intruder. It claims a node id in a hello and asks
// for and writes into small sequential region keys and a real one: it reads
// nothing, writes nothing, and its address is in the log.
TEST(TcpAuth, ARawIntruderReadsAndWritesNothingAndIsLoggedWithItsAddress) {
  LogSink server_log;
  auto server = make(secret_config(10, k_secret, &server_log));
  ASSERT_TRUE(server);
  EventPump sp(*server);
  std::vector<std::byte> region(4096);
  fill_pattern(region, 5, 0);
  const std::uint32_t before = crc_of(region);
  constexpr std::uint64_t k_real_key = 0x9e3779b97f4a7c15ULL;
  ASSERT_TRUE(server->register_region(k_real_key, region, RegionKind::host).ok());
  Result<sockaddr_in> to = parse_ipv4_address(server->listen_address().rails[0]);
  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)), 0);
  sockaddr_in mine{};
  socklen_t len = sizeof mine;
  ASSERT_EQ(::getsockname(c.get(), reinterpret_cast<sockaddr*>(&mine), &len), 0);
  const std::string my_address = format_address(mine);
  set_read_timeout(c.get());
  write_header(c.get(), PacketHeader{PacketKind::hello, StatusCode::ok, 0, 2, 1, 0, 1});
  std::vector<std::byte> junk(64, std::byte{0x66});
  for (std::uint64_t key : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{4}, k_real_key}) {
    write_header(c.get(), PacketHeader{PacketKind::get_request, StatusCode::ok, 0, key, key, 0, 64});
    write_header(c.get(), PacketHeader{PacketKind::put, StatusCode::ok, 0, key, key, 0, junk.size()});
    write_all(c.get(), junk.data(), junk.size());
  }
  // Everything the server sends until it closes: its challenge, nothing more.
  bool data_or_ack = false;
  for (auto h = read_header(c.get()); h; h = read_header(c.get())) {
    data_or_ack = data_or_ack || h->kind == PacketKind::get_data || h->kind == PacketKind::put_ack;
    std::vector<std::byte> body(h->kind == PacketKind::challenge ? h->length : 0);
    if (!body.empty() && !read_exact(c.get(), body.data(), body.size())) break;
  }
  EXPECT_FALSE(data_or_ack) << "the intruder got bytes or an acknowledgement";
  EXPECT_EQ(crc_of(region), before) << "the intruder wrote into a region";
  EXPECT_TRUE(sp.drain().empty()) << "no peer came up";
  EXPECT_TRUE(server_log.contains("refused unauthenticated peer " + my_address)) << "logged with its address";
  EXPECT_TRUE(server->deregister_region(k_real_key).ok());
}

// Identity is what the handshake proved: a peer that knows the secret and
// proves node 5 cannot then say hello as node 6.
TEST(TcpAuth, AHelloClaimingAnotherNodeThanTheProvenOneIsRefused) {
  LogSink server_log;
  auto server = make(secret_config(10, k_secret, &server_log));
  ASSERT_TRUE(server);
  EventPump sp(*server);
  Result<sockaddr_in> to = parse_ipv4_address(server->listen_address().rails[0]);
  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)), 0);
  set_read_timeout(c.get());
  auto challenge = read_header(c.get());
  ASSERT_TRUE(challenge && challenge->kind == PacketKind::challenge);
  AuthBytes server_nonce{};
  ASSERT_TRUE(read_exact(c.get(), server_nonce.data(), server_nonce.size()));
  const AuthBytes mine{};
  write_header(c.get(), PacketHeader{PacketKind::challenge, StatusCode::ok, 0, 5, 0, 0, k_tcp_auth_bytes});
  write_all(c.get(), mine.data(), mine.size());
  const AuthBytes proof = auth_proof(k_secret, AuthRole::connector, server_nonce, mine, 5);
  write_header(c.get(), PacketHeader{PacketKind::proof, StatusCode::ok, 0, 5, 0, 0, k_tcp_auth_bytes});
  write_all(c.get(), proof.data(), proof.size());
  // The hello waits for the server's proof, as the protocol says (tcp_auth.hpp).
  auto server_proof = read_header(c.get());
  ASSERT_TRUE(server_proof && server_proof->kind == PacketKind::proof);
  AuthBytes server_proof_bytes{};
  ASSERT_TRUE(read_exact(c.get(), server_proof_bytes.data(), server_proof_bytes.size()));
  write_header(c.get(), PacketHeader{PacketKind::hello, StatusCode::ok, 0, 6, 1, 0, 1});
  std::vector<char> rest(4096);
  ssize_t got = 0;
  while ((got = ::recv(c.get(), rest.data(), rest.size(), 0)) > 0) {
  }
  EXPECT_EQ(got, 0) << "closed, not timed out";
  EXPECT_TRUE(sp.drain().empty()) << "no peer came up";
  EXPECT_TRUE(server_log.contains("claims node 6 but it authenticated as node 5"));
}

TEST(TcpAuth, AMalformedProofIsRefused) {
  LogSink server_log;
  auto server = make(secret_config(10, k_secret, &server_log));
  ASSERT_TRUE(server);
  Result<sockaddr_in> to = parse_ipv4_address(server->listen_address().rails[0]);
  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)), 0);
  set_read_timeout(c.get());
  ASSERT_TRUE(write_header(c.get(), PacketHeader{PacketKind::proof, StatusCode::ok, 0, 5, 0, 0, 7}));
  ssize_t got = 0;
  // The server's challenge may arrive first; then the close.
  std::vector<char> sink(4096);
  while ((got = ::recv(c.get(), sink.data(), sink.size(), 0)) > 0) {
  }
  EXPECT_EQ(got, 0) << "closed, not timed out";
  EXPECT_TRUE(server_log.contains("authentication packet of 7 bytes"));
}

// ---- pre-authentication bounds (issue 47) --------------------------------------

// A raw socket connected to the transport's rail `rail`, reads bounded by k_fake_read_timeout_s.
Fd raw_connect(const Transport& server, std::size_t rail = 0, std::string* my_address = nullptr) {
  Result<sockaddr_in> to = parse_ipv4_address(server.listen_address().rails[rail]);
  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(c.get(), reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)) != 0) return Fd();
  set_read_timeout(c.get());
  if (my_address != nullptr) {
    sockaddr_in mine{};
    socklen_t len = sizeof mine;
    ::getsockname(c.get(), reinterpret_cast<sockaddr*>(&mine), &len);
    *my_address = format_address(mine);
  }
  return c;
}

bool write_auth_packet(int fd, PacketKind kind, std::uint64_t id, const AuthBytes& body) {
  return write_header(fd, PacketHeader{kind, StatusCode::ok, 0, id, 0, 0, k_tcp_auth_bytes}) &&
         write_all(fd, body.data(), body.size());
}

// What the server sends until it closes the connection (or the read times
// out): the kinds of its packets, and whether it ended with a close.
struct Received {
  std::vector<PacketKind> kinds;
  bool closed = false;
  bool has(PacketKind kind) const { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); }
};
Received read_until_close(int fd) {
  Received r;
  for (;;) {
    PacketHeaderBytes bytes{};
    const ssize_t got = ::recv(fd, bytes.data(), bytes.size(), MSG_WAITALL);
    if (got == 0 || (got < 0 && errno == ECONNRESET)) {
      r.closed = true;
      return r;
    }
    if (got != static_cast<ssize_t>(bytes.size())) return r;  // timed out: still open
    Result<PacketHeader> h = decode_packet_header(bytes);
    if (!h.ok()) return r;
    r.kinds.push_back(h->kind);
    std::vector<std::byte> body(h->length <= k_tcp_auth_bytes ? h->length : 0);
    if (!body.empty() && !read_exact(fd, body.data(), body.size())) return r;
  }
}

TcpPreauthUsage usage_of(const Transport& t) {
  std::optional<TcpPreauthUsage> u = tcp_preauth_usage(t);
  EXPECT_TRUE(u.has_value());
  return u.value_or(TcpPreauthUsage{});
}

// Waits (bounded) until the server holds no connection whose peer has not proven itself.
bool preauth_drained(const Transport& server) {
  for (int i = 0; i < 1000; ++i) {
    if (usage_of(server).connections == 0) return true;
    ::usleep(5'000);
  }
  return false;
}

// v2 answered every challenge from anyone at once: a flood of 72-byte
// challenges queued a proof each (54 -> 222 MB) and made the node an HMAC
// oracle. Now the acceptor signs nothing before the connector proved itself,
// and a second challenge closes the connection, logged with the address.
TEST(TcpAuth, AChallengeFloodIsClosedAfterTheFirstChallengeAndGetsNoProof) {
  LogSink server_log;
  TransportConfig config = secret_config(10, k_secret, &server_log);
  config.socket_buffer_bytes = k_min_socket_buffer_bytes;  // proofs would pile up in the node, not the kernel
  auto server = make(config);
  ASSERT_TRUE(server);
  std::string my_address;
  Fd c = raw_connect(*server, 0, &my_address);
  ASSERT_GE(c.get(), 0);
  AuthBytes nonce{};
  ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::challenge, 5, nonce));
  ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::challenge, 5, nonce));
  const Received got = read_until_close(c.get());
  EXPECT_TRUE(got.closed) << "a second challenge closes the connection";
  EXPECT_FALSE(got.has(PacketKind::proof)) << "the node signed a stranger's challenge";
  EXPECT_TRUE(server_log.contains("refused unauthenticated peer " + my_address + ": a second challenge"));
  // A flood that never reads: at most one byte past the bound is read, nothing is signed or queued for it.
  Fd flood = raw_connect(*server);
  ASSERT_GE(flood.get(), 0);
  for (int i = 0; i < 2'000; ++i) {
    if (!write_auth_packet(flood.get(), PacketKind::challenge, 5, nonce)) break;  // closed under it: refused
  }
  ASSERT_TRUE(preauth_drained(*server));
  const TcpPreauthUsage u = usage_of(*server);
  EXPECT_EQ(u.queued_bytes, 0u);
  EXPECT_LE(u.peak_connection_queued_bytes, k_tcp_auth_packet_bytes) << "only the node's own challenge was queued";
  EXPECT_EQ(u.handshake_bytes, 0u) << "given back when the connections closed";
}

TEST(TcpAuth, TheAcceptorProvesItselfOnlyAfterTheConnectorDid) {
  auto server = make(secret_config(10, k_secret));
  ASSERT_TRUE(server);
  Fd c = raw_connect(*server);
  ASSERT_GE(c.get(), 0);
  auto challenge = read_header(c.get());
  ASSERT_TRUE(challenge && challenge->kind == PacketKind::challenge);
  AuthBytes server_nonce{};
  ASSERT_TRUE(read_exact(c.get(), server_nonce.data(), server_nonce.size()));
  AuthBytes mine{};
  mine[0] = std::byte{42};
  ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::challenge, 5, mine));
  timeval short_wait{0, 300'000};
  ::setsockopt(c.get(), SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof short_wait);
  char byte = 0;
  EXPECT_LT(::recv(c.get(), &byte, 1, 0), 0) << "nothing, no proof, before this side proved itself";
  set_read_timeout(c.get());
  ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::proof, 5,
                                auth_proof(k_secret, AuthRole::connector, server_nonce, mine, 5)));
  auto proof = read_header(c.get());
  ASSERT_TRUE(proof && proof->kind == PacketKind::proof);
  AuthBytes server_proof{};
  ASSERT_TRUE(read_exact(c.get(), server_proof.data(), server_proof.size()));
  EXPECT_TRUE(auth_proof_matches(auth_proof(k_secret, AuthRole::acceptor, server_nonce, mine, 10), server_proof));
}

TEST(TcpAuth, PreauthBytesPastTheBoundAreRefusedAndLoggedWithTheAddress) {
  LogSink server_log;
  auto server = make(secret_config(10, k_secret, &server_log));
  ASSERT_TRUE(server);
  std::string my_address;
  Fd c = raw_connect(*server, 0, &my_address);
  ASSERT_GE(c.get(), 0);
  ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::challenge, 5, AuthBytes{}));
  std::vector<std::byte> rest(4096, std::byte{0x5a});
  write_all(c.get(), rest.data(), rest.size());
  const Received got = read_until_close(c.get());
  EXPECT_TRUE(got.closed);
  EXPECT_FALSE(got.has(PacketKind::proof));
  EXPECT_TRUE(server_log.contains("refused unauthenticated peer " + my_address + ": pre-auth bytes over " +
                                  std::to_string(k_tcp_max_preauth_rx_bytes)));
  ASSERT_TRUE(preauth_drained(*server));
  EXPECT_EQ(usage_of(*server).rx_bytes, 0u);
}

// Connections in their hand-shake on all listeners together hold at most
// accept.max_handshake_bytes; more are refused at once, logged with the address.
TEST(TcpAuth, ManyUnauthenticatedConnectionsStayWithinTheHandshakeMemoryBound) {
  LogSink server_log;
  TransportConfig config = secret_config(10, k_secret, &server_log);
  config.rail_addresses = {"127.0.0.1:0", "127.0.0.1:0"};
  constexpr std::size_t k_admitted = 4;
  config.accept.max_handshake_bytes = k_admitted * k_tcp_handshake_connection_bytes;
  auto server = make(config);
  ASSERT_TRUE(server);
  std::vector<Fd> raw;
  std::size_t refused = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    raw.push_back(raw_connect(*server, i % 2));
    ASSERT_GE(raw.back().get(), 0);
    write_auth_packet(raw.back().get(), PacketKind::challenge, 5, AuthBytes{});
    auto h = read_header(raw.back().get());  // the server's challenge, or the refusal's close
    if (!h) ++refused;
  }
  EXPECT_EQ(refused, 10 - k_admitted);
  const TcpPreauthUsage u = usage_of(*server);
  EXPECT_EQ(u.connections, k_admitted);
  EXPECT_LE(u.handshake_bytes, config.accept.max_handshake_bytes);
  EXPECT_TRUE(
      server_log.contains("max_handshake_bytes (" + std::to_string(config.accept.max_handshake_bytes) + ") reached"));
  EXPECT_TRUE(server_log.contains("refused a connection from 127.0.0.1:"));
  raw.clear();
  ASSERT_TRUE(preauth_drained(*server));
  EXPECT_EQ(usage_of(*server).handshake_bytes, 0u) << "given back when they closed";
  auto client = make(secret_config(20, k_secret));
  ASSERT_TRUE(client);
  EventPump cp(*client);
  ASSERT_TRUE(client->connect(server->listen_address()).ok());
  EXPECT_TRUE(cp.wait_kind<PeerUp>()) << "a real peer is served once the flood is gone";
}

// Issue 47: a burst of refusals folded into one line kept only a count
// ("closed by the remote side (4 more since the last line)").
TEST(TcpAuth, FoldedRefusalLinesKeepTheCountOfEachReason) {
  LogSink server_log;
  TransportConfig config = secret_config(10, k_secret, &server_log);
  config.accept.log_every_events = 4;
  config.accept.log_interval_ms = k_max_accept_limit_ms;
  auto server = make(config);
  ASSERT_TRUE(server);
  const auto refuse = [&](int how) {
    Fd c = raw_connect(*server);
    ASSERT_GE(c.get(), 0);
    if (how > 0) {
      ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::challenge, 5, AuthBytes{}));
      std::vector<std::byte> more(how == 1 ? k_tcp_auth_packet_bytes : 1000);
      const PacketHeaderBytes second =
          encode_packet_header(PacketHeader{PacketKind::challenge, StatusCode::ok, 0, 5, 0, 0, k_tcp_auth_bytes});
      std::copy(second.begin(), second.end(), more.begin());
      write_all(c.get(), more.data(), more.size());
      read_until_close(c.get());
    } else {
      EXPECT_TRUE(read_header(c.get()));  // the server's challenge, read: a clean close, not a reset
      AuthBytes nonce{};
      EXPECT_TRUE(read_exact(c.get(), nonce.data(), nonce.size()));
      c.reset();  // closed by the remote side
    }
    ASSERT_TRUE(preauth_drained(*server));
  };
  refuse(0);  // logged
  refuse(1);  // folded: a second challenge
  refuse(1);
  refuse(2);  // folded: pre-auth bytes over the bound
  refuse(0);  // logged, with the counts of the folded three
  EXPECT_TRUE(
      server_log.contains("closed by the remote side (3 more since the last line: 2 second challenge, 1 "
                          "pre-auth bytes over " +
                          std::to_string(k_tcp_max_preauth_rx_bytes) + ")"));
}

// The connector's side: a listener that sends two challenges is refused too.
TEST(TcpAuth, AListenerSendingASecondChallengeLosesThePeer) {
  FakeListener fake;
  auto client = make(secret_config(20, k_secret));
  ASSERT_TRUE(client);
  EventPump cp(*client);
  PeerAddress address;
  address.rails = {fake.address};
  ASSERT_TRUE(client->connect(address).ok());
  pollfd pfd{fake.fd.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, k_fake_read_timeout_s * 1000), 1);
  Fd c(::accept4(fake.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::challenge, 9, AuthBytes{}));
  ASSERT_TRUE(write_auth_packet(c.get(), PacketKind::challenge, 9, AuthBytes{}));
  auto down = cp.wait_kind<PeerDown>();
  ASSERT_TRUE(down);
  EXPECT_NE(down->reason.message().find("a second challenge"), std::string::npos) << down->reason.message();
}

}  // namespace
}  // namespace sluice::transport::tcp
