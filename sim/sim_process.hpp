// Running a simulation in a child process.
//
// SimGrid allows one s4u::Engine per process and cannot reset it, so every
// simulated run after the first in a process (a parameter sweep, a test
// suite, a benchmark comparing two programs) runs in a child: fork, run,
// send a result back through a pipe, exit. The parent's state is untouched.
//
// Contract: run_in_child blocks until the child exits. The child calls
// body() and ends with _exit (no atexit handlers, no destructors of the
// parent's objects run twice), after flushing stdio and, in coverage builds,
// gcov counters. An error returned by body(), a crash or a signal in the
// child comes back as a Status naming it. The caller must not hold threads
// (fork copies only the calling one); sluice's simulation is single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/common/status.hpp"

namespace sluice::sim {

// Limit: bytes a child may send back.
inline constexpr std::size_t k_max_child_result_bytes = std::size_t{256} << 20;

Result<std::string> run_in_child(const std::function<Result<std::string>()>& body);

}  // namespace sluice::sim
