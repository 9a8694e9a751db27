#include <algorithm>

#include "base/registry.hpp"
#include "core/common/byte_size.hpp"
#include "transports/transport.hpp"

namespace sluice::transport {
namespace {

// Function-local so that registrars in other translation units may run in any
// static-initialisation order.
base::Registry<TransportEntry>& registry() {
  static base::Registry<TransportEntry> r("transport");
  return r;
}

}  // namespace

std::size_t Transport::send_messages(PeerId peer, std::span<OutgoingMessage> messages, Status* failure) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (Status sent = send_message(peer, messages[i].tag, std::move(messages[i].frame)); !sent.ok()) {
      *failure = std::move(sent);
      return i;
    }
  }
  return messages.size();
}

Result<RemoteRegionAccess> Transport::remote_access(std::uint64_t key, std::uint32_t /*rail*/,
                                                    std::uint64_t /*grantee_id*/) {
  return error(StatusCode::unavailable, std::string(name()) + " remote_access of region " + std::to_string(key) +
                                            ": this transport reaches remote regions by key alone (no RDMA keys)");
}

Status check_socket_buffer_bytes(const TransportConfig& config, std::string_view transport_name) {
  const std::uint32_t bytes = config.socket_buffer_bytes;
  if (bytes == 0 || (bytes >= k_min_socket_buffer_bytes && bytes <= k_max_socket_buffer_bytes)) return ok_status();
  return error(StatusCode::invalid_argument,
               std::string(transport_name) + " transport: socket_buffer_bytes " + std::to_string(bytes) + " outside " +
                   std::to_string(k_min_socket_buffer_bytes) + ".." + std::to_string(k_max_socket_buffer_bytes) +
                   " (0 = the kernel's default)");
}

std::string_view to_string(RegionKind kind) {
  switch (kind) {
    case RegionKind::host: return "host";
    case RegionKind::cuda: return "cuda";
  }
  return "unknown";
}

bool Capabilities::reaches(RegionKind kind) const {
  return std::find(region_kinds.begin(), region_kinds.end(), kind) != region_kinds.end();
}

std::string Capabilities::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < region_kinds.size(); ++i) {
    if (i > 0) out += ",";
    out += transport::to_string(region_kinds[i]);
  }
  out += "; max message " + format_size(max_message_bytes, SizeSpelling::spaced) + "; max transfer " +
         format_size(max_transfer_bytes, SizeSpelling::spaced);
  std::string ops;
  if (rdma_write) ops += " rdma_write";
  if (rdma_read) ops += " rdma_read";
  if (stream) ops += " stream";
  out += ";" + (ops.empty() ? std::string(" no bulk") : ops);
  out += "; " + std::to_string(max_rails) + " rails x " + std::to_string(max_connections_per_rail) + " connections";
  if (!found.empty()) out += "; " + found;
  return out;
}

bool register_transport(TransportEntry entry) { return registry().add_or_abort(std::move(entry)); }

std::vector<TransportListing> list_transports() { return registry().list_as<TransportListing>(); }

Result<std::vector<std::string>> loopback_rail_addresses(std::string_view name, std::uint32_t rails) {
  Result<TransportEntry> entry = registry().find(name);
  if (!entry.ok() || !entry->loopback_rails) {
    return error(StatusCode::not_found, "transport registry: no loopback addresses for '" + std::string(name) + "'");
  }
  return entry->loopback_rails(rails);
}

Result<std::unique_ptr<Transport>> create_transport(std::string_view name, const TransportConfig& config) {
  return registry().create(name, config);
}

}  // namespace sluice::transport
