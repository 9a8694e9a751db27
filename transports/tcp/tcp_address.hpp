// IPv4 socket addresses in the TCP transport's syntax, "a.b.c.d:port", and the
// socket set-up the transport needs (non-blocking listen and connect).
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.hpp"

namespace sluice::transport::tcp {

// Listen backlog: a storage server accepts every client's connections at once
// at start-up (connections_per_rail x rails x clients).
inline constexpr int k_tcp_listen_backlog = 1024;

// invalid_argument naming the text when it is not "a.b.c.d:port" with port <= 65535.
Result<sockaddr_in> parse_ipv4_address(std::string_view text);
std::string format_address(const sockaddr_in& address);

// The network namespace file at `path` (TransportConfig::netns), opened
// read-only: an fd for the socket calls below. invalid_argument naming the
// path when it cannot be opened or is not a network namespace.
Result<int> open_netns(const std::string& path);

// Sets SO_SNDBUF and SO_RCVBUF of `fd` to `bytes` (TransportConfig::
// socket_buffer_bytes); 0 leaves the kernel's defaults and auto-tuning.
// io_error naming the option when the kernel refuses.
Status set_socket_buffer_bytes(int fd, std::uint32_t bytes);

// A bound, listening, non-blocking socket; `address` gets the port actually
// bound. netns_fd >= 0: the socket is made in that network namespace
// (open_netns), else in the calling thread's. socket_buffer_bytes > 0 is set
// (set_socket_buffer_bytes) before listen(): connections it accepts inherit
// the buffer sizes and advertise a window scale that fits them.
Result<int> listen_socket(sockaddr_in& address, int netns_fd, std::uint32_t socket_buffer_bytes = 0);

// A non-blocking socket bound to `local` (port 0) and connecting to `remote`.
// *in_progress says whether the connect is still pending (EINPROGRESS).
// netns_fd as for listen_socket; socket_buffer_bytes > 0 is set before
// connect(), so the SYN already carries the small window.
Result<int> connect_socket(const sockaddr_in& local, const sockaddr_in& remote, int netns_fd, bool* in_progress,
                           std::uint32_t socket_buffer_bytes = 0);

// "connection refused (ECONNREFUSED)" style text for an errno value.
std::string errno_text(int err);

}  // namespace sluice::transport::tcp
