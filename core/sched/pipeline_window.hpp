// How many chunks one rail keeps in flight, and the slots that hold them.
//
// Size: a sliding window keeps a link busy when the bytes in flight cover one
// round trip (the bandwidth-delay product) plus the chunk on the wire, so
//   window_chunks = ceil(bandwidth x rtt / chunk_bytes) + 1,
// clamped to [min_chunks, max_chunks]. The minimum, 2, is double buffering:
// one chunk transfers while the next is requested. The maximum, 8, is NCCL's
// per-connection pipeline depth (NCCL_STEPS = 8, src/include/device.h); it
// also bounds the connections one rail takes (each in-flight chunk holds one).
//
// PipelineWindow tracks which slots of a window are in use; a service holds
// one per rail. Not thread-safe; no clock.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::sched {

inline constexpr std::uint32_t k_default_min_window_chunks = 2;
inline constexpr std::uint32_t k_default_max_window_chunks = 8;
inline constexpr std::uint32_t k_max_window_chunks_limit = 1024;  // largest max_chunks accepted

struct WindowLimits {
  std::uint32_t min_chunks = k_default_min_window_chunks;
  std::uint32_t max_chunks = k_default_max_window_chunks;
};

// Errors: bandwidth not finite or <= 0, rtt < 0, chunk_bytes == 0, limits
// with min 0, min > max or max > k_max_window_chunks_limit.
Result<std::uint32_t> window_chunks(double bandwidth_bytes_per_s, TimeNs rtt_ns, std::uint64_t chunk_bytes,
                                    WindowLimits limits = {});

class PipelineWindow {
 public:
  // capacity: 1 .. k_max_window_chunks_limit (clamped into that range).
  explicit PipelineWindow(std::uint32_t capacity);

  // The lowest free slot, now in use. again: the window is full.
  Result<std::uint32_t> acquire();
  // Frees a slot. invalid_argument: out of range or not in use.
  Status release(std::uint32_t slot);

  std::uint32_t capacity() const { return static_cast<std::uint32_t>(used_.size()); }
  std::uint32_t in_flight() const { return in_flight_; }

 private:
  std::vector<bool> used_;
  std::uint32_t in_flight_ = 0;
};

}  // namespace sluice::sched
