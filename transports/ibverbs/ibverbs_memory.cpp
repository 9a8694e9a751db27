// Memory registration: host and CUDA (peer memory) regions with ibv_reg_mr,
// dma-buf regions with ibv_reg_dmabuf_mr, on every device behind a rail;
// deregistration with revocation at the peers that use the region.
#if SLUICE_HAVE_IBVERBS
#include <cerrno>
#include <cstring>

#include "transports/ibverbs/ibverbs_transport_impl.hpp"

namespace sluice::transport::ibverbs::detail {
namespace {

// Remote peers write (put) and read (get) the region; the HCA writes it for
// local READs. Relaxed ordering is an optional flag (ignored where the
// device lacks it), as NCCL sets it (NCCL_IB_PCI_RELAXED_ORDERING).
constexpr int k_access =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_RELAXED_ORDERING;

std::string errno_text(int err) { return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")"; }

}  // namespace

Result<Registration> VerbsRegistrationBackend::register_memory(const RegistrationRequest& request, void** handle) {
  if (request.domain >= devices_.size()) {
    return error(StatusCode::internal, "ibverbs registration: no device " + std::to_string(request.domain));
  }
  Device& d = *devices_[request.domain];
  ibv_mr* mr = nullptr;
  if (request.kind == RegionKind::dmabuf) {
#if SLUICE_HAVE_IBV_REG_DMABUF_MR
    mr = ibv_reg_dmabuf_mr(d.pd, request.dmabuf_offset, request.bytes, request.address, request.dmabuf_fd, k_access);
#else
    return error(StatusCode::unavailable, "ibverbs registration: this rdma-core has no ibv_reg_dmabuf_mr");
#endif
  } else {
    mr = ibv_reg_mr(d.pd, reinterpret_cast<void*>(request.address), request.bytes, k_access);
  }
  if (mr == nullptr) {
    const int err = errno;
    std::string why = "ibverbs registration of " + std::string(to_string(request.kind)) + " range [" +
                      std::to_string(request.address) + ", +" + std::to_string(request.bytes) + ") on " + d.name +
                      ": " + errno_text(err);
    if (request.kind == RegionKind::cuda) why += " (GPU memory needs nvidia-peermem loaded)";
    if (request.kind == RegionKind::dmabuf && err == EOPNOTSUPP) why += " (kernel or driver without dma-buf support)";
    return error(err == ENOMEM ? StatusCode::again : StatusCode::unavailable, why);
  }
  *handle = mr;
  Registration r;
  r.address = request.address;
  r.bytes = request.bytes;
  r.lkey = mr->lkey;
  r.rkey = mr->rkey;
  return r;
}

void VerbsRegistrationBackend::deregister_memory(void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); }

Status IbverbsTransportImpl::add_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind, int dmabuf_fd,
                                        std::uint64_t dmabuf_offset) {
  if (!caps_.reaches(kind)) {
    return error(StatusCode::unavailable, "ibverbs register_region: " + std::string(to_string(kind)) +
                                              " memory is not reachable here (declared: " + caps_.to_string() + ")");
  }
  if (bytes.empty()) return error(StatusCode::invalid_argument, "ibverbs register_region: empty range");
  std::lock_guard lock(mu_);
  if (regions_.contains(key)) {
    return error(StatusCode::already_exists, "ibverbs register_region: key " + std::to_string(key) + " is taken");
  }
  auto region = std::make_shared<Region>();
  region->key = key;
  region->bytes = bytes;
  region->kind = kind;
  region->dmabuf_fd = dmabuf_fd;
  region->dmabuf_offset = dmabuf_offset;
  region->per_device.resize(devices_.size());
  for (auto& d : devices_) {
    RegistrationRequest req{d->index,     reinterpret_cast<std::uint64_t>(bytes.data()), bytes.size(), kind, dmabuf_fd,
                            dmabuf_offset};
    Result<Registration> reg = registrations_->acquire(req);
    if (!reg.ok()) {
      for (std::uint32_t i = 0; i < d->index; ++i) registrations_->release(region->per_device[i].id).ignore();
      return reg.status();
    }
    region->per_device[d->index] = *reg;
  }
  regions_.emplace(key, std::move(region));
  return ok_status();
}

Status IbverbsTransportImpl::register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) {
  if (kind == RegionKind::dmabuf && caps_.reaches(kind)) {
    return error(StatusCode::invalid_argument,
                 "ibverbs register_region: a dmabuf region needs the exporter's fd: use "
                 "register_dmabuf_region");
  }
  return add_region(key, bytes, kind, -1, 0);
}

Status IbverbsTransportImpl::register_dmabuf_region(std::uint64_t key, std::span<std::byte> device_bytes, int dmabuf_fd,
                                                    std::uint64_t dmabuf_offset) {
  if (dmabuf_fd < 0 && caps_.reaches(RegionKind::dmabuf)) {  // undeclared: add_region says unavailable
    return error(StatusCode::invalid_argument, "ibverbs register_dmabuf_region: fd " + std::to_string(dmabuf_fd));
  }
  return add_region(key, device_bytes, RegionKind::dmabuf, dmabuf_fd, dmabuf_offset);
}

Status IbverbsTransportImpl::deregister_region(std::uint64_t key) {
  std::unique_lock lock(mu_);
  auto it = regions_.find(key);
  if (it == regions_.end()) {
    return error(StatusCode::not_found, "ibverbs deregister_region: no region with key " + std::to_string(key));
  }
  std::shared_ptr<Region> region = it->second;
  regions_.erase(it);
  // Peers that learned the rkey may still write or read: revoke and wait for
  // their acks (or their loss) before the MR goes. A node granted the key
  // may hold it on either direction's connections (it imports it on the peer
  // it transfers through, which may be its own connection to us): every
  // live peer of that node is asked. One that has not said who it is yet
  // (no hello) has moved no bytes with the key: its first transfer would
  // meet the deregistered MR and fail with a remote access error.
  std::set<PeerId> revoke_at = region->exported_to;
  if (!region->granted_to.empty()) {
    for (const auto& [id, peer] : peers_) {
      if (region->granted_to.contains(peer->remote_id)) revoke_at.insert(id);
    }
  }
  for (PeerId peer : revoke_at) {
    if (live_peer(peer) == nullptr) continue;
    region->awaiting_acks.insert(peer);
    send_simple(peer, ControlKind::region_revoke, key);
  }
  if (!region->awaiting_acks.empty()) {
    revoking_[key] = region;
    revoke_acked_.wait(lock, [&] { return region->awaiting_acks.empty() || stop_; });
    revoking_.erase(key);
  }
  for (const Registration& r : region->per_device) {
    if (r.id != 0) registrations_->release(r.id).ignore();  // ids come from acquire(): release cannot miss
  }
  return ok_status();
}

Result<RemoteRegionDesc> IbverbsTransportImpl::export_region(std::uint64_t key, std::uint32_t rail, PeerId peer) {
  std::lock_guard lock(mu_);
  if (rail >= rail_device_.size()) {
    return error(StatusCode::invalid_argument,
                 "ibverbs export_region: rail " + std::to_string(rail) + " of " + std::to_string(rail_device_.size()));
  }
  auto it = regions_.find(key);
  if (it == regions_.end()) {
    return error(StatusCode::not_found, "ibverbs export_region: no region with key " + std::to_string(key));
  }
  if (live_peer(peer) == nullptr) {
    return error(StatusCode::unavailable, "ibverbs export_region: no live peer " + std::to_string(peer));
  }
  Region& region = *it->second;
  region.exported_to.insert(peer);
  const Registration& reg = region.per_device[rail_device_[rail]];
  return RemoteRegionDesc{reinterpret_cast<std::uint64_t>(region.bytes.data()), reg.rkey, region.bytes.size()};
}

Status IbverbsTransportImpl::import_region(PeerId peer, std::uint32_t rail, std::uint64_t remote_key,
                                           const RemoteRegionDesc& desc) {
  std::lock_guard lock(mu_);
  if (live_peer(peer) == nullptr) {
    return error(StatusCode::unavailable, "ibverbs import_region: no live peer " + std::to_string(peer));
  }
  if (rail >= rail_addresses_.size()) {
    return error(StatusCode::invalid_argument, "ibverbs import_region: rail " + std::to_string(rail));
  }
  if (!prime_remote_key(peer, rail, remote_key, desc)) {
    return error(StatusCode::again, "ibverbs import_region: k_ibv_max_cached_remote_regions entries all in use");
  }
  return ok_status();
}

bool IbverbsTransportImpl::prime_remote_key(PeerId peer, std::uint32_t rail, std::uint64_t key,
                                            const RemoteRegionDesc& desc) {
  RemoteKeyCache::Primed primed = remote_keys_.prime(peer, rail, key, desc);
  if (!primed.stored) return false;
  for (const RemoteKeyCache::Waiter& w : primed.waiters) {
    auto op = ops_.find(w.op);
    if (op == ops_.end()) {
      remote_keys_.finished(w.use);
      continue;
    }
    op->second.use = w.use;
    op->second.remote = desc;
    start_op(op->second);
  }
  return true;
}

Result<RemoteRegionAccess> IbverbsTransportImpl::remote_access(std::uint64_t key, std::uint32_t rail,
                                                               std::uint64_t grantee_id) {
  std::lock_guard lock(mu_);
  if (rail >= rail_device_.size()) {
    return error(StatusCode::invalid_argument,
                 "ibverbs remote_access: rail " + std::to_string(rail) + " of " + std::to_string(rail_device_.size()));
  }
  auto it = regions_.find(key);
  if (it == regions_.end()) {
    return error(StatusCode::not_found, "ibverbs remote_access: no region with key " + std::to_string(key));
  }
  Region& region = *it->second;
  region.granted_to.insert(grantee_id);
  const Registration& reg = region.per_device[rail_device_[rail]];
  return RemoteRegionAccess{reinterpret_cast<std::uint64_t>(region.bytes.data()), reg.rkey, region.bytes.size()};
}

IbverbsTransport::KeyStats IbverbsTransportImpl::key_stats() const {
  std::lock_guard lock(mu_);
  return KeyStats{remote_keys_.queries(), remote_keys_.primes()};
}

}  // namespace sluice::transport::ibverbs::detail
#endif
