#include "core/common/assert.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace sluice {

void assertion_failed(const char* file, int line, const char* condition, std::string_view message) {
  std::string text = std::string("sluice: assertion failed at ") + file + ":" + std::to_string(line) + ": " + condition;
  if (!message.empty()) text += " (" + std::string(message) + ")";
  text += "\n";
  // One write, unbuffered, so the line survives the abort and is not interleaved.
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace sluice
