#include "hw_backends/gds/cufile_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "hw_backends/cuda/bounce_to_gpu.hpp"
#include "hw_backends/cuda/cuda_device.hpp"

#ifdef SLUICE_HAVE_CUFILE
#include <cuda_runtime_api.h>
#include <cufile.h>
#endif

namespace sluice::hw::gds {
namespace {

using Clock = std::chrono::steady_clock;

#ifdef SLUICE_HAVE_CUFILE
std::string cufile_error_text(CUfileError_t e) {
  std::string text =
      std::string(CUFILE_ERRSTR(e.err)) + " (cuFile error " + std::to_string(static_cast<int>(e.err)) + ")";
  if (IS_CUDA_ERR(e)) text += ", CUDA driver error " + std::to_string(static_cast<int>(e.cu_err));
  return text;
}

// cuFileDriverOpen once per process; the driver stays open (KvikIO keeps it
// open for the process's life too: closing and reopening costs ~ms and races).
Status open_driver_once() {
  static std::once_flag once;
  static Status opened;
  std::call_once(once, [] {
    const CUfileError_t e = cuFileDriverOpen();
    opened = e.err == CU_FILE_SUCCESS ? ok_status() : error(StatusCode::unavailable, cufile_error_text(e));
  });
  return opened;
}
#endif

}  // namespace

#ifdef SLUICE_HAVE_CUFILE

bool cufile_built() { return true; }
std::string_view cufile_build_note() { return "built with cuFile"; }

CuFileProbe probe_cufile(int fd) {
  CuFileProbe p;
  if (Status s = cuda::cuda_available(); !s.ok()) {
    p.driver = s;
    return p;
  }
  p.driver = open_driver_once();
  if (!p.driver.ok()) return p;
  CUfileDrvProps_t props{};
  if (cuFileDriverGetProperties(&props).err == CU_FILE_SUCCESS) {
    p.nvfs_loaded = props.nvfs.major_version != 0 || props.nvfs.minor_version != 0;
  }
  bool forced = false;
  if (cuFileGetParameterBool(CUFILE_PARAM_FORCE_COMPAT_MODE, &forced).err == CU_FILE_SUCCESS) p.compat_forced = forced;
  CUfileDescr_t descr{};
  descr.handle.fd = fd;
  descr.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
  CUfileHandle_t handle = nullptr;
  const CUfileError_t e = cuFileHandleRegister(&handle, &descr);
  if (e.err != CU_FILE_SUCCESS) {
    p.handle = error(StatusCode::unavailable, cufile_error_text(e));
  } else {
    cuFileHandleDeregister(handle);
  }
  return p;
}

#else  // !SLUICE_HAVE_CUFILE

bool cufile_built() { return false; }
std::string_view cufile_build_note() {
  return "built without cuFile (cufile.h/libcufile not found at configure time, or SLUICE_WITH_CUFILE=OFF)";
}

CuFileProbe probe_cufile(int /*fd*/) {
  CuFileProbe p;
  p.driver = error(StatusCode::unavailable, std::string(cufile_build_note()));
  return p;
}

#endif

Result<std::unique_ptr<CuFileReader>> CuFileReader::open(const std::string& path, const CuFileReaderConfig& config,
                                                         cuda::PinnedPool& pool) {
  if (Status s = cuda::check_bounce_config(config.bounce); !s.ok()) return s;
  std::unique_ptr<CuFileReader> r(new CuFileReader());
  r->path_ = path;
  r->config_ = config;
  r->pool_ = &pool;
  r->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (config.direct ? O_DIRECT : 0));
  if (r->fd_ < 0) {
    const int err = errno;
    return error(err == ENOENT ? StatusCode::not_found : StatusCode::io_error,
                 "gds: open " + path + ": " + std::strerror(err));
  }
  r->probe_ = probe_cufile(r->fd_);
  Result<GdsDecision> d = decide_gds_path(config.mode, r->probe_);
  if (!d.ok()) return Status(d.status().code(), "gds: " + path + ": " + d.status().message());
  r->decision_ = std::move(d).value();
#ifdef SLUICE_HAVE_CUFILE
  if (r->decision_.path != GdsPath::own_bounce) {
    CUfileDescr_t descr{};
    descr.handle.fd = r->fd_;
    descr.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    CUfileHandle_t handle = nullptr;
    const CUfileError_t e = cuFileHandleRegister(&handle, &descr);
    if (e.err != CU_FILE_SUCCESS) {
      return error(StatusCode::unavailable,
                   "gds: " + path + ": cuFileHandleRegister failed after the probe: " + cufile_error_text(e));
    }
    r->handle_ = handle;
  }
#endif
  if (config.log) {
    config.log("gds: " + path + ": path " + std::string(to_string(r->decision_.path)) + " (" + r->decision_.reason +
               ")");
  }
  return r;
}

CuFileReader::~CuFileReader() {
#ifdef SLUICE_HAVE_CUFILE
  if (handle_ != nullptr) cuFileHandleDeregister(static_cast<CUfileHandle_t>(handle_));
#endif
  if (fd_ >= 0) ::close(fd_);
}

Result<GdsReadStats> CuFileReader::read_to_gpu(int device, std::byte* gpu_dst, std::uint64_t bytes,
                                               std::uint64_t file_offset) {
  if (decision_.path != GdsPath::own_bounce) return read_cufile(device, gpu_dst, bytes, file_offset);
  const auto start = Clock::now();
  cuda::BounceRead read{path_, config_.direct, file_offset, bytes, device, gpu_dst, config_.staging_numa};
  Result<cuda::BounceStats> b = cuda::bounce_file_to_gpu(read, config_.bounce, *pool_);
  if (!b.ok()) return b.status();
  GdsReadStats s;
  s.bytes = bytes;
  s.bounce = std::move(b).value();
  s.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return s;
}

Result<GdsReadStats> CuFileReader::read_cufile(int device, std::byte* gpu_dst, std::uint64_t bytes,
                                               std::uint64_t file_offset) {
#ifdef SLUICE_HAVE_CUFILE
  const auto start = Clock::now();
  const std::uint64_t chunk = config_.bounce.buffer_bytes;
  const std::uint64_t chunks = (bytes + chunk - 1) / chunk;
  std::atomic<std::uint64_t> next{0};
  std::mutex mu;
  Status first_error;
  auto handle = static_cast<CUfileHandle_t>(handle_);
  const auto worker = [&] {
    Status st = cuda::cuda_status(cudaSetDevice(device), "cudaSetDevice");
    while (st.ok()) {
      const std::uint64_t k = next.fetch_add(1);
      if (k >= chunks) break;
      {
        std::lock_guard lock(mu);
        if (!first_error.ok()) break;
      }
      const std::uint64_t rel = k * chunk;
      const std::uint64_t len = std::min(chunk, bytes - rel);
      std::uint64_t done = 0;
      while (done < len && st.ok()) {
        const ssize_t n = cuFileRead(handle, gpu_dst, len - done, static_cast<off_t>(file_offset + rel + done),
                                     static_cast<off_t>(rel + done));
        if (n < 0) {
          st = error(StatusCode::io_error,
                     "cuFileRead " + path_ + " at " + std::to_string(file_offset + rel + done) + ": " +
                         (n == -1 ? std::string(std::strerror(errno)) : std::string(CUFILE_ERRSTR(n))));
        } else if (n == 0) {
          st = error(StatusCode::io_error,
                     "cuFileRead " + path_ + ": file ended at " + std::to_string(file_offset + rel + done));
        } else {
          done += static_cast<std::uint64_t>(n);
        }
      }
    }
    if (!st.ok()) {
      std::lock_guard lock(mu);
      if (first_error.ok()) first_error = st;
    }
  };
  const std::uint32_t threads = config_.bounce.reader_threads;
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (std::uint32_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (!first_error.ok()) return first_error;
  GdsReadStats s;
  s.bytes = bytes;
  s.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return s;
#else
  (void)device;
  (void)gpu_dst;
  (void)bytes;
  (void)file_offset;
  return error(StatusCode::internal, "gds: cuFile path chosen in a build without cuFile");
#endif
}

}  // namespace sluice::hw::gds
