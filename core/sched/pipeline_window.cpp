#include "core/sched/pipeline_window.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace sluice::sched {

Result<std::uint32_t> window_chunks(double bandwidth_bytes_per_s, TimeNs rtt_ns, std::uint64_t chunk_bytes,
                                    WindowLimits limits) {
  if (!std::isfinite(bandwidth_bytes_per_s) || bandwidth_bytes_per_s <= 0) {
    return error(StatusCode::invalid_argument, "window: bandwidth must be finite and > 0");
  }
  if (rtt_ns < 0) return error(StatusCode::invalid_argument, "window: rtt_ns must be >= 0");
  if (chunk_bytes == 0) return error(StatusCode::invalid_argument, "window: chunk_bytes must be > 0");
  if (limits.min_chunks == 0 || limits.min_chunks > limits.max_chunks ||
      limits.max_chunks > k_max_window_chunks_limit) {
    return error(StatusCode::invalid_argument,
                 "window: limits must satisfy 1 <= min_chunks (" + std::to_string(limits.min_chunks) +
                     ") <= max_chunks (" + std::to_string(limits.max_chunks) + ") <= k_max_window_chunks_limit");
  }
  const double bdp_bytes = bandwidth_bytes_per_s * static_cast<double>(rtt_ns) / 1e9;
  const double chunks = std::ceil(bdp_bytes / static_cast<double>(chunk_bytes)) + 1.0;
  const double clamped =
      std::clamp(chunks, static_cast<double>(limits.min_chunks), static_cast<double>(limits.max_chunks));
  return static_cast<std::uint32_t>(clamped);
}

PipelineWindow::PipelineWindow(std::uint32_t capacity)
    : used_(std::clamp<std::uint32_t>(capacity, 1, k_max_window_chunks_limit), false) {}

Result<std::uint32_t> PipelineWindow::acquire() {
  for (std::uint32_t slot = 0; slot < used_.size(); ++slot) {
    if (!used_[slot]) {
      used_[slot] = true;
      ++in_flight_;
      return slot;
    }
  }
  return error(StatusCode::again, "window: all " + std::to_string(used_.size()) + " slots in flight");
}

Status PipelineWindow::release(std::uint32_t slot) {
  if (slot >= used_.size() || !used_[slot]) {
    return error(StatusCode::invalid_argument, "window: slot " + std::to_string(slot) + " is not in use");
  }
  used_[slot] = false;
  --in_flight_;
  return ok_status();
}

}  // namespace sluice::sched
