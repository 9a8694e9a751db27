#include "hw_backends/cuda/cuda_chunk_sink.hpp"

#include <string>

#include "hw_backends/cuda/cuda_device.hpp"

#ifdef SLUICE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sluice::hw::cuda {

Result<std::unique_ptr<CudaChunkSink>> CudaChunkSink::create(int device, std::uint32_t lanes, std::uint32_t depth,
                                                             std::byte* dst, std::uint64_t dst_bytes) {
  if (lanes == 0 || depth == 0) {
    return error(StatusCode::invalid_argument, "CUDA chunk sink: lanes and depth must be at least 1");
  }
  if (Status s = check_device(device); !s.ok()) return Status(s.code(), "CUDA chunk sink: " + s.message());
  std::unique_ptr<CudaChunkSink> sink(new CudaChunkSink());
  sink->device_ = device;
  sink->depth_ = depth;
  sink->dst_ = dst;
  sink->dst_bytes_ = dst_bytes;
#ifdef SLUICE_HAVE_CUDA
  if (Status s = cuda_status(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  for (std::uint32_t l = 0; l < lanes; ++l) {
    cudaStream_t stream = nullptr;
    if (Status s = cuda_status(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        !s.ok()) {
      return s;
    }
    sink->streams_.push_back(stream);
    for (std::uint32_t d = 0; d < depth; ++d) {
      cudaEvent_t event = nullptr;
      if (Status s = cuda_status(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventBlockingSync),
                                 "cudaEventCreateWithFlags");
          !s.ok()) {
        return s;
      }
      sink->events_.push_back(event);
    }
  }
  return sink;
#else
  return error(StatusCode::internal, "CUDA chunk sink: check_device passed without CUDA");
#endif
}

CudaChunkSink::~CudaChunkSink() {
#ifdef SLUICE_HAVE_CUDA
  (void)cudaSetDevice(device_);
  for (void* e : events_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(e));
  for (void* s : streams_) (void)cudaStreamDestroy(static_cast<cudaStream_t>(s));
#endif
}

Status CudaChunkSink::begin_lane(std::uint32_t lane) {
  if (lane >= streams_.size())
    return error(StatusCode::invalid_argument, "CUDA chunk sink: no lane " + std::to_string(lane));
#ifdef SLUICE_HAVE_CUDA
  return cuda_status(cudaSetDevice(device_), "cudaSetDevice(" + std::to_string(device_) + ")");
#else
  return ok_status();
#endif
}

Status CudaChunkSink::start_copy(std::uint32_t lane, std::uint32_t slot, std::span<const std::byte> from,
                                 std::uint64_t dst_offset) {
  if (lane >= streams_.size() || slot >= depth_) {
    return error(StatusCode::invalid_argument,
                 "CUDA chunk sink: no lane " + std::to_string(lane) + " slot " + std::to_string(slot));
  }
  if (dst_offset > dst_bytes_ || from.size() > dst_bytes_ - dst_offset) {
    return error(StatusCode::invalid_argument, "CUDA chunk sink: copy of " + std::to_string(from.size()) +
                                                   " bytes to offset " + std::to_string(dst_offset) +
                                                   " passes the destination's " + std::to_string(dst_bytes_));
  }
#ifdef SLUICE_HAVE_CUDA
  auto* stream = static_cast<cudaStream_t>(streams_[lane]);
  if (Status s =
          cuda_status(cudaMemcpyAsync(dst_ + dst_offset, from.data(), from.size(), cudaMemcpyHostToDevice, stream),
                      "cudaMemcpyAsync(H2D " + std::to_string(from.size()) + " bytes to offset " +
                          std::to_string(dst_offset) + ")");
      !s.ok()) {
    return s;
  }
  return cuda_status(cudaEventRecord(static_cast<cudaEvent_t>(events_[std::size_t{lane} * depth_ + slot]), stream),
                     "cudaEventRecord");
#else
  return ok_status();
#endif
}

Status CudaChunkSink::wait_copy(std::uint32_t lane, std::uint32_t slot) {
  if (lane >= streams_.size() || slot >= depth_) {
    return error(StatusCode::invalid_argument,
                 "CUDA chunk sink: no lane " + std::to_string(lane) + " slot " + std::to_string(slot));
  }
#ifdef SLUICE_HAVE_CUDA
  return cuda_status(
      cudaEventSynchronize(static_cast<cudaEvent_t>(events_[std::size_t{lane} * depth_ + slot])),
      "cudaEventSynchronize(copy of lane " + std::to_string(lane) + " slot " + std::to_string(slot) + ")");
#else
  return ok_status();
#endif
}

}  // namespace sluice::hw::cuda
