#include "scenarios/lua/script_units.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace sluice::scenario {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  const std::size_t threshold = std::max<std::size_t>(2, name.size() / 3);
  std::string best;
  std::size_t best_distance = threshold + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string format_rate(double bytes_per_s) {
  char buf[64];
  if (bytes_per_s >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.3g GB/s", bytes_per_s / 1e9);
  } else if (bytes_per_s >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3g MB/s", bytes_per_s / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g B/s", bytes_per_s);
  }
  return buf;
}

}  // namespace sluice::scenario
