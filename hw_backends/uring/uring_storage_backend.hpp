// The io_uring storage backend: reads and writes of chunk files submitted to
// one io_uring per target (liburing), O_DIRECT where the file system and the
// request allow it, registered (fixed) buffers for requests inside buffers
// given to register_buffers(), sync writes as RWF_DSYNC writes. The queue
// depth of the config sizes the ring (as fio's io_uring engine sizes it from
// iodepth, engines/io_uring.c).
//
// Optional: built when liburing is found (SLUICE_HAVE_URING); otherwise, and
// where the kernel or a seccomp policy refuses io_uring_setup, the registry
// lists "uring" as unavailable with the reason.
#pragma once

#include <memory>

#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {

// ok when io_uring can be used here; unavailable naming why not.
Status uring_probe();

Result<std::unique_ptr<StorageBackend>> make_uring_storage_backend(const StorageTargetConfig& config);

}  // namespace sluice::hw
