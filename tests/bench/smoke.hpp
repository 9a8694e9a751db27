// The smoke form of a benchmark: `make bench-NAME BENCH_SMOKE=1` sets
// SLUICE_BENCH_SMOKE=1 (CONTRIBUTING.md, "Benchmarks"), and the benchmark runs
// its real path at one point, one repeat and its smallest size, in seconds.
// Its RESULT line is printed but says nothing against the goal. ctest
// bench.smoke.<name> (tests/bench/smoke.sh) runs every bench-* target so.
#pragma once

#include <cstdlib>
#include <cstring>

namespace sluice::bench {

inline bool smoke() {
  const char* v = std::getenv("SLUICE_BENCH_SMOKE");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// `full`, or `small` in the smoke form.
template <class T>
T full_or_smoke(T full, T small) {
  return smoke() ? small : full;
}

}  // namespace sluice::bench
