// Rail addresses in the ibverbs transport's syntax: "a.b.c.d:port", the IPv4
// address of an RDMA netdev (RoCE) or of IPoIB (InfiniBand), as rdma_cm
// resolves them (rdma_resolve_addr(3)); port 0 in a local address picks a
// free port.
#pragma once

#include <netinet/in.h>

#include <string>
#include <string_view>

#include "core/common/status.hpp"

namespace sluice::transport::ibverbs {

// invalid_argument naming the text when it is not "a.b.c.d:port", port <= 65535.
Result<sockaddr_in> parse_rail_address(std::string_view text);
std::string format_rail_address(const sockaddr_in& address);

}  // namespace sluice::transport::ibverbs
