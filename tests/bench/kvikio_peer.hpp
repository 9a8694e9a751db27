// KvikIO as bench_gpu's peer (issue 20, P6): the read a user would pick to
// move a file into GPU memory, through KvikIO's C++ API (FileHandle::pread
// into device memory) from the libkvikio-cu13 wheel. Built only when CMake
// finds the wheel (SLUICE_KVIKIO_ROOT, see tests/CMakeLists.txt); this
// header has no KvikIO types, so gpu_bench.cpp builds either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/common/status.hpp"

namespace sluice::bench {

struct KvikioRead {
  std::string path;
  bool direct = false;  // O_DIRECT (KvikIO: auto_direct_io_read on), else the page cache
  std::byte* gpu_dst = nullptr;
  std::uint64_t bytes = 0;       // from file offset 0
  unsigned threads = 0;          // its thread pool's size; 0: KvikIO's own default
  std::uint64_t task_bytes = 0;  // its task size; 0: KvikIO's own default
  bool compat = true;            // compat mode ON (POSIX + its bounce buffers); false: OFF (cuFile)
};

struct KvikioOutcome {
  double seconds = 0;
  std::string settings;  // what KvikIO ran with: threads, task size, bounce buffer, compat, direct
};

// Whether the peer was built in, and KvikIO's version or why not.
bool kvikio_built();
std::string kvikio_note();

// One read of `bytes` into GPU memory with the settings asked for; the
// calling thread waits for it. Errors: what KvikIO threw, or unavailable
// when the peer was not built.
Result<KvikioOutcome> kvikio_read_to_gpu(const KvikioRead& read);

}  // namespace sluice::bench
