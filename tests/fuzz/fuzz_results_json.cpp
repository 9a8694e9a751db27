// Fuzz harness: the results.json reader (analysis/run_record.hpp), which
// `sluice compare`, `report` and `calibrate --fit` run on files users hand
// them. Properties: never crash or throw (a wrong type, a missing field or a
// broken document is an error Status); a document it accepts has its runs'
// counts within their types and every phase named.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "analysis/run_record.hpp"
#include "fuzz_harness.hpp"

namespace sluice::fuzz {

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  const std::string run = R"({"format": "sluice-results", "version": 1, "complete": true, "runs": [
    {"scenario": "s", "label": "4 MDS", "backend": "sim", "seed": 1, "ok": true, "error": "",
     "params": {"threads": "8", "gds": "on"}, "config": {"meta_servers": 4, "gds": "on"},
     "phases": [{"workload": "file_sweep", "phase": "read", "ranks": 8, "bytes": 1048576, "ops": 16,
                 "last_done_s": 0.5, "last_bytes_per_s": 2097152.0, "last_ops_per_s": 32, "latency_us_p50": 10,
                 "latency_us_p99": null, "extra": {"au_pct": 95.5},
                 "progress": {"window_s": 0.1, "bytes_per_s": [1.0, 2.0, null]}}],
     "counters": {"chunks": 4}}]})";
  const std::string emulate = R"({"ok": true, "seed": 2, "emulation": {"rate_bits_per_s": 1e9, "latency_ns": 100},
    "nodes": [{"phases": [{"phase": "write", "bytes": 1024, "ops": 1, "elapsed_ns": 1000}]}, {"phases": []}]})";
  return {std::vector<std::uint8_t>(run.begin(), run.end()), std::vector<std::uint8_t>(emulate.begin(), emulate.end())};
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return 0;
  try {
    sluice::Result<std::vector<sluice::analysis::RunRecord>> runs = sluice::analysis::parse_runs(doc);
    if (!runs.ok()) return 0;
    for (const auto& run : *runs) {
      for (const auto& phase : run.phases) {
        if (phase.phase.empty()) sluice::fuzz::property_failed("results_json", "an accepted phase has no name");
      }
    }
    (void)sluice::analysis::results_complete(doc);
  } catch (...) {
    sluice::fuzz::property_failed("results_json", "the reader threw instead of returning an error");
  }
  return 0;
}
