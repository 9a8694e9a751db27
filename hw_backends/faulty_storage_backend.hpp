// FaultyStorageBackend: a StorageBackend decorator that injects the faults a
// real drive and its path to memory have, drawn from a seed (RocksDB's
// FaultInjectionTestFS, FoundationDB's AsyncFileNonDurable: a wrapper around
// the real implementation, so the real code paths run).
//
// Faults, each with a probability per request (set_faults may change them
// while requests run):
// - error: the request fails with io_error and does nothing (a write is
//   turned into a stat of the same object, so the inner backend's completion
//   and completion_fd still carry it; nothing is written);
// - torn write: only a prefix of the buffer, a whole number of 512-byte
//   sectors shorter than the request, reaches the object, and the write
//   fails with io_error (a crash or power cut in the middle of a write; the
//   prefix stays on the drive);
// - read flip: after the inner backend read the bytes and computed their
//   CRC32C, one bit of the caller's buffer is flipped (corruption between
//   the device and memory: a bad DMA, a bus error). The completion keeps the
//   CRC32C of the true bytes, so an end-to-end check (the storage server's
//   reply CRC against the client's checksum of what arrived) catches it;
// - rest flip: a write hands the inner backend the bytes with one bit
//   flipped and reports success with the CRC32C of the bytes it was given
//   (corruption on the way to the drive). A request that carries the CRC32C
//   its bytes must have (StorageRequest::expected_crc32c, what the storage
//   server checked) is refused by the inner backend with corrupt, and that
//   error is reported; one without it is stored flipped, and a later read
//   returns the flipped bytes (the backend's CRCs at rest were computed over
//   them).
//
// Slow disk (FaultControl::set_disk_slowdown): with a slowdown factor f > 1
// every request takes f times as long as the inner backend took: its
// completion is held for (f - 1) x its service time (submit to the inner
// completion) before poll() returns it. So that a caller sleeping on
// completion_fd() wakes for held completions too, completion_fd() is an
// epoll set of the inner backend's fd and a timer armed for the earliest
// held completion (readable when either is).
//
// Thread-safety and the rest of the contract are the inner backend's
// (storage_backend.hpp); the calls it does not change (capabilities,
// io_path, stats, register_buffers) StorageBackendWrapper forwards. Buffers
// of a rest-flipped write are copied (aligned for O_DIRECT) and kept until
// the completion is polled.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/common/rng.hpp"
#include "hw_backends/storage_backend.hpp"
#include "hw_backends/storage_backend_wrapper.hpp"

namespace sluice::hw {

// A torn write keeps whole sectors (the atomic unit of a drive write).
inline constexpr std::uint64_t k_torn_write_sector_bytes = 512;

struct StorageFaultConfig {
  double error_probability = 0.0;
  double torn_write_probability = 0.0;
  double read_flip_probability = 0.0;
  double rest_flip_probability = 0.0;
};

struct StorageFaultStats {
  std::uint64_t errors = 0;
  std::uint64_t torn_writes = 0;
  std::uint64_t read_flips = 0;
  std::uint64_t rest_flips = 0;
  std::uint64_t slowed = 0;  // completions held by a slowdown
};

class FaultyStorageBackend final : public StorageBackendWrapper {
 public:
  // invalid_argument for a probability outside [0, 1] or a null inner backend.
  static Result<std::unique_ptr<FaultyStorageBackend>> create(std::unique_ptr<StorageBackend> inner,
                                                              StorageFaultConfig faults, std::uint64_t seed);
  ~FaultyStorageBackend() override;

  std::string_view name() const override { return name_; }
  [[nodiscard]] Status submit(const StorageRequest& request) override;
  std::size_t poll(std::vector<StorageCompletion>& out, std::size_t max_completions) override;
  int completion_fd() const override { return epoll_fd_; }

  [[nodiscard]] Status set_faults(const StorageFaultConfig& faults);
  StorageFaultStats fault_stats() const;
  // Requests submitted from now on take `factor` times as long (>= 1, finite;
  // else invalid_argument). 1 restores the speed: completions held so far
  // are released at the next poll().
  [[nodiscard]] Status set_slowdown(double factor);
  // Completions held by a slowdown and not yet returned.
  std::size_t held() const;

 private:
  enum class Fate : std::uint8_t { none, error, torn, read_flip, rest_flip };
  struct Pending {
    Fate fate = Fate::none;
    std::span<std::byte> buffer;     // the caller's (read flips land here)
    std::uint32_t asked_crc32c = 0;  // rest flip: the CRC of the bytes the caller gave
    std::uint64_t kept = 0;          // torn: the bytes that reached the object
    std::unique_ptr<std::byte, void (*)(void*)> copy{nullptr, nullptr};  // rest flip: the flipped bytes written
  };
  using Clock = std::chrono::steady_clock;

  FaultyStorageBackend(std::unique_ptr<StorageBackend> inner, StorageFaultConfig faults, std::uint64_t seed);
  Status open_fds();
  // submit() with mu_ held: draws the request's fate and passes it on.
  Status submit_fated(const StorageRequest& request);
  // With mu_ held: moves slowed completions of out[first..] into held_, then
  // appends the due ones (all of them once the slowdown is over), re-arms the timer.
  void hold_and_release(std::vector<StorageCompletion>& out, std::size_t first, std::size_t max_completions);
  void arm_timer(Clock::time_point due);
  static Status check(const StorageFaultConfig& faults);
  Fate draw(const StorageRequest& request);

  std::string name_;
  mutable std::mutex mu_;
  StorageFaultConfig faults_;
  Rng rng_;
  std::map<std::uint64_t, Pending> pending_;  // by cookie, for requests with a fate
  StorageFaultStats stats_;
  double slowdown_ = 1.0;
  std::map<std::uint64_t, Clock::time_point> submitted_;      // by cookie: slowed requests in the inner backend
  std::multimap<Clock::time_point, StorageCompletion> held_;  // by due time
  int epoll_fd_ = -1;                                         // completion_fd(): the inner fd and timer_fd_
  int timer_fd_ = -1;
};

}  // namespace sluice::hw
