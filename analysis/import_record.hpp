// ImportedRun: one measured point read from another tool's output, and the
// sluice results document (analysis/results.schema.json, "format":
// "sluice-results", version 1) that `sluice import` writes from such runs.
//
// A run is a measurement ("backend": "hw", seed 0). What the tool measured
// goes into phases with sluice's units and names (bytes/s, ops/s, seconds,
// microseconds; phase names of the nearest sluice workload: file_sweep's
// write/read/stat/..., md_bench's create/stat/remove/..., gpu_stream's
// record/playback); what it did not measure is null, never 0. The tool's own
// options are kept verbatim under the run's "source" object. params hold the
// point's parameters as text, named as the importer of each tool documents;
// they are the point_key that `sluice compare` aligns runs by. The workload
// is named by phases[].workload and config.workloads as in sluice's own
// results, not by a param: a param would enter point_key and stop an imported
// point aligning with a simulated one of the same parameters.
//
// Percentiles: latency_us_p50/p99 are the tool's own percentiles where it
// reports them (fio), else null; a mean latency goes to extra.latency_us_mean.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"

namespace sluice::analysis {

// The sluice release the imported document names as its writer; a test keeps
// it equal to scenarios/runner/results_writer.hpp's k_sluice_version (analysis
// links no scenarios code).
inline constexpr std::string_view k_import_sluice_version = "0.1.0";
// Limits of one `sluice import`: input files, runs written, phases of a run.
inline constexpr std::size_t k_import_max_files = 1024;
inline constexpr std::size_t k_import_max_runs = 100000;
inline constexpr std::size_t k_import_max_phases_per_run = 64;

inline constexpr double k_import_unmeasured = std::numeric_limits<double>::quiet_NaN();

// One phase, as results.json's "phases" element (result_codec.hpp PhaseRow);
// NaN: not measured (written as null).
struct ImportedPhase {
  std::string workload;  // "file_sweep", "md_bench", "gpu_stream"
  std::string phase;
  std::uint32_t ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  double first_done_s = k_import_unmeasured;
  double last_done_s = k_import_unmeasured;
  double first_bytes_per_s = k_import_unmeasured;
  double last_bytes_per_s = k_import_unmeasured;
  double first_ops_per_s = k_import_unmeasured;
  double last_ops_per_s = k_import_unmeasured;
  double latency_us_p50 = k_import_unmeasured;
  double latency_us_p99 = k_import_unmeasured;
  std::map<std::string, double> extra;  // names carry units (latency_us_mean, bytes_per_s_max, ...)
};

struct ImportedRun {
  std::string scenario;  // --scenario, else the tool's name
  std::string label;     // --label, else what the tool names the job (fio's job name, elbencho's --label)
  std::map<std::string, std::string> params;
  std::string workload_kind = "file_sweep";  // spec kind: file_sweep | md_bench | stream
  std::uint32_t client_ranks = 0;            // threads/tasks of the largest phase
  std::uint32_t nodes = 0;                   // hosts the tool ran on; 0: not said
  std::uint32_t queue_depth = 0;             // config.client_max_inflight_chunks; 0: not said
  bool gds = false;                          // the GPU-direct path (gdsio GPUD, fio libcufile)
  bool ok = true;
  std::string error;  // why not ok (the tool reported an error)
  std::vector<ImportedPhase> phases;
  nlohmann::json source = nlohmann::json::object();  // tool, file, format, version, options verbatim
};

// What the document says about its inputs.
struct ImportedDocumentInfo {
  std::string scenario;                         // top-level "scenario"
  std::map<std::string, std::string> versions;  // tool -> its version ("fio" -> "fio-3.33")
  std::vector<std::string> headlines;           // one line per file imported
  std::string created_utc;                      // "YYYY-MM-DDTHH:MM:SSZ"; "": now
};

// The results document (complete: true); every run validates against
// analysis/results.schema.json's run, with "source" as its optional object.
nlohmann::json imported_results_document(const std::vector<ImportedRun>& runs, const ImportedDocumentInfo& info);

// Writes `document` to DIR/results.json (creating DIR); io_error naming the path.
Status write_imported_results(const std::string& dir, const nlohmann::json& document);

}  // namespace sluice::analysis
