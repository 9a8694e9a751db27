// Watches the largest single heap allocation made while a scope is active,
// through a replacement of the global operator new in this test binary. Used
// to show that decoding a forged frame never allocates more than the frame's
// own bytes justify. Single-threaded tests only.
#pragma once

#include <cstddef>

namespace sluice::proto::testing {

class AllocTracker {
 public:
  AllocTracker();
  ~AllocTracker();
  AllocTracker(const AllocTracker&) = delete;
  AllocTracker& operator=(const AllocTracker&) = delete;

  std::size_t largest_bytes() const;
  std::size_t count() const;
};

}  // namespace sluice::proto::testing
