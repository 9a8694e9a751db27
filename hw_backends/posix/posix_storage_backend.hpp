// The POSIX storage backend: pread/pwrite on chunk files from a small pool of
// worker threads, O_DIRECT where the file system and the request allow it
// (see DirectIoMode in hw_backends/storage_backend.hpp), fdatasync on sync
// writes. It works on every Linux file system, which makes it the reference
// the uring backend is checked against and the fallback where io_uring is
// not available (KvikIO's POSIX path plays the same role for cuFile).
#pragma once

#include <cstdint>
#include <memory>

#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {

// Worker threads per target: the queue depth, up to this many. Blocking
// syscalls need one thread per request in flight; past 16 the CPU cost of the
// threads outweighs what one target gains (fio's psync engine with numjobs
// shows the same knee).
inline constexpr std::uint32_t k_posix_max_workers = 16;

Result<std::unique_ptr<StorageBackend>> make_posix_storage_backend(const StorageTargetConfig& config);

}  // namespace sluice::hw
