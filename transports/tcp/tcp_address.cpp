#include "transports/tcp/tcp_address.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>
#include <utility>

namespace sluice::transport::tcp {
namespace {

sockaddr* as_sockaddr(sockaddr_in& a) { return reinterpret_cast<sockaddr*>(&a); }
const sockaddr* as_sockaddr(const sockaddr_in& a) { return reinterpret_cast<const sockaddr*>(&a); }

// A stream socket in the network namespace `netns_fd` (< 0: the caller's).
// A socket belongs to the namespace it was made in, and bind/connect/accept
// on it work there whatever thread calls them, so only socket() has to run
// inside. It runs on a short-lived thread that enters the namespace and
// ends: the caller's thread never changes namespace, so nothing else it
// does (or a failed switch back) can land in the wrong one.
Result<int> stream_socket(int netns_fd, const char* what) {
  if (netns_fd < 0) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return error(StatusCode::io_error, std::string(what) + ": socket(): " + errno_text(errno));
    return fd;
  }
  int fd = -1;
  int err = 0;
  bool entered = false;
  std::thread maker([&] {
    if (::setns(netns_fd, CLONE_NEWNET) != 0) {
      err = errno;
      return;
    }
    entered = true;
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) err = errno;
  });
  maker.join();
  if (!entered)
    return error(StatusCode::unavailable,
                 std::string(what) + ": setns into the node's network namespace: " + errno_text(err));
  if (fd < 0)
    return error(StatusCode::io_error,
                 std::string(what) + ": socket() in the node's network namespace: " + errno_text(err));
  return fd;
}

}  // namespace

Result<int> open_netns(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return error(StatusCode::invalid_argument, "tcp transport: network namespace '" + path + "': " + errno_text(errno));
  }
  const int type = ::ioctl(fd, NS_GET_NSTYPE);
  if (type != CLONE_NEWNET) {
    const int err = errno;
    ::close(fd);
    return error(StatusCode::invalid_argument, "tcp transport: '" + path + "' is not a network namespace" +
                                                   (type < 0 ? " (" + errno_text(err) + ")" : std::string()));
  }
  return fd;
}

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return std::string(std::strerror(err)) + " (" + (name != nullptr ? name : std::to_string(err)) + ")";
}

Result<sockaddr_in> parse_ipv4_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return error(StatusCode::invalid_argument, "tcp address '" + std::string(text) + "': expected a.b.c.d:port");
  }
  const std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port_text.empty() || port > 65535) {
    return error(StatusCode::invalid_argument, "tcp address '" + std::string(text) + "': bad port");
  }
  sockaddr_in out{};
  out.sin_family = AF_INET;
  out.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &out.sin_addr) != 1) {
    return error(StatusCode::invalid_argument,
                 "tcp address '" + std::string(text) + "': '" + host + "' is not an IPv4 address");
  }
  return out;
}

std::string format_address(const sockaddr_in& address) {
  char host[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address.sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(address.sin_port));
}

Status set_socket_buffer_bytes(int fd, std::uint32_t bytes) {
  if (bytes == 0) return ok_status();
  const int value = static_cast<int>(bytes);  // <= k_max_socket_buffer_bytes (checked in create())
  for (const auto& [option, name] : {std::pair{SO_SNDBUF, "SO_SNDBUF"}, std::pair{SO_RCVBUF, "SO_RCVBUF"}}) {
    if (::setsockopt(fd, SOL_SOCKET, option, &value, sizeof value) != 0) {
      return error(StatusCode::io_error, std::string("tcp transport: setsockopt ") + name + " " +
                                             std::to_string(bytes) + " (socket_buffer_bytes): " + errno_text(errno));
    }
  }
  return ok_status();
}

Result<int> listen_socket(sockaddr_in& address, int netns_fd, std::uint32_t socket_buffer_bytes) {
  Result<int> made = stream_socket(netns_fd, "tcp listen");
  if (!made.ok()) return made.status();
  const int fd = *made;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // Before listen(): the window scale a SYN-ACK offers is fixed from the
  // listener's receive buffer, and accepted sockets inherit both sizes.
  if (Status st = set_socket_buffer_bytes(fd, socket_buffer_bytes); !st.ok()) {
    ::close(fd);
    return st;
  }
  if (::bind(fd, as_sockaddr(address), sizeof address) != 0 || ::listen(fd, k_tcp_listen_backlog) != 0) {
    const int err = errno;
    ::close(fd);
    return error(StatusCode::unavailable, "tcp listen on " + format_address(address) + ": " + errno_text(err));
  }
  socklen_t len = sizeof address;
  ::getsockname(fd, as_sockaddr(address), &len);
  return fd;
}

Result<int> connect_socket(const sockaddr_in& local, const sockaddr_in& remote, int netns_fd, bool* in_progress,
                           std::uint32_t socket_buffer_bytes) {
  Result<int> made = stream_socket(netns_fd, "tcp connect");
  if (!made.ok()) return made.status();
  const int fd = *made;
  // Control frames are small and latency-bound; bulk bodies go out in large
  // sendmsg() calls, so Nagle's delay buys nothing.
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Before connect(): the window scale is fixed by the SYN.
  if (Status st = set_socket_buffer_bytes(fd, socket_buffer_bytes); !st.ok()) {
    ::close(fd);
    return st;
  }
  sockaddr_in from = local;
  from.sin_port = 0;
  if (::bind(fd, as_sockaddr(from), sizeof from) != 0) {
    const int err = errno;
    ::close(fd);
    return error(StatusCode::unavailable,
                 "tcp connect: bind to rail address " + format_address(from) + ": " + errno_text(err));
  }
  *in_progress = false;
  if (::connect(fd, as_sockaddr(remote), sizeof remote) != 0) {
    if (errno != EINPROGRESS) {
      const int err = errno;
      ::close(fd);
      return error(StatusCode::unavailable, "tcp connect to " + format_address(remote) + ": " + errno_text(err));
    }
    *in_progress = true;
  }
  return fd;
}

}  // namespace sluice::transport::tcp
