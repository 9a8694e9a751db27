// `sluice import FILE... --out DIR [--tool fio|elbencho|ior|mdtest|gdsio]
//  [--scenario NAME] [--label TEXT]`: measurements taken with other tools,
// written as DIR/results.json in sluice's results layout (import_record.hpp),
// so that `sluice compare`, `report` and `calibrate --fit` read them as any
// other measured (backend "hw") results.
//
// The tool and its format are detected from the content unless --tool names
// the tool (detect_import_format says how); each tool's reader documents its
// mapping (import_fio.hpp, import_elbencho.hpp, import_ior.hpp,
// import_mdtest.hpp, import_gdsio.hpp). --scenario sets every run's scenario
// (default: the tool's name); give the scenario of the sluice study the
// measurement is to be compared with. --label sets every run's label.
//
// Exit codes as analysis_command.hpp: 0 written; 2 usage or a bad input file
// (unreadable, of no known tool, malformed: the message names the file, the
// line or JSON field and what was expected), as `sluice compare` for bad
// files; 1 the output could not be written. Nothing is written unless every
// input reads.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/import_input.hpp"
#include "analysis/import_record.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

enum class ImportTool : std::uint8_t { fio, elbencho, ior, mdtest, gdsio };
std::string_view to_string(ImportTool tool);
// invalid_argument naming the tools for any other name.
Result<ImportTool> parse_import_tool(std::string_view name);

struct ImportFormat {
  ImportTool tool = ImportTool::fio;
  std::string format;  // "json", "csv" or "text" (fio's "json+" is told apart by its reader)
};

// The tool and format of a file, from its content:
//   fio: JSON with "fio version" and "jobs";
//   elbencho: JSON records with "phase_type" (--jsonfile), or a CSV header
//     naming "operation" and "time ms [" (--csvfile);
//   IOR: JSON with "tests" or "summary", or text with "Summary of all tests:"
//     or "MPI Coordinated Test of Parallel I/O";
//   mdtest: text with a "SUMMARY rate" table (or "mdtest-" and "SUMMARY:");
//   gdsio: a line starting "IoType:" with "XferType:".
// With `tool` given, only the format is detected. invalid_argument naming the
// file and what each tool's output looks like when none matches.
Result<ImportFormat> detect_import_format(const ImportInput& input, std::optional<ImportTool> tool = std::nullopt);

struct ImportOptions {
  std::optional<ImportTool> tool;  // nullopt: detected
  std::string scenario;            // "": the tool's name
  std::string label;               // "": the tool's own
};

struct ImportedFile {
  std::string path;
  ImportFormat format;
  std::vector<ImportedRun> runs;
};

// Reads one file (k_max_results_file_bytes at most, k_import_max_runs runs);
// invalid_argument (bad input) or io_error (unreadable) naming the file.
Result<ImportedFile> import_file(const std::string& path, const ImportOptions& options);

struct ImportArgs {
  std::vector<std::string> files;
  std::string out_dir;
  std::string tool;  // "": detect
  std::string scenario;
  std::string label;
};
int run_import(const ImportArgs& args, std::ostream& out, std::ostream& err);

}  // namespace sluice::analysis
