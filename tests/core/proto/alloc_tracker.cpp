#include "alloc_tracker.hpp"

#include <cstdlib>
#include <new>

namespace {

bool g_tracking = false;
std::size_t g_largest_bytes = 0;
std::size_t g_count = 0;

}  // namespace

void* operator new(std::size_t bytes) {
  if (g_tracking) {
    ++g_count;
    if (bytes > g_largest_bytes) g_largest_bytes = bytes;
  }
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t /*bytes*/) noexcept { std::free(p); }

namespace sluice::proto::testing {

AllocTracker::AllocTracker() {
  g_largest_bytes = 0;
  g_count = 0;
  g_tracking = true;
}

AllocTracker::~AllocTracker() { g_tracking = false; }

std::size_t AllocTracker::largest_bytes() const { return g_largest_bytes; }
std::size_t AllocTracker::count() const { return g_count; }

}  // namespace sluice::proto::testing
