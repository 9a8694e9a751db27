// SLUICE_ASSERT: invariants that are checked in every build type.
//
// assert() compiles to nothing under NDEBUG, and the default build
// (RelWithDebInfo), `make test`, the sanitizer and fuzz builds all define it,
// so the state machines' invariants were never checked where they run. These
// macros do not depend on NDEBUG: a violated invariant prints
//   sluice: assertion failed at core/services/rpc.cpp:123: calls_.count(id) == 1 (the message)
// to stderr and aborts (a core dump, a death test's match).
//
// Use them for what must hold whatever the input: a broken invariant is a bug
// in sluice. Bad input (scripts, configs, wire messages) gets a Status error
// naming the place, never an assertion. Conditions must be cheap (they run
// in every build) and free of side effects.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// Prints the failure and aborts. Not for direct use: the macros below.
[[noreturn]] void assertion_failed(const char* file, int line, const char* condition, std::string_view message);

}  // namespace sluice

#define SLUICE_ASSERT(condition) \
  (static_cast<bool>(condition) ? static_cast<void>(0) : ::sluice::assertion_failed(__FILE__, __LINE__, #condition, {}))

// `message` is evaluated only when the condition fails (it may build a string).
#define SLUICE_ASSERT_MSG(condition, message)          \
  (static_cast<bool>(condition) ? static_cast<void>(0) \
                                : ::sluice::assertion_failed(__FILE__, __LINE__, #condition, (message)))
