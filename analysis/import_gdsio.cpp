#include "analysis/import_gdsio.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <string>

namespace sluice::analysis {
namespace {

constexpr double k_bytes_per_gib = 1024.0 * 1024.0 * 1024.0;
constexpr double k_bytes_per_kib = 1024.0;

// A result line's words and where it is, for errors naming what was expected.
struct GdsioLine {
  const ImportInput& input;
  std::size_t line_no;
  std::vector<std::string_view> words;

  // The word after `key`; nullopt when the key is absent.
  std::optional<std::string_view> after(std::string_view key, std::size_t skip = 0) const {
    const auto it = std::find(words.begin(), words.end(), key);
    const auto at = static_cast<std::size_t>(it - words.begin()) + 1 + skip;
    if (it == words.end() || at >= words.size()) return std::nullopt;
    return words[at];
  }
  [[noreturn]] void fail(const std::string& expected) const {
    fail_at_line(input, line_no, "expected " + expected + " (gdsio's result line)");
  }
  std::string text(std::string_view key) const {
    const std::optional<std::string_view> v = after(key);
    if (!v) fail("\"" + std::string(key) + " <value>\"");
    return std::string(*v);
  }
  // "key <number> <unit>", the unit one of `units` (a trailing comma allowed).
  double number(std::string_view key, std::string_view unit) const {
    const std::string shape =
        "\"" + std::string(key) + " <number>" + (unit.empty() ? "" : " " + std::string(unit)) + "\"";
    const std::optional<std::string_view> v = after(key);
    const std::optional<double> n = v ? parse_decimal(*v) : std::nullopt;
    if (!n || *n < 0) fail(shape);
    if (!unit.empty()) {
      std::optional<std::string_view> u = after(key, 1);
      if (u && !u->empty() && u->back() == ',') u->remove_suffix(1);
      if (!u || *u != unit) fail(shape);
    }
    return *n;
  }
  // "key <count>", a whole number in 1..most read as one (not through a double, which rounds and overflows).
  std::uint64_t count(std::string_view key, std::uint64_t most) const {
    const std::optional<std::string_view> v = after(key);
    if (!v) fail("\"" + std::string(key) + " <count>\"");
    const std::optional<std::uint64_t> n = parse_whole(*v);
    if (!n || *n == 0 || *n > most) {
      fail_at_line(input, line_no,
                   std::string(key) + " expected a whole number in 1.." + std::to_string(most) + ", got \"" +
                       std::string(*v) + "\"");
    }
    return *n;
  }
  std::optional<double> optional_number(std::string_view key, std::string_view unit) const {
    return after(key) ? std::optional<double>(number(key, unit)) : std::nullopt;
  }
};

// "818796544/4096000(KiB)" -> (done, asked) in KiB; "8388608(KiB)" -> (it, it).
std::pair<double, std::optional<double>> dataset_kib(const GdsioLine& l) {
  std::string_view v = *l.after("DataSetSize:");
  const std::string_view suffix = "(KiB)";
  if (v.size() <= suffix.size() || v.substr(v.size() - suffix.size()) != suffix)
    l.fail("\"DataSetSize: <done>/<size>(KiB)\"");
  v.remove_suffix(suffix.size());
  const std::size_t slash = v.find('/');
  const std::optional<double> done = parse_decimal(v.substr(0, slash));
  const std::optional<double> asked = slash == std::string_view::npos ? done : parse_decimal(v.substr(slash + 1));
  if (!done || !asked || *done < 0 || *asked < 0) l.fail("\"DataSetSize: <done>/<size>(KiB)\"");
  return {*done, asked};
}

void gdsio_params(const GdsioLine& l, const std::string& io_type, ImportedRun& r) {
  const std::string xfer = l.text("XferType:");
  // A thread is a client rank: at most 2^32 - 1 of them.
  const std::uint64_t threads = l.count("Threads:", std::numeric_limits<std::uint32_t>::max());
  r.params["xfer_type"] = xfer;
  r.params["threads"] = std::to_string(threads);
  r.params["random"] = starts_with(io_type, "RAND") ? "1" : "0";
  if (l.after("IOSize:")) {
    std::string_view size = *l.after("IOSize:");
    if (size.size() > 5 && size.substr(size.size() - 5) == "(KiB)") size.remove_suffix(5);
    const std::optional<std::uint64_t> kib = parse_whole(size);
    if (kib && *kib < (std::uint64_t{1} << 50)) {
      r.params["io_bytes"] = std::to_string(*kib * 1024);
    } else {
      r.params["io_size"] = std::string(*l.after("IOSize:"));  // a random-size range: min-max-step(KiB)
    }
  }
  r.client_ranks = static_cast<std::uint32_t>(threads);
  r.gds = starts_with(xfer, "GPUD") || starts_with(xfer, "GPU_BATCH");
}

ImportedRun gdsio_run(const ImportInput& input, std::size_t line_no, std::string_view line) {
  const GdsioLine l{input, line_no, split_words(line)};
  const std::string io_type = l.text("IoType:");
  ImportedRun r;
  r.workload_kind = "stream";
  r.nodes = 1;
  gdsio_params(l, io_type, r);
  ImportedPhase p;
  p.workload = "gpu_stream";
  std::string lower;
  for (char c : io_type) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  p.phase = (lower == "read" || lower == "randread")     ? "playback"
            : (lower == "write" || lower == "randwrite") ? "record"
                                                         : lower;
  p.ranks = r.client_ranks;
  p.last_bytes_per_s = l.number("Throughput:", "GiB/sec") * k_bytes_per_gib;
  p.extra["latency_us_mean"] = l.number("Avg_Latency:", "usecs");
  const std::string where = "line " + std::to_string(line_no);
  if (l.after("DataSetSize:")) {
    const auto [done, asked] = dataset_kib(l);
    p.bytes = whole_count(input, where, done * k_bytes_per_kib);
    if (asked) r.params["size_bytes"] = std::to_string(whole_count(input, where, *asked * k_bytes_per_kib));
  }
  if (const std::optional<double> ops = l.optional_number("ops:", "")) p.ops = whole_count(input, where, *ops);
  if (const std::optional<double> t = l.optional_number("total_time", "secs"); t && *t > 0) {
    p.last_done_s = *t;
    p.last_ops_per_s = static_cast<double>(p.ops) / *t;
  }
  r.phases.push_back(std::move(p));
  r.source = {
      {"tool", "gdsio"}, {"file", input.path}, {"format", "text"}, {"line", line_no}, {"text", std::string(line)}};
  return r;
}

}  // namespace

std::vector<ImportedRun> import_gdsio_text(const ImportInput& input) {
  const std::vector<std::string_view> lines = split_lines(input.text);
  std::vector<ImportedRun> runs;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = trim(lines[i]);
    if (starts_with(t, "IoType:")) runs.push_back(gdsio_run(input, i + 1, t));
  }
  if (runs.empty())
    fail_at_line(input, 1, "no result line: expected gdsio's \"IoType: ... XferType: ... Throughput: ...\"");
  return runs;
}

}  // namespace sluice::analysis
