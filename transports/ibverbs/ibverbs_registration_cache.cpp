#include "transports/ibverbs/ibverbs_registration_cache.hpp"

#include <limits>

namespace sluice::transport::ibverbs {

RegistrationCache::RegistrationCache(RegistrationBackend& backend, std::size_t max_registrations)
    : backend_(backend), max_registrations_(max_registrations) {}

RegistrationCache::~RegistrationCache() {
  for (auto& [id, entry] : entries_) backend_.deregister_memory(entry.handle);
}

Result<Registration> RegistrationCache::acquire(const RegistrationRequest& request) {
  if (request.bytes == 0 || request.bytes > std::numeric_limits<std::uint64_t>::max() - request.address) {
    return error(StatusCode::invalid_argument, "ibverbs registration: range [" + std::to_string(request.address) +
                                                   ", +" + std::to_string(request.bytes) + ") is empty or overflows");
  }
  if (request.kind == RegionKind::dmabuf && request.dmabuf_fd < 0) {
    return error(StatusCode::invalid_argument, "ibverbs registration: a dmabuf region needs the exporter's fd");
  }
  RegistrationRequest widened = request;
  if (request.kind != RegionKind::dmabuf) {
    const std::uint64_t first = request.address & ~(k_ibv_registration_page_bytes - 1);
    const std::uint64_t end = request.address + request.bytes;
    std::uint64_t last = end;
    if (end % k_ibv_registration_page_bytes != 0) {
      last = end - end % k_ibv_registration_page_bytes;
      if (last > std::numeric_limits<std::uint64_t>::max() - k_ibv_registration_page_bytes) {
        return error(StatusCode::invalid_argument, "ibverbs registration: range end overflows when widened");
      }
      last += k_ibv_registration_page_bytes;
    }
    widened.address = first;
    widened.bytes = last - first;
  }
  for (auto& [id, entry] : entries_) {
    const RegistrationRequest& have = entry.request;
    if (have.domain != request.domain || have.kind != request.kind) continue;
    if (request.kind == RegionKind::dmabuf &&
        (have.dmabuf_fd != request.dmabuf_fd || have.dmabuf_offset != request.dmabuf_offset ||
         have.address != request.address || have.bytes != request.bytes)) {
      continue;
    }
    if (widened.address >= have.address && widened.address + widened.bytes <= have.address + have.bytes) {
      ++entry.users;
      ++hits_;
      return entry.registration;
    }
  }
  if (entries_.size() >= max_registrations_) {
    return error(StatusCode::again, "ibverbs registration: " + std::to_string(entries_.size()) +
                                        " memory regions registered (k_ibv_max_registrations " +
                                        std::to_string(max_registrations_) + ")");
  }
  void* handle = nullptr;
  Result<Registration> made = backend_.register_memory(widened, &handle);
  if (!made.ok()) return made.status();
  ++misses_;
  Entry entry;
  entry.request = widened;
  entry.registration = *made;
  entry.registration.id = next_id_++;
  entry.handle = handle;
  entry.users = 1;
  const Registration out = entry.registration;
  entries_.emplace(out.id, std::move(entry));
  return out;
}

Status RegistrationCache::release(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    return error(StatusCode::not_found, "ibverbs registration: no registration " + std::to_string(id));
  }
  if (--it->second.users == 0) {
    backend_.deregister_memory(it->second.handle);
    entries_.erase(it);
  }
  return ok_status();
}

}  // namespace sluice::transport::ibverbs
