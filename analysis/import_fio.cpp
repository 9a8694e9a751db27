#include "analysis/import_fio.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <string>

namespace sluice::analysis {
namespace {

using nlohmann::json;
using Options = std::map<std::string, std::string>;
using Bins = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

constexpr const char* k_directions[] = {"read", "write", "trim"};
constexpr double k_ns_per_us = 1000.0;

// One fio entry's totals in one direction.
struct DirectionSample {
  std::uint64_t io_bytes = 0;
  std::uint64_t total_ios = 0;
  double runtime_s = 0;
  double clat_n = 0;
  double clat_mean_ns = 0;
  double clat_min_ns = 0;
  double clat_max_ns = 0;
  std::optional<double> p50_ns;
  std::optional<double> p99_ns;
  bool has_bins = false;
  Bins bins;
};

// Byte offset of the JSON document: fio prints "note: ..." lines on stdout before it.
std::size_t json_start(const ImportInput& input) {
  std::size_t pos = 0;
  while (pos < input.text.size()) {
    std::size_t end = input.text.find('\n', pos);
    if (end == std::string::npos) end = input.text.size();
    const std::string_view line = std::string_view(input.text).substr(pos, end - pos);
    if (starts_with(trim(line), "{")) return pos + line.find('{');
    pos = end + 1;
  }
  fail_at_line(input, 1, "no JSON object: expected fio --output-format=json output (a '{' after any note lines)");
}

void add_options(const ImportInput& input, const json& options, const std::string& where, Options& out) {
  for (const auto& [name, value] : options.items()) {
    if (!value.is_string()) {
      fail_at_field(input, field_path(where, name),
                    "expected a string (fio writes every option as text), got " + std::string(value.type_name()));
    }
    out[name] = value.get<std::string>();
  }
}

// The job's options: a job file's [global] section, overridden by the job's own.
Options job_options(const ImportInput& input, const json& doc, const json& job, const std::string& where) {
  Options out;
  if (doc.contains("global options")) {
    add_options(input, json_object_field(input, doc, "", "global options"), "global options", out);
  }
  if (job.contains("job options")) {
    add_options(input, json_object_field(input, job, where, "job options"), field_path(where, "job options"), out);
  }
  return out;
}

std::string option_or(const Options& options, std::initializer_list<const char*> names, const std::string& absent) {
  for (const char* name : names) {
    if (const auto it = options.find(name); it != options.end()) return it->second;
  }
  return absent;
}

unsigned kb_base_of(const ImportInput& input, const Options& options, const std::string& where) {
  const std::string kb_base = option_or(options, {"kb_base"}, "1024");
  if (kb_base != "1000" && kb_base != "1024") {
    fail_at_field(input, field_path(where, "job options.kb_base"), "expected 1000 or 1024, got \"" + kb_base + "\"");
  }
  return kb_base == "1000" ? 1000 : 1024;
}

std::map<std::string, std::string> fio_params(const ImportInput& input, const Options& options,
                                              const std::string& where) {
  std::map<std::string, std::string> params;
  const unsigned kb_base = kb_base_of(input, options, where);
  params["rw"] = option_or(options, {"rw", "readwrite"}, "read");
  const std::string bs = option_or(options, {"bs", "blocksize"}, "4k");
  if (const std::optional<std::uint64_t> bytes = fio_size_bytes(bs, kb_base)) {
    params["bs_bytes"] = std::to_string(*bytes);
  } else {
    params["bs"] = bs;
  }
  params["iodepth"] = option_or(options, {"iodepth"}, "1");
  params["numjobs"] = option_or(options, {"numjobs"}, "1");
  params["direct"] = option_or(options, {"direct"}, "0");
  if (options.contains("ioengine")) params["ioengine"] = options.at("ioengine");
  if (options.contains("size")) {
    const std::optional<std::uint64_t> bytes = fio_size_bytes(options.at("size"), kb_base);
    params[bytes ? "size_bytes" : "size"] = bytes ? std::to_string(*bytes) : options.at("size");
  }
  if (options.contains("rwmixread")) params["rwmixread"] = options.at("rwmixread");
  return params;
}

void read_bins(const ImportInput& input, const json& bins, const std::string& at, DirectionSample& s) {
  s.has_bins = true;
  for (const auto& [value_ns, count] : bins.items()) {
    const std::optional<std::uint64_t> ns = parse_whole(value_ns);
    if (!ns) fail_at_field(input, at, "expected bin names that are latencies in ns, got \"" + value_ns + "\"");
    const std::string path = field_path(at, value_ns);
    s.bins.emplace_back(*ns, whole_count(input, path, json_amount_field(input, bins, at, value_ns.c_str())));
    if (s.bins.size() > k_fio_max_latency_bins) {
      fail_at_field(input, at,
                    "more than k_fio_max_latency_bins (" + std::to_string(k_fio_max_latency_bins) + ") bins");
    }
  }
  std::sort(s.bins.begin(), s.bins.end());
}

void read_clat(const ImportInput& input, const json& clat, const std::string& at, DirectionSample& s) {
  s.clat_n = json_optional_amount(input, clat, at, "N").value_or(0);
  s.clat_mean_ns = json_optional_amount(input, clat, at, "mean").value_or(0);
  s.clat_min_ns = json_optional_amount(input, clat, at, "min").value_or(0);
  s.clat_max_ns = json_optional_amount(input, clat, at, "max").value_or(0);
  if (clat.contains("percentile")) {
    const json& pct = json_object_field(input, clat, at, "percentile");
    const std::string pct_at = field_path(at, "percentile");
    s.p50_ns = json_optional_amount(input, pct, pct_at, "50.000000");
    s.p99_ns = json_optional_amount(input, pct, pct_at, "99.000000");
  }
  if (clat.contains("bins")) read_bins(input, json_object_field(input, clat, at, "bins"), field_path(at, "bins"), s);
}

// The entry's totals in direction `dir`; nullopt when it did no I/O that way.
std::optional<DirectionSample> read_direction(const ImportInput& input, const json& job, const std::string& where,
                                              const char* dir) {
  if (!job.contains(dir)) return std::nullopt;
  const json& d = json_object_field(input, job, where, dir);
  const std::string at = field_path(where, dir);
  DirectionSample s;
  s.io_bytes = whole_count(input, field_path(at, "io_bytes"), json_amount_field(input, d, at, "io_bytes"));
  s.total_ios = whole_count(input, field_path(at, "total_ios"), json_amount_field(input, d, at, "total_ios"));
  s.runtime_s = json_amount_field(input, d, at, "runtime") / 1000.0;  // fio writes milliseconds
  if (d.contains("clat_ns")) read_clat(input, json_object_field(input, d, at, "clat_ns"), field_path(at, "clat_ns"), s);
  if (s.io_bytes == 0 && s.total_ios == 0) return std::nullopt;
  return s;
}

std::uint64_t add_counts(const ImportInput& input, const std::string& where, std::uint64_t a, std::uint64_t b) {
  if (a > std::numeric_limits<std::uint64_t>::max() - b) fail_at_field(input, where, "the clones' sum exceeds 2^64");
  return a + b;
}

// Totals and rates over the clones (phase_summary.hpp's definitions).
void fio_totals(const ImportInput& input, const std::vector<DirectionSample>& samples, const std::string& where,
                ImportedPhase& p) {
  double last = 0;
  double first = std::numeric_limits<double>::infinity();
  for (const DirectionSample& s : samples) {
    p.bytes = add_counts(input, where, p.bytes, s.io_bytes);
    p.ops = add_counts(input, where, p.ops, s.total_ios);
    last = std::max(last, s.runtime_s);
    if (s.runtime_s > 0) first = std::min(first, s.runtime_s);
  }
  if (!(last > 0)) return;  // finished within fio's millisecond clock: no rate
  p.last_done_s = last;
  p.last_bytes_per_s = static_cast<double>(p.bytes) / last;
  p.last_ops_per_s = static_cast<double>(p.ops) / last;
  double first_bytes = 0;
  double first_ops = 0;
  for (const DirectionSample& s : samples) {
    if (!(s.runtime_s > 0)) continue;
    const double share = std::min(1.0, first / s.runtime_s);
    first_bytes += static_cast<double>(s.io_bytes) * share;
    first_ops += static_cast<double>(s.total_ios) * share;
  }
  p.first_done_s = first;
  p.first_bytes_per_s = first_bytes / first;
  p.first_ops_per_s = first_ops / first;
}

// latency_us_p50/p99 and extra.latency_us_*; returns how the percentiles were had.
std::string fio_latency(const ImportInput& input, const std::vector<DirectionSample>& samples, const std::string& where,
                        ImportedPhase& p) {
  double n = 0, weighted_ns = 0, min_ns = std::numeric_limits<double>::infinity(), max_ns = 0;
  for (const DirectionSample& s : samples) {
    if (!(s.clat_n > 0)) continue;
    n += s.clat_n;
    weighted_ns += s.clat_mean_ns * s.clat_n;
    min_ns = std::min(min_ns, s.clat_min_ns);
    max_ns = std::max(max_ns, s.clat_max_ns);
  }
  if (n > 0) {
    p.extra["latency_us_mean"] = weighted_ns / n / k_ns_per_us;
    p.extra["latency_us_min"] = min_ns / k_ns_per_us;
    p.extra["latency_us_max"] = max_ns / k_ns_per_us;
  }
  if (std::all_of(samples.begin(), samples.end(), [](const DirectionSample& s) { return s.has_bins; })) {
    std::map<std::uint64_t, std::uint64_t> merged;
    for (const DirectionSample& s : samples) {
      for (const auto& [ns, count] : s.bins) merged[ns] = add_counts(input, where, merged[ns], count);
    }
    if (merged.size() > k_fio_max_latency_bins) fail_at_field(input, where, "more than k_fio_max_latency_bins bins");
    const Bins bins(merged.begin(), merged.end());
    p.latency_us_p50 = fio_histogram_percentile_ns(bins, 50) / k_ns_per_us;
    p.latency_us_p99 = fio_histogram_percentile_ns(bins, 99) / k_ns_per_us;
    return "clat_ns bins of " + std::to_string(samples.size()) + " entries, merged (exact)";
  }
  const auto largest = [&](std::optional<double> DirectionSample::*pct) {
    double v = 0;
    for (const DirectionSample& s : samples) {
      if (!(s.*pct)) return k_import_unmeasured;
      v = std::max(v, *(s.*pct));
    }
    return v / k_ns_per_us;
  };
  p.latency_us_p50 = largest(&DirectionSample::p50_ns);
  p.latency_us_p99 = largest(&DirectionSample::p99_ns);
  if (samples.size() == 1) return "fio's own clat_ns percentiles";
  return "the largest of " + std::to_string(samples.size()) +
         " clones' clat_ns percentiles (an upper bound of the merged percentile)";
}

std::uint32_t fio_ranks(const ImportInput& input, const ImportedRun& run, std::size_t entries,
                        const std::string& where) {
  const std::optional<std::uint64_t> numjobs = parse_whole(run.params.at("numjobs"));
  constexpr std::uint64_t k_most = std::numeric_limits<std::uint32_t>::max();
  if (!numjobs || *numjobs > k_most || entries > k_most) {
    fail_at_field(input, field_path(where, "job options.numjobs"),
                  "expected a whole number of clones below 2^32, got \"" + run.params.at("numjobs") + "\"");
  }
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(*numjobs, entries));
}

json fio_source(const json& doc, const json& first, const std::vector<std::size_t>& entries, const std::string& path,
                const std::string& format) {
  json indices = json::array();
  for (std::size_t i : entries) indices.push_back(i);
  return {{"tool", "fio"},
          {"file", path},
          {"format", format},
          {"version", doc["fio version"]},
          {"jobname", first["jobname"]},
          {"groupid", first.contains("groupid") ? first["groupid"] : json(0)},
          {"entries", indices},
          {"global options", doc.contains("global options") ? doc["global options"] : json::object()},
          {"job options", first.contains("job options") ? first["job options"] : json::object()},
          {"latency_percentiles", json::object()}};
}

// Marks the run failed where an entry reports fio's "error" (an errno).
void fio_errors(const ImportInput& input, const json& jobs, const std::vector<std::size_t>& entries, ImportedRun& r) {
  for (std::size_t i : entries) {
    const std::string where = "jobs[" + std::to_string(i) + "]";
    const double code = json_optional_amount(input, jobs[i], where, "error").value_or(0);
    if (code != 0 && r.ok) {
      r.ok = false;
      r.error = "fio: job " + r.label + " (" + where + ") reported error " + std::to_string(std::llround(code));
    }
  }
}

ImportedRun fio_run(const ImportInput& input, const json& doc, const std::vector<std::size_t>& entries,
                    const std::string& format) {
  const json& jobs = doc["jobs"];
  const std::string where = "jobs[" + std::to_string(entries.front()) + "]";
  const json& first = jobs[entries.front()];
  ImportedRun r;
  r.params = fio_params(input, job_options(input, doc, first, where), where);
  r.label = first["jobname"].get<std::string>();
  r.client_ranks = fio_ranks(input, r, entries.size(), where);
  r.nodes = 1;  // fio's JSON of one host (client/server output is not read)
  r.queue_depth = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(parse_whole(r.params["iodepth"]).value_or(0), std::numeric_limits<std::uint32_t>::max()));
  r.gds = r.params.contains("ioengine") && r.params["ioengine"] == "libcufile";
  r.source = fio_source(doc, first, entries, input.path, format);
  fio_errors(input, jobs, entries, r);
  for (const char* dir : k_directions) {
    std::vector<DirectionSample> samples;
    for (std::size_t i : entries) {
      if (auto s = read_direction(input, jobs[i], "jobs[" + std::to_string(i) + "]", dir)) samples.push_back(*s);
    }
    if (samples.empty()) continue;
    ImportedPhase p;
    p.workload = "file_sweep";
    p.phase = dir;
    p.ranks = r.client_ranks;
    fio_totals(input, samples, field_path(where, dir), p);
    r.source["latency_percentiles"][dir] = fio_latency(input, samples, field_path(where, dir), p);
    r.phases.push_back(std::move(p));
  }
  return r;
}

bool has_bins(const json& job) {
  for (const char* dir : k_directions) {
    if (job.contains(dir) && job[dir].is_object() && job[dir].contains("clat_ns") && job[dir]["clat_ns"].is_object() &&
        job[dir]["clat_ns"].contains("bins")) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<ImportedRun> import_fio(const ImportInput& input) {
  const json doc = parse_json_at(input, json_start(input), input.text.size());
  if (!doc.is_object())
    fail_at_field(input, "", "expected a JSON object (fio's output), got " + std::string(doc.type_name()));
  json_text_field(input, doc, "", "fio version");
  const json& jobs = json_array_field(input, doc, "", "jobs");
  if (jobs.empty()) fail_at_field(input, "jobs", "expected at least one job, got an empty array");
  // A fio job is (groupid, jobname); its numjobs clones are entries of it, in first-seen order.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  bool json_plus = false;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string where = "jobs[" + std::to_string(i) + "]";
    if (!jobs[i].is_object())
      fail_at_field(input, where, "expected an object, got " + std::string(jobs[i].type_name()));
    const std::string name = json_text_field(input, jobs[i], where, "jobname");
    const double group = json_optional_amount(input, jobs[i], where, "groupid").value_or(0);
    const std::string key = std::to_string(std::llround(group)) + "/" + name;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.emplace_back(key, std::vector<std::size_t>{});
      it = std::prev(groups.end());
    }
    it->second.push_back(i);
    json_plus = json_plus || has_bins(jobs[i]);
  }
  std::vector<ImportedRun> runs;
  for (const auto& [key, entries] : groups) runs.push_back(fio_run(input, doc, entries, json_plus ? "json+" : "json"));
  return runs;
}

std::optional<std::uint64_t> fio_size_bytes(std::string_view text, unsigned kb_base) {
  if (kb_base != 1000 && kb_base != 1024) return std::nullopt;
  text = trim(text);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) ++digits;
  const std::optional<std::uint64_t> number = parse_whole(text.substr(0, digits));
  if (!number) return std::nullopt;
  std::string unit;
  for (char c : text.substr(digits)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || unit == "b") return number;
  const std::string prefixes = "kmgtp";
  const std::size_t power = prefixes.find(unit[0]);
  if (power == std::string::npos) return std::nullopt;
  const std::string rest = unit.substr(1);
  if (!rest.empty() && rest != "b" && rest != "i" && rest != "ib") return std::nullopt;
  const bool iec = !rest.empty() && rest[0] == 'i';
  // kb_base=1024 (compatibility mode): SI-looking units are powers of 2, IEC ones powers of 10.
  const double base = (kb_base == 1024) != iec ? 1024.0 : 1000.0;
  const double bytes = static_cast<double>(*number) * std::pow(base, static_cast<double>(power + 1));
  if (bytes >= 18446744073709551616.0) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

double fio_histogram_percentile_ns(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& bins, double pct) {
  double total = 0;
  for (const auto& [ns, count] : bins) total += static_cast<double>(count);
  if (!(total > 0)) return k_import_unmeasured;
  const double threshold = pct / 100.0 * total;
  double cumulative = 0;
  for (const auto& [ns, count] : bins) {
    cumulative += static_cast<double>(count);
    if (cumulative >= threshold) return static_cast<double>(ns);
  }
  return static_cast<double>(bins.back().first);
}

}  // namespace sluice::analysis
