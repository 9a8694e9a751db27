#include "hw_backends/cuda/bounce_to_gpu.hpp"

#include <vector>

#include "hw_backends/cuda/cuda_chunk_sink.hpp"
#include "hw_backends/cuda/pread_chunk_source.hpp"

namespace sluice::hw::cuda {

Result<BounceStats> bounce_file_to_gpu(const BounceRead& read, const BounceConfig& config, PinnedPool& pool) {
  if (Status s = check_bounce_config(config); !s.ok()) return s;
  if (config.buffer_bytes > pool.limits().buffer_bytes) {
    return error(StatusCode::invalid_argument, "bounce to GPU: buffer_bytes " + std::to_string(config.buffer_bytes) +
                                                   " over the pool's buffers of " +
                                                   std::to_string(pool.limits().buffer_bytes));
  }
  Result<std::unique_ptr<PreadChunkSource>> source = PreadChunkSource::open(read.path, read.direct);
  if (!source.ok()) return source.status();
  Result<std::unique_ptr<CudaChunkSink>> sink =
      CudaChunkSink::create(read.device, config.reader_threads, config.depth, read.gpu_dst, read.bytes);
  if (!sink.ok()) return sink.status();
  std::vector<std::span<std::byte>> staging;
  const std::uint32_t wanted = config.reader_threads * config.depth;
  Status st;
  while (staging.size() < wanted) {
    Result<std::span<std::byte>> b = pool.acquire(read.staging_numa);
    if (!b.ok()) {
      st = b.status();
      break;
    }
    staging.push_back(*b);
  }
  Result<BounceStats> stats = st.ok()
                                  ? run_bounce_pipeline(**source, **sink, staging, config, read.file_offset, read.bytes)
                                  : Result<BounceStats>(st);
  for (const auto& b : staging) pool.release(read.staging_numa, b).ignore();  // lent by this pool just above
  return stats;
}

}  // namespace sluice::hw::cuda
