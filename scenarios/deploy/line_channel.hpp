// LineChannel: newline-framed messages over a stream socket, with deadlines.
// The bootstrap protocol between a launcher (ClusterEmulator, NodeProcess) and its node processes
// sends one JSON document per line (nlohmann::json::dump() never emits a raw
// newline). A line longer than k_max_line_bytes is an error, not a buffer
// that grows without bound.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/common/status.hpp"
#include "scenarios/deploy/bootstrap.hpp"

namespace sluice::emulate {

inline constexpr std::size_t k_max_line_bytes = k_max_bootstrap_item_bytes * 4 + 4096;

class LineChannel {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  LineChannel() = default;
  explicit LineChannel(int fd) : fd_(fd) {}  // takes ownership
  ~LineChannel();
  LineChannel(const LineChannel&) = delete;
  LineChannel& operator=(const LineChannel&) = delete;
  LineChannel(LineChannel&& other) noexcept;
  LineChannel& operator=(LineChannel&& other) noexcept;

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }

  // Writes line + '\n'; timed_out past the deadline, unavailable when the peer is gone.
  Status send_line(const std::string& line, Deadline deadline);
  // The next line (without '\n'); timed_out / unavailable (EOF) / corrupt (too long).
  Result<std::string> read_line(Deadline deadline);

  // For a caller that polls many channels: reads what is there now (call
  // when fd() is readable). Then take_line() yields complete lines.
  // unavailable at EOF, corrupt past k_max_line_bytes.
  Status read_available();
  std::optional<std::string> take_line();

  void close();

 private:
  int fd_ = -1;
  std::string in_;
};

}  // namespace sluice::emulate
