#include <cstdio>
#include <cstdlib>

#include "fuzz_harness.hpp"

namespace sluice::fuzz {

void property_failed(const char* harness, const char* what) {
  std::fprintf(stderr, "fuzz %s: property broken: %s\n", harness, what);
  std::abort();
}

}  // namespace sluice::fuzz
