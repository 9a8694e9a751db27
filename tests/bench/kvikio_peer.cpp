#include "tests/bench/kvikio_peer.hpp"

#include <chrono>
#include <exception>
#include <string>

#ifdef SLUICE_HAVE_KVIKIO
#include <kvikio/compat_mode.hpp>
#include <kvikio/defaults.hpp>
#include <kvikio/file_handle.hpp>
#include <kvikio/version_config.hpp>
#endif

namespace sluice::bench {

#ifdef SLUICE_HAVE_KVIKIO

bool kvikio_built() { return true; }

// KvikIO's own defaults, read once before the bench changes them.
struct OwnDefaults {
  unsigned threads = kvikio::defaults::thread_pool_nthreads();
  std::size_t task = kvikio::defaults::task_size();
  std::size_t bounce = kvikio::defaults::bounce_buffer_size();
};

const OwnDefaults& own_defaults() {
  static const OwnDefaults d;
  return d;
}

std::string kvikio_note() {
  const OwnDefaults& d = own_defaults();
  return std::string("KvikIO ") + KvikIO_VERSION +
         " (libkvikio-cu13 wheel); its defaults: " + std::to_string(d.threads) + " thread(s), task " +
         std::to_string(d.task >> 10) + " KiB, bounce buffer " + std::to_string(d.bounce >> 10) + " KiB";
}

Result<KvikioOutcome> kvikio_read_to_gpu(const KvikioRead& read) {
  try {
    const unsigned threads = read.threads != 0 ? read.threads : own_defaults().threads;
    const std::size_t task = read.task_bytes != 0 ? read.task_bytes : own_defaults().task;
    if (kvikio::defaults::thread_pool_nthreads() != threads) kvikio::defaults::set_thread_pool_nthreads(threads);
    kvikio::defaults::set_auto_direct_io_read(read.direct);
    kvikio::FileHandle file(read.path, "r", kvikio::FileHandle::m644,
                            read.compat ? kvikio::CompatMode::ON : kvikio::CompatMode::OFF);
    KvikioOutcome out;
    out.settings = std::to_string(threads) + " thread(s), task " + std::to_string(task >> 10) + " KiB, bounce " +
                   std::to_string(kvikio::defaults::bounce_buffer_size() >> 10) + " KiB, compat " +
                   (file.get_compat_mode_manager().is_compat_mode_preferred() ? "on" : "off") +
                   (read.direct ? ", auto_direct_io_read" : "");
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t got = file.pread(read.gpu_dst, read.bytes, 0, task).get();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (got != read.bytes) {
      return error(StatusCode::io_error,
                   "KvikIO read " + std::to_string(got) + " of " + std::to_string(read.bytes) + " bytes");
    }
    return out;
  } catch (const std::exception& e) {
    return error(StatusCode::unavailable, std::string("KvikIO: ") + e.what());
  }
}

#else

bool kvikio_built() { return false; }

std::string kvikio_note() {
  return "KvikIO peer not built (configure with -DSLUICE_KVIKIO_ROOT=<unpacked libkvikio-cu13 wheel>/libkvikio)";
}

Result<KvikioOutcome> kvikio_read_to_gpu(const KvikioRead&) { return error(StatusCode::unavailable, kvikio_note()); }

#endif

}  // namespace sluice::bench
