// RateLimitedLog: which events of a stream of similar ones get a log line.
//
// A flood (a listener out of descriptors, thousands of refused connections a
// second) must not turn into a flood of log lines: issue 24 measured 117,000
// "accept: Too many open files" lines a second. The first event of a stream
// is logged; after it, one line per `interval_ns` or per `every_events`
// events, whichever comes first, and each line says how many events were
// suppressed since the line before (suffix()), and, when the events were
// given reasons, how many of each (line_suffix(): a burst of refusals keeps
// its reasons, " (4 more since the last line: 3 second challenge, 1 closed
// by the remote side)").
//
// The caller passes the time (any monotonic clock in ns), so tests drive it
// without a real clock. Not thread-safe: the owner's lock guards it (the
// transports' progress state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::base {

class RateLimitedLog {
 public:
  // every_events 0 counts as 1 (every event logged); interval_ns <= 0 means no interval: only the count rule.
  RateLimitedLog(std::uint64_t every_events, std::int64_t interval_ns)
      : every_events_(every_events == 0 ? 1 : every_events), interval_ns_(interval_ns) {}

  // Distinct reasons counted between two lines; events with further reasons
  // are counted under k_other_reason (reasons are short fixed texts, but a
  // caller's mistake must not grow the tally without bound).
  static constexpr std::size_t k_max_reasons = 8;
  static constexpr std::string_view k_other_reason = "other";

  // Notes one event at now_ns, for `reason` (a short fixed text such as
  // "second challenge", never an address; "" for none). A value: log this
  // event now, and say that the value's number of events were suppressed
  // since the previous line (line_suffix() says which reasons they had).
  // nullopt: suppress it (it is counted, with its reason, for the next line).
  std::optional<std::uint64_t> admit(std::int64_t now_ns, std::string_view reason = {}) {
    const bool interval_passed = interval_ns_ > 0 && now_ns - last_line_ns_ >= interval_ns_;
    if (!logged_once_ || interval_passed || suppressed_ + 1 >= every_events_) {
      const std::uint64_t suppressed = suppressed_;
      suppressed_ = 0;
      folded_ = std::move(pending_);
      pending_.clear();
      folded_count_ = suppressed;
      last_line_ns_ = now_ns;
      logged_once_ = true;
      ++lines_;
      return suppressed;
    }
    ++suppressed_;
    count_reason(reason.empty() ? k_other_reason : reason);
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

  // The suffix of the line admit() allowed last: suffix() of its count and,
  // when any of the suppressed events had a reason, the count of each reason
  // in the order they first came (events without one as k_other_reason):
  // " (4 more since the last line: 3 second challenge, 1 other)".
  std::string line_suffix() const {
    const bool reasons = !folded_.empty() && !(folded_.size() == 1 && folded_[0].first == k_other_reason);
    if (!reasons) return suffix(folded_count_);
    std::string out = " (" + std::to_string(folded_count_) + " more since the last line: ";
    for (std::size_t i = 0; i < folded_.size(); ++i) {
      out += (i == 0 ? "" : ", ") + std::to_string(folded_[i].second) + " " + folded_[i].first;
    }
    return out + ")";
  }

 private:
  void count_reason(std::string_view reason) {
    for (auto& [name, count] : pending_) {
      if (name == reason) {
        ++count;
        return;
      }
    }
    // Past k_max_reasons distinct ones, further reasons count as k_other_reason
    // (one more entry at most).
    if (pending_.size() >= k_max_reasons && reason != k_other_reason) return count_reason(k_other_reason);
    pending_.emplace_back(std::string(reason), 1);
  }

  std::uint64_t every_events_;
  std::int64_t interval_ns_;
  std::int64_t last_line_ns_ = 0;
  std::uint64_t suppressed_ = 0;
  std::uint64_t lines_ = 0;
  bool logged_once_ = false;
  std::vector<std::pair<std::string, std::uint64_t>> pending_;  // reasons suppressed since the last line
  std::vector<std::pair<std::string, std::uint64_t>> folded_;   // those of the last line
  std::uint64_t folded_count_ = 0;                              // events suppressed before the last line
};

}  // namespace sluice::base
