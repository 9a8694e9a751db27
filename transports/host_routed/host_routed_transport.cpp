#include "transports/host_routed/host_routed_transport.hpp"

#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/common/assert.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/tcp/tcp_transport.hpp"

namespace sluice::transport::host_routed {
namespace {

constexpr std::string_view k_host_field = "host=";

// One rail of this transport's address syntax, split.
struct RailParts {
  std::string tcp;
  std::string shm;   // empty: the peer has no shm side
  std::string host;  // its KEY; empty with a plain tcp address
};

Result<RailParts> split_rail(const std::string& rail) {
  const std::size_t first = rail.find(';');
  if (first == std::string::npos) return RailParts{rail, "", ""};  // tcp alone
  const std::size_t second = rail.find(';', first + 1);
  if (second == std::string::npos || rail.compare(second + 1, k_host_field.size(), k_host_field) != 0) {
    return error(StatusCode::invalid_argument, std::string(k_host_routed_name) + " transport: address \"" + rail +
                                                   "\" is not TCP;SHM;host=KEY nor a tcp address");
  }
  return RailParts{rail.substr(0, first), rail.substr(first + 1, second - first - 1),
                   rail.substr(second + 1 + k_host_field.size())};
}

Result<std::vector<RailParts>> split_address(const PeerAddress& address) {
  std::vector<RailParts> parts;
  for (const std::string& rail : address.rails) {
    Result<RailParts> p = split_rail(rail);
    if (!p.ok()) return p.status();
    parts.push_back(std::move(p).value());
  }
  return parts;
}

// The shm side's PeerIds start here (TransportConfig::first_peer_id), tcp's
// below: an id says its side, and the sides' ids and errors pass unchanged.
constexpr PeerId k_shm_first_peer_id = PeerId{1} << 62;
constexpr bool via_shm(PeerId id) { return id >= k_shm_first_peer_id; }

class HostRoutedTransport final : public Transport {
 public:
  HostRoutedTransport(std::unique_ptr<Transport> tcp, std::unique_ptr<Transport> shm, std::string key,
                      std::function<void(std::string_view)> log)
      : tcp_(std::move(tcp)), shm_(std::move(shm)), key_(std::move(key)), log_(std::move(log)) {
    caps_ = host_routed_capabilities();
  }
  ~HostRoutedTransport() override {
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }

  Status open() {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) return error(StatusCode::io_error, std::string("epoll_create1: ") + std::strerror(errno));
    for (Transport* t : {tcp_.get(), shm_.get()}) {
      if (t == nullptr) continue;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = t->completion_fd();
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, t->completion_fd(), &ev) != 0) {
        return error(StatusCode::io_error, std::string("epoll_ctl: ") + std::strerror(errno));
      }
    }
    return ok_status();
  }

  std::string_view name() const override { return k_host_routed_name; }
  const Capabilities& capabilities() const override { return caps_; }

  PeerAddress listen_address() const override {
    const PeerAddress tcp = tcp_->listen_address();
    if (!shm_) return tcp;
    const PeerAddress shm = shm_->listen_address();
    PeerAddress out;
    for (std::size_t r = 0; r < tcp.rails.size(); ++r) {
      out.rails.push_back(tcp.rails[r] + ";" + shm.rails.at(r) + ";" + std::string(k_host_field) + key_);
    }
    return out;
  }

  Result<PeerId> connect(const PeerAddress& remote) override {
    Result<std::vector<RailParts>> parts = split_address(remote);
    if (!parts.ok()) return parts.status();
    const bool shm = shm_ && !parts->empty() && std::all_of(parts->begin(), parts->end(), [&](const RailParts& p) {
                       return !p.shm.empty() && p.host == key_;
                     });
    PeerAddress sub;
    for (const RailParts& p : *parts) sub.rails.push_back(shm ? p.shm : p.tcp);
    Result<PeerId> id = (shm ? shm_ : tcp_)->connect(sub);
    if (!id.ok()) return id.status();
    SLUICE_ASSERT_MSG(via_shm(*id) == shm,
                      "tcp+shm transport: peer " + std::to_string(*id) + " outside its side's ids");
    if (log_) {
      log_("peer " + std::to_string(*id) + " (" + (sub.rails.empty() ? std::string("no rails") : sub.rails[0]) +
           ") via " + (shm ? "shm: the same host, namespace and user" : "tcp"));
    }
    return id;
  }

  Status disconnect(PeerId peer) override { return of(peer).disconnect(peer); }

  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override {
    if (Status st = tcp_->register_region(key, bytes, kind); !st.ok()) return st;
    if (!shm_) return ok_status();
    Status st = shm_->register_region(key, bytes, kind);
    if (!st.ok()) tcp_->deregister_region(key).ignore();  // all or nothing
    return st;
  }

  Status deregister_region(std::uint64_t key) override {
    Status tcp = tcp_->deregister_region(key);
    Status shm = shm_ ? shm_->deregister_region(key) : ok_status();
    return tcp.ok() ? shm : tcp;
  }

  Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id) override {
    Result<RemoteRegionAccess> tcp = tcp_->remote_access(key, rail, grantee_id);
    if (!tcp.ok() || !shm_) return tcp;
    Result<RemoteRegionAccess> shm = shm_->remote_access(key, rail, grantee_id);
    if (!shm.ok()) return shm.status();
    return tcp;
  }

  [[nodiscard]] Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override {
    return of(peer).send_message(peer, tag, std::move(frame));
  }
  std::size_t send_messages(PeerId peer, std::span<OutgoingMessage> messages, Status* failure) override {
    return of(peer).send_messages(peer, messages, failure);
  }
  [[nodiscard]] Status put(const BulkRequest& request) override { return of(request.peer).put(request); }
  [[nodiscard]] Status get(const BulkRequest& request) override { return of(request.peer).get(request); }

  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override {
    const bool shm_first = shm_ && (shm_turns_.fetch_add(1) % 2 == 1);
    std::size_t taken = 0;
    for (bool shm : {shm_first, !shm_first}) {
      Transport* t = shm ? shm_.get() : tcp_.get();
      if (t == nullptr || taken >= max_events) continue;
      taken += t->poll(out, max_events - taken);
    }
    return taken;
  }

  int completion_fd() const override { return epoll_fd_; }

 private:
  Transport& of(PeerId peer) const {
    if (via_shm(peer) && shm_) return *shm_;
    return *tcp_;  // a shm id without a shm side: tcp answers it unknown
  }

  std::unique_ptr<Transport> tcp_;
  std::unique_ptr<Transport> shm_;  // null: tcp only (TransportConfig::netns given)
  std::string key_;
  std::function<void(std::string_view)> log_;
  Capabilities caps_;
  int epoll_fd_ = -1;
  std::atomic<std::uint64_t> shm_turns_{0};  // poll() calls: odd ones take shm first
};

std::string first_line_of(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

Capabilities host_routed_capabilities() {
  const Capabilities tcp = tcp::tcp_capabilities();
  const Capabilities shm = shm::shm_capabilities();
  Capabilities both;
  for (RegionKind kind : tcp.region_kinds) {
    if (shm.reaches(kind)) both.region_kinds.push_back(kind);
  }
  both.max_message_bytes = std::min(tcp.max_message_bytes, shm.max_message_bytes);
  both.max_transfer_bytes = std::min(tcp.max_transfer_bytes, shm.max_transfer_bytes);
  both.rdma_write = tcp.rdma_write && shm.rdma_write;
  both.rdma_read = tcp.rdma_read && shm.rdma_read;
  both.stream = tcp.stream && shm.stream;
  both.max_rails = std::min(tcp.max_rails, shm.max_rails);
  both.max_connections_per_rail = std::min(tcp.max_connections_per_rail, shm.max_connections_per_rail);
  return both;
}

std::string host_key() {
  struct stat netns {};
  const std::string ns = ::stat("/proc/self/ns/net", &netns) == 0 ? std::to_string(netns.st_ino) : "?";
  std::string boot = first_line_of("/proc/sys/kernel/random/boot_id");
  if (boot.empty()) boot = "?";
  return boot + ":" + ns + ":" + std::to_string(::getuid());
}

Result<std::unique_ptr<Transport>> make_host_routed_transport(const TransportConfig& config) {
  const std::string where = std::string(k_host_routed_name) + " transport: ";
  TransportConfig tcp = config;
  TransportConfig shm = config;
  shm.shared_secret.clear();  // see the top: the kernel vouches for shm peers
  if (config.first_peer_id >= k_shm_first_peer_id) {
    return error(StatusCode::invalid_argument, where + "first_peer_id " + std::to_string(config.first_peer_id) +
                                                   " is in the shm side's range (from 2^62)");
  }
  shm.first_peer_id = k_shm_first_peer_id;
  tcp.rail_addresses.clear();
  shm.rail_addresses.clear();
  for (const std::string& rail : config.rail_addresses) {
    Result<RailParts> parts = split_rail(rail);
    if (!parts.ok()) return parts.status();
    tcp.rail_addresses.push_back(parts->tcp);
    shm.rail_addresses.push_back(parts->shm.empty() ? "shm:auto" : parts->shm);
  }
  Result<std::unique_ptr<Transport>> tcp_side = tcp::make_tcp_transport(tcp);
  if (!tcp_side.ok()) return error(tcp_side.status().code(), where + tcp_side.status().message());
  std::unique_ptr<Transport> shm_side;
  if (config.netns.empty()) {
    Result<std::unique_ptr<Transport>> made = shm::make_shm_transport(shm);
    if (!made.ok()) return error(made.status().code(), where + made.status().message());
    shm_side = std::move(made).value();
  } else if (config.log) {
    config.log(where + "in network namespace " + config.netns + ": every peer via tcp (shm takes no namespace)");
  }
  auto t =
      std::make_unique<HostRoutedTransport>(std::move(tcp_side).value(), std::move(shm_side), host_key(), config.log);
  if (Status st = t->open(); !st.ok()) return error(st.code(), where + st.message());
  return std::unique_ptr<Transport>(std::move(t));
}

namespace {
[[maybe_unused]] const bool k_registered = register_transport(TransportEntry{
    std::string(k_host_routed_name), [] { return ok_status(); }, [] { return host_routed_capabilities(); },
    [](const TransportConfig& config) { return make_host_routed_transport(config); },
    [](std::uint32_t rails) { return std::vector<std::string>(rails, "127.0.0.1:0"); }});
}  // namespace

}  // namespace sluice::transport::host_routed
