#include <algorithm>
#include <cassert>
#include <map>
#include <mutex>

#include "transports/transport.hpp"

namespace sluice::transport {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, TransportEntry, std::less<>> entries;
};

// Function-local so that registrars in other translation units may run in any
// static-initialisation order.
Registry& registry() {
  static Registry r;
  return r;
}

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1ULL << 30) && bytes % (1ULL << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1ULL << 10) && bytes % (1ULL << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

Result<RemoteRegionAccess> Transport::remote_access(std::uint64_t key, std::uint32_t /*rail*/,
                                                   std::uint64_t /*grantee_id*/) {
  return error(StatusCode::unavailable, std::string(name()) + " remote_access of region " + std::to_string(key) +
                                            ": this transport reaches remote regions by key alone (no RDMA keys)");
}

Status Transport::register_dmabuf_region(std::uint64_t key, std::span<std::byte> /*device_bytes*/, int /*dmabuf_fd*/,
                                         std::uint64_t /*dmabuf_offset*/) {
  return error(StatusCode::unavailable, std::string(name()) + " register_dmabuf_region of region " +
                                            std::to_string(key) + ": this transport does not reach dma-buf memory " +
                                            "(declared: " + capabilities().to_string() + ")");
}

Status check_socket_buffer_bytes(const TransportConfig& config, std::string_view transport_name) {
  const std::uint32_t bytes = config.socket_buffer_bytes;
  if (bytes == 0 || (bytes >= k_min_socket_buffer_bytes && bytes <= k_max_socket_buffer_bytes)) return ok_status();
  return error(StatusCode::invalid_argument, std::string(transport_name) + " transport: socket_buffer_bytes " +
                                                 std::to_string(bytes) + " outside " +
                                                 std::to_string(k_min_socket_buffer_bytes) + ".." +
                                                 std::to_string(k_max_socket_buffer_bytes) +
                                                 " (0 = the kernel's default)");
}

std::string_view to_string(RegionKind kind) {
  switch (kind) {
    case RegionKind::host: return "host";
    case RegionKind::cuda: return "cuda";
    case RegionKind::dmabuf: return "dmabuf";
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
  out += "; max message " + size_text(max_message_bytes) + "; max transfer " + size_text(max_transfer_bytes);
  std::string ops;
  if (rdma_write) ops += " rdma_write";
  if (rdma_read) ops += " rdma_read";
  if (stream) ops += " stream";
  out += ";" + (ops.empty() ? std::string(" no bulk") : ops);
  out += "; " + std::to_string(max_rails) + " rails x " + std::to_string(max_connections_per_rail) + " connections";
  return out;
}

bool register_transport(TransportEntry entry) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  assert(!r.entries.contains(entry.name) && "transport registered twice");
  std::string name = entry.name;
  r.entries.emplace(std::move(name), std::move(entry));
  return true;
}

std::vector<TransportListing> list_transports() {
  // Probes and capability functions run outside the lock: a transport may
  // be built on another (a wrapper asks the registry about its inner one).
  std::vector<std::pair<std::string, TransportEntry>> entries;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    entries.assign(r.entries.begin(), r.entries.end());
  }
  std::vector<TransportListing> out;
  for (const auto& [name, entry] : entries) {
    TransportListing listing;
    listing.name = name;
    const Status probe = entry.probe ? entry.probe() : ok_status();
    listing.available = probe.ok();
    listing.why_unavailable = probe.ok() ? "" : probe.message();
    if (entry.capabilities) listing.capabilities = entry.capabilities();
    out.push_back(std::move(listing));
  }
  return out;
}

Result<std::vector<std::string>> loopback_rail_addresses(std::string_view name, std::uint32_t rails) {
  std::function<std::vector<std::string>(std::uint32_t)> loopback_rails;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.entries.find(name);
    if (it == r.entries.end() || !it->second.loopback_rails) {
      return error(StatusCode::not_found, "transport registry: no loopback addresses for '" + std::string(name) + "'");
    }
    loopback_rails = it->second.loopback_rails;
  }
  return loopback_rails(rails);  // outside the lock, as in list_transports
}

Result<std::unique_ptr<Transport>> create_transport(std::string_view name, const TransportConfig& config) {
  std::function<Result<std::unique_ptr<Transport>>(const TransportConfig&)> create;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.entries.find(name);
    if (it == r.entries.end()) {
      std::string names;
      for (const auto& [known, entry] : r.entries) names += (names.empty() ? "" : ", ") + known;
      return error(StatusCode::not_found, "transport registry: no transport named '" + std::string(name) +
                                              "' (registered: " + (names.empty() ? "none" : names) + ")");
    }
    if (it->second.probe) {
      const Status probe = it->second.probe();
      if (!probe.ok()) {
        return error(StatusCode::unavailable,
                     "transport '" + std::string(name) + "' unavailable: " + probe.message());
      }
    }
    create = it->second.create;
  }
  return create(config);
}

}  // namespace sluice::transport
