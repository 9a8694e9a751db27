// Who may reach a registered region through a stream transport
// (TransportConfig::require_grants). The region's owner grants a peer with
// remote_access(key, rail, grantee_id) before it hands that peer the region
// in one of its messages; an incoming put or get from any other peer is
// refused with permission_denied, and the first refusal of each peer is
// logged with its address. The grants go with the region: deregister_region()
// drops them. One-sided transports (ucx) keep their own record, since
// their keys must also be revoked where they are held.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "core/common/status.hpp"
#include "transports/transport.hpp"

namespace sluice::transport {

class RegionGrants {
 public:
  void grant(std::uint64_t grantee_id) { granted_to_.insert(grantee_id); }
  bool allows(std::uint64_t remote_id) const { return granted_to_.contains(remote_id); }

 private:
  std::set<std::uint64_t> granted_to_;
};

// The refusals one transport has logged: each peer's first one is.
class GrantRefusals {
 public:
  // The status for a bulk access of region `key` by `remote_id` (at
  // `remote`, an address for the message) that its owner did not grant.
  // `log` is called for the first refusal of each remote id.
  template <class Log>
  Status refuse(std::string_view transport, std::uint64_t key, std::uint64_t remote_id, std::string_view remote,
                Log&& log) {
    std::string why = std::string(transport) + ": node " + std::to_string(remote_id) + " at " + std::string(remote) +
                      " was not granted region " + std::to_string(key) + " (refused)";
    if (logged_.insert(remote_id).second) log(why);
    return error(StatusCode::permission_denied, std::move(why));
  }

 private:
  std::set<std::uint64_t> logged_;
};

// remote_access() of a stream transport: records that `grantee_id` may
// reach region `key` of `regions` (a map of key -> pointer to a region with
// `grants` and `bytes`) and answers a keyless access of its length. The
// caller holds the transport's lock; `rails` is how many it listens on.
template <class Regions>
Result<RemoteRegionAccess> grant_stream_region(std::string_view transport, Regions& regions, std::uint64_t key,
                                               std::uint32_t rail, std::size_t rails, std::uint64_t grantee_id) {
  if (rail >= rails) {
    return error(StatusCode::invalid_argument, std::string(transport) + " remote_access of region " +
                                                   std::to_string(key) + ": no rail " + std::to_string(rail));
  }
  auto it = regions.find(key);
  if (it == regions.end()) {
    return error(StatusCode::not_found,
                 std::string(transport) + " remote_access: no region with key " + std::to_string(key));
  }
  it->second->grants.grant(grantee_id);
  return RemoteRegionAccess{0, 0, it->second->bytes.size()};
}

}  // namespace sluice::transport
