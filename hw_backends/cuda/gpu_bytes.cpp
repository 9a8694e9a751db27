#include "hw_backends/cuda/gpu_bytes.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/proto/crc32c.hpp"
#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/gpu_pattern_kernels.hpp"

#ifdef SLUICE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sluice::hw::cuda {

#ifdef SLUICE_HAVE_CUDA
namespace {

// A stream on `device` for one call, destroyed with it.
class CallStream {
 public:
  ~CallStream() {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  Status open(int device) {
    if (Status s = check_device(device); !s.ok()) return s;
    if (Status s = cuda_status(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
    return cuda_status(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  cudaStream_t get() const { return stream_; }
  Status sync(std::string_view after) const {
    return cuda_status(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after " + std::string(after));
  }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace

Status gpu_fill_pattern(int device, std::byte* dst, std::uint64_t bytes, std::uint64_t seed,
                        std::uint64_t stream_offset) {
  CallStream stream;
  if (Status s = stream.open(device); !s.ok()) return s;
  if (Status s = cuda_status(launch_fill_pattern(dst, bytes, seed, stream_offset, stream.get()), "fill_kernel launch");
      !s.ok()) {
    return s;
  }
  return stream.sync("fill_kernel");
}

Result<std::optional<std::uint64_t>> gpu_find_pattern_mismatch(int device, const std::byte* src, std::uint64_t bytes,
                                                               std::uint64_t seed, std::uint64_t stream_offset) {
  CallStream stream;
  if (Status s = stream.open(device); !s.ok()) return s;
  void* first_raw = nullptr;
  if (Status s = cuda_status(cudaMalloc(&first_raw, sizeof(unsigned long long)), "cudaMalloc(mismatch index)");
      !s.ok()) {
    return s;
  }
  auto* first = static_cast<unsigned long long*>(first_raw);
  unsigned long long host_first = std::numeric_limits<unsigned long long>::max();
  Status st = cuda_status(cudaMemcpyAsync(first, &host_first, sizeof host_first, cudaMemcpyHostToDevice, stream.get()),
                          "cudaMemcpyAsync(mismatch index H2D)");
  if (st.ok()) {
    st = cuda_status(launch_find_pattern_mismatch(src, bytes, seed, stream_offset, first, stream.get()),
                     "mismatch_kernel launch");
  }
  if (st.ok()) {
    st = cuda_status(cudaMemcpyAsync(&host_first, first, sizeof host_first, cudaMemcpyDeviceToHost, stream.get()),
                     "cudaMemcpyAsync(mismatch index D2H)");
  }
  if (st.ok()) st = stream.sync("mismatch_kernel");
  const Status freed = cuda_status(cudaFree(first), "cudaFree(mismatch index)");
  if (!st.ok()) return st;
  if (!freed.ok()) return freed;
  if (host_first == std::numeric_limits<unsigned long long>::max()) return std::optional<std::uint64_t>{};
  return std::optional<std::uint64_t>{host_first};
}

Result<std::uint32_t> gpu_crc32c(int device, const std::byte* src, std::uint64_t bytes) {
  CallStream stream;
  if (Status s = stream.open(device); !s.ok()) return s;
  const std::uint64_t staging_bytes =
      std::min<std::uint64_t>(std::max<std::uint64_t>(bytes, 1), k_gpu_checksum_staging_bytes);
  void* staging = nullptr;
  if (Status s = cuda_status(cudaMallocHost(&staging, staging_bytes), "cudaMallocHost(checksum staging)"); !s.ok()) {
    return s;
  }
  std::uint32_t crc = 0;
  Status st;
  for (std::uint64_t done = 0; done < bytes && st.ok(); done += staging_bytes) {
    const std::uint64_t n = std::min(staging_bytes, bytes - done);
    st = cuda_status(cudaMemcpyAsync(staging, src + done, n, cudaMemcpyDeviceToHost, stream.get()),
                     "cudaMemcpyAsync(checksum D2H)");
    if (st.ok()) st = stream.sync("checksum copy");
    if (st.ok()) crc = proto::crc32c(std::span<const std::byte>(static_cast<const std::byte*>(staging), n), crc);
  }
  const Status freed = cuda_status(cudaFreeHost(staging), "cudaFreeHost(checksum staging)");
  if (!st.ok()) return st;
  if (!freed.ok()) return freed;
  return crc;
}

Status gpu_copy_from_host(int device, std::byte* dst, std::span<const std::byte> src) {
  CallStream stream;
  if (Status s = stream.open(device); !s.ok()) return s;
  if (Status s = cuda_status(cudaMemcpyAsync(dst, src.data(), src.size(), cudaMemcpyHostToDevice, stream.get()),
                             "cudaMemcpyAsync(H2D " + std::to_string(src.size()) + " bytes)");
      !s.ok()) {
    return s;
  }
  return stream.sync("H2D copy");
}

Status gpu_copy_to_host(int device, std::span<std::byte> dst, const std::byte* src) {
  CallStream stream;
  if (Status s = stream.open(device); !s.ok()) return s;
  if (Status s = cuda_status(cudaMemcpyAsync(dst.data(), src, dst.size(), cudaMemcpyDeviceToHost, stream.get()),
                             "cudaMemcpyAsync(D2H " + std::to_string(dst.size()) + " bytes)");
      !s.ok()) {
    return s;
  }
  return stream.sync("D2H copy");
}

Status gpu_copy_on_device(int device, std::byte* dst, const std::byte* src, std::uint64_t bytes) {
  CallStream stream;
  if (Status s = stream.open(device); !s.ok()) return s;
  if (Status s = cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()),
                             "cudaMemcpyAsync(D2D " + std::to_string(bytes) + " bytes)");
      !s.ok()) {
    return s;
  }
  return stream.sync("D2D copy");
}

#else  // !SLUICE_HAVE_CUDA: every call says why

namespace {
Status no_cuda(std::string_view what) {
  return error(StatusCode::unavailable, std::string(what) + ": " + std::string(cuda_build_note()));
}
}  // namespace

Status gpu_fill_pattern(int, std::byte*, std::uint64_t, std::uint64_t, std::uint64_t) {
  return no_cuda("gpu_fill_pattern");
}
Result<std::optional<std::uint64_t>> gpu_find_pattern_mismatch(int, const std::byte*, std::uint64_t, std::uint64_t,
                                                               std::uint64_t) {
  return no_cuda("gpu_find_pattern_mismatch");
}
Result<std::uint32_t> gpu_crc32c(int, const std::byte*, std::uint64_t) { return no_cuda("gpu_crc32c"); }
Status gpu_copy_from_host(int, std::byte*, std::span<const std::byte>) { return no_cuda("gpu_copy_from_host"); }
Status gpu_copy_to_host(int, std::span<std::byte>, const std::byte*) { return no_cuda("gpu_copy_to_host"); }
Status gpu_copy_on_device(int, std::byte*, const std::byte*, std::uint64_t) { return no_cuda("gpu_copy_on_device"); }

#endif

}  // namespace sluice::hw::cuda
