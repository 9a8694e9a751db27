// The two entry points every fuzz harness in tests/fuzz defines.
//
// LLVMFuzzerTestOneInput is libFuzzer's: it must not crash, hang or leak on
// any input; a broken property aborts (std::abort), which libFuzzer and the
// replay driver both report as a failure with the input saved.
// fuzz_seeds() gives the harness's built-in starting inputs (valid frames,
// real `nvidia-smi topo -m` text, hwloc XML), so the replay driver and a
// fresh libFuzzer corpus start from inputs that reach deep into the parser.
//
// Each harness is linked twice (tests/CMakeLists.txt): with replay_main.cpp
// into fuzz_replay_<name> (every build; ctest runs a bounded, seeded mutation
// loop plus the corpus and regression files), and, in a clang build with
// SLUICE_FUZZ=ON (`make fuzz`), with libFuzzer into fuzz_<name>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace sluice::fuzz {

std::vector<std::vector<std::uint8_t>> fuzz_seeds();

// Aborts with a message when a property does not hold (the fuzzer keeps the input).
[[noreturn]] void property_failed(const char* harness, const char* what);

// An entry point's body for a text reader: `check` on the input as text; an
// exception escaping it is a broken property of `harness`. Returns 0.
int check_text(const char* harness, const std::uint8_t* data, std::size_t size, void (*check)(std::string_view));

}  // namespace sluice::fuzz
