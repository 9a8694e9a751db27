// RateLimitedLog: which events of a stream of similar ones get a log line.
//
// A flood (a listener out of descriptors, thousands of refused connections a
// second) must not turn into a flood of log lines: issue 24 measured 117,000
// "accept: Too many open files" lines a second. The first event of a stream
// is logged; after it, one line per `interval_ns` or per `every_events`
// events, whichever comes first, and each line says how many events were
// suppressed since the line before (suffix()).
//
// The caller passes the time (any monotonic clock in ns), so tests drive it
// without a real clock. Not thread-safe: the owner's lock guards it (the
// transports' progress state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sluice::base {

class RateLimitedLog {
 public:
  // every_events 0 counts as 1 (every event logged); interval_ns <= 0 means no interval: only the count rule.
  RateLimitedLog(std::uint64_t every_events, std::int64_t interval_ns)
      : every_events_(every_events == 0 ? 1 : every_events), interval_ns_(interval_ns) {}

  // Notes one event at now_ns. A value: log this event now, and say that
  // the value's number of events were suppressed since the previous line.
  // nullopt: suppress it (it is counted for the next line).
  std::optional<std::uint64_t> admit(std::int64_t now_ns) {
    const bool interval_passed = interval_ns_ > 0 && now_ns - last_line_ns_ >= interval_ns_;
    if (!logged_once_ || interval_passed || suppressed_ + 1 >= every_events_) {
      const std::uint64_t suppressed = suppressed_;
      suppressed_ = 0;
      last_line_ns_ = now_ns;
      logged_once_ = true;
      ++lines_;
      return suppressed;
    }
    ++suppressed_;
    return std::nullopt;
  }

  // Events suppressed since the last line (not yet reported).
  std::uint64_t suppressed() const { return suppressed_; }
  // Lines admitted so far.
  std::uint64_t lines() const { return lines_; }

  // "" for 0, else " (N more since the last line)": appended to the line admit() allowed.
  static std::string suffix(std::uint64_t suppressed) {
    if (suppressed == 0) return {};
    return " (" + std::to_string(suppressed) + " more since the last line)";
  }

 private:
  std::uint64_t every_events_;
  std::int64_t interval_ns_;
  std::int64_t last_line_ns_ = 0;
  std::uint64_t suppressed_ = 0;
  std::uint64_t lines_ = 0;
  bool logged_once_ = false;
};

}  // namespace sluice::base
