#include "transports/ibverbs/ibverbs_address.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace sluice::transport::ibverbs {

Result<sockaddr_in> parse_rail_address(std::string_view text) {
  const auto bad = [&text](std::string_view why) {
    return error(StatusCode::invalid_argument,
                 "ibverbs address '" + std::string(text) + "': " + std::string(why) + " (want a.b.c.d:port)");
  };
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  const std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port_text.empty() || port > 65535) {
    return bad("bad port");
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) return bad("not an IPv4 address");
  return address;
}

std::string format_rail_address(const sockaddr_in& address) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(address.sin_port));
}

}  // namespace sluice::transport::ibverbs
