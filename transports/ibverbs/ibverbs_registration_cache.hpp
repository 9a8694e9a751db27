// Memory registrations of the ibverbs transport, shared and counted: two
// regions over the same pages of one device (a region registered under two
// keys, a sub-range of a buffer already registered) use one memory region
// (MR) of the NIC, and the number of MRs is bounded.
//
// After NCCL's registration cache (net_ib/reg.cc, ncclIbRegMrDmaBufInternal):
// ranges are widened to whole pages, an entry covering a request is reused
// with a reference count, and an MR is deregistered as soon as its last user
// goes. Unused MRs are not kept: memory freed and reallocated at the same
// address would otherwise hit a stale MR that pins the old pages (the
// classical registration-cache hazard that needs malloc hooks to fix).
//
// Not thread-safe: the transport calls it with its lock held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/common/status.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::ibverbs {

// MRs per device (protection domain) held at once. Devices allow far more
// (ibv_device_attr::max_mr, 2^24 on ConnectX), but each MR pins memory and
// costs NIC translation entries; HwEnv registers one region per buffer pool
// and per GPU allocation, a few hundred at most.
inline constexpr std::size_t k_ibv_max_registrations = 4096;
// Page granularity of registrations (x86-64 base pages; ibv_reg_mr pins whole pages anyway).
inline constexpr std::uint64_t k_ibv_registration_page_bytes = 4096;

// What to register: [address, +bytes) of `kind` memory on device `domain`.
// dmabuf: the exporter's fd and the offset of `address` within the dmabuf.
struct RegistrationRequest {
  std::uint32_t domain = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  RegionKind kind = RegionKind::host;
  int dmabuf_fd = -1;
  std::uint64_t dmabuf_offset = 0;
};

// A registered MR as the data path needs it.
struct Registration {
  std::uint64_t id = 0;       // the cache's handle for release()
  std::uint64_t address = 0;  // first byte the MR covers (page-aligned for host/cuda)
  std::uint64_t bytes = 0;
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
};

// The verbs calls behind the cache (ibverbs_memory.cpp: ibv_reg_mr,
// ibv_reg_dmabuf_mr, ibv_dereg_mr); a fake in the tests.
class RegistrationBackend {
 public:
  virtual ~RegistrationBackend() = default;
  // Registers exactly the (already widened) range; returns lkey/rkey and an
  // opaque handle. Errors name the range and the verbs error.
  virtual Result<Registration> register_memory(const RegistrationRequest& request, void** handle) = 0;
  virtual void deregister_memory(void* handle) = 0;
};

class RegistrationCache {
 public:
  RegistrationCache(RegistrationBackend& backend, std::size_t max_registrations);
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // A registration covering the request: an existing one (its count goes up)
  // or a new one of the page-widened range (dmabuf ranges are not widened:
  // the exporter decides their layout). again: k max registrations in use;
  // invalid_argument: empty or overflowing range, or a dmabuf without fd.
  Result<Registration> acquire(const RegistrationRequest& request);
  // Drops one use; the MR is deregistered when none remain. not_found: unknown id.
  Status release(std::uint64_t id);

  std::size_t size() const { return entries_.size(); }
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  struct Entry {
    RegistrationRequest request;  // as registered (widened)
    Registration registration;
    void* handle = nullptr;
    std::uint32_t users = 0;
  };

  RegistrationBackend& backend_;
  std::size_t max_registrations_;
  std::map<std::uint64_t, Entry> entries_;  // by id
  std::uint64_t next_id_ = 1;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

}  // namespace sluice::transport::ibverbs
