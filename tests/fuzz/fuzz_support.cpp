#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "fuzz_harness.hpp"

namespace sluice::fuzz {

void property_failed(const char* harness, const char* what) {
  std::fprintf(stderr, "fuzz %s: property broken: %s\n", harness, what);
  std::abort();
}

int check_text(const char* harness, const std::uint8_t* data, std::size_t size, void (*check)(std::string_view)) {
  try {
    check(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception& e) {
    property_failed(harness, (std::string("an exception escaped: ") + e.what()).c_str());
  }
  return 0;
}

}  // namespace sluice::fuzz
