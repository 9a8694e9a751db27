// IPv4 socket addresses in the TCP transport's syntax, "a.b.c.d:port", and the
// socket set-up the transport needs (non-blocking listen and connect).
#pragma once

#include <netinet/in.h>

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

// A bound, listening, non-blocking socket; `address` gets the port actually bound.
Result<int> listen_socket(sockaddr_in& address);

// A non-blocking socket bound to `local` (port 0) and connecting to `remote`.
// *in_progress says whether the connect is still pending (EINPROGRESS).
Result<int> connect_socket(const sockaddr_in& local, const sockaddr_in& remote, bool* in_progress);

// "connection refused (ECONNREFUSED)" style text for an errno value.
std::string errno_text(int err);

}  // namespace sluice::transport::tcp
