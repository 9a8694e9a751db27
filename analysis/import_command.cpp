#include "analysis/import_command.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "analysis/import_elbencho.hpp"
#include "analysis/import_fio.hpp"
#include "analysis/import_gdsio.hpp"
#include "analysis/import_ior.hpp"
#include "analysis/import_mdtest.hpp"
#include "analysis/run_record.hpp"

namespace sluice::analysis {
namespace {

// As analysis_command.hpp's.
constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;

constexpr ImportTool k_tools[] = {ImportTool::fio, ImportTool::elbencho, ImportTool::ior, ImportTool::mdtest,
                                  ImportTool::gdsio};

bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

char first_visible(std::string_view text) {
  const std::string_view t = trim(text);
  return t.empty() ? '\0' : t.front();
}

bool has_gdsio_line(std::string_view text) {
  for (std::string_view line : split_lines(text)) {
    if (starts_with(trim(line), "IoType:") && has(line, "XferType:")) return true;
  }
  return false;
}

bool has_elbencho_header(std::string_view text) {
  for (std::string_view line : split_lines(text)) {
    if (trim(line).empty()) continue;
    return has(line, "operation") && has(line, "time ms [");
  }
  return false;
}

// The tool, from what only its output holds; nullopt when none matches.
std::optional<ImportFormat> detect_tool(std::string_view text) {
  if (has(text, "\"fio version\"") && has(text, "\"jobs\"")) return ImportFormat{ImportTool::fio, "json"};
  if (has(text, "\"phase_type\"")) return ImportFormat{ImportTool::elbencho, "json"};
  if (has(text, "Summary of all tests:") || has(text, "MPI Coordinated Test of Parallel I/O")) {
    return ImportFormat{ImportTool::ior, "text"};
  }
  if (has(text, "{") && (has(text, "\"tests\"") || has(text, "\"summary\"")))
    return ImportFormat{ImportTool::ior, "json"};
  if (has(text, "SUMMARY rate") || (has(text, "mdtest-") && has(text, "SUMMARY:"))) {
    return ImportFormat{ImportTool::mdtest, "text"};
  }
  if (has_gdsio_line(text)) return ImportFormat{ImportTool::gdsio, "text"};
  if (has_elbencho_header(text)) return ImportFormat{ImportTool::elbencho, "csv"};
  return std::nullopt;
}

// The format of a named tool's file.
std::string format_of(ImportTool tool, std::string_view text) {
  switch (tool) {
    case ImportTool::fio: return "json";
    case ImportTool::elbencho: return first_visible(text) == '{' ? "json" : "csv";
    case ImportTool::ior: return has(text, "Summary of all tests:") || first_visible(text) != '{' ? "text" : "json";
    case ImportTool::mdtest: return "text";
    case ImportTool::gdsio: return "text";
  }
  return "text";
}

std::vector<ImportedRun> read_runs(const ImportInput& input, const ImportFormat& f) {
  switch (f.tool) {
    case ImportTool::fio: return import_fio(input);
    case ImportTool::elbencho: return f.format == "json" ? import_elbencho_json(input) : import_elbencho_csv(input);
    case ImportTool::ior: return f.format == "json" ? import_ior_json(input) : import_ior_text(input);
    case ImportTool::mdtest: return import_mdtest_text(input);
    case ImportTool::gdsio: return import_gdsio_text(input);
  }
  return {};
}

std::string headline(const ImportedFile& f) {
  std::string format = f.format.format;
  if (!f.runs.empty() && f.runs.front().source.contains("format") && f.runs.front().source["format"].is_string()) {
    format = f.runs.front().source["format"].get<std::string>();  // fio's json+
  }
  return f.path + ": " + std::string(to_string(f.format.tool)) + " " + format + ", " + std::to_string(f.runs.size()) +
         " run" + (f.runs.size() == 1 ? "" : "s");
}

void note_version(const ImportedFile& f, std::map<std::string, std::string>& versions) {
  for (const ImportedRun& r : f.runs) {
    if (!r.source.contains("version") || !r.source["version"].is_string()) continue;
    const std::string v = r.source["version"].get<std::string>();
    std::string& known = versions[std::string(to_string(f.format.tool))];
    if (!v.empty() && !has(known, v)) known += (known.empty() ? "" : ", ") + v;
  }
}

std::string document_scenario(const ImportOptions& options, const std::vector<ImportedRun>& runs) {
  if (!options.scenario.empty()) return options.scenario;
  std::set<std::string> names;
  for (const ImportedRun& r : runs) names.insert(r.scenario);
  return names.size() == 1 ? *names.begin() : "import";
}

}  // namespace

std::string_view to_string(ImportTool tool) {
  switch (tool) {
    case ImportTool::fio: return "fio";
    case ImportTool::elbencho: return "elbencho";
    case ImportTool::ior: return "ior";
    case ImportTool::mdtest: return "mdtest";
    case ImportTool::gdsio: return "gdsio";
  }
  return "unknown";
}

Result<ImportTool> parse_import_tool(std::string_view name) {
  for (ImportTool t : k_tools) {
    if (to_string(t) == name) return t;
  }
  return error(StatusCode::invalid_argument,
               "import: --tool \"" + std::string(name) + "\" is none of fio, elbencho, ior, mdtest, gdsio");
}

Result<ImportFormat> detect_import_format(const ImportInput& input, std::optional<ImportTool> tool) {
  if (tool) return ImportFormat{*tool, format_of(*tool, input.text)};
  if (std::optional<ImportFormat> f = detect_tool(input.text)) return *f;
  return error(StatusCode::invalid_argument,
               input.path +
                   ": not the output of a tool sluice imports (fio: JSON with \"fio version\" and \"jobs\"; elbencho: "
                   "--csvfile's header with \"operation\" and \"time ms [last]\" or --jsonfile's \"phase_type\"; IOR: "
                   "JSON with \"tests\"/\"summary\" or text with \"Summary of all tests:\"; mdtest: \"SUMMARY rate:\"; "
                   "gdsio: \"IoType: ... XferType: ...\" lines); name the tool with --tool");
}

Result<ImportedFile> import_file(const std::string& path, const ImportOptions& options) {
  Result<ImportInput> input = read_import_input(path);
  if (!input.ok()) return input.status();
  Result<ImportFormat> format = detect_import_format(*input, options.tool);
  if (!format.ok()) return format.status();
  ImportedFile file{path, *format, {}};
  try {
    file.runs = read_runs(*input, *format);
  } catch (const ImportError& e) {
    return error(StatusCode::invalid_argument, e.what());
  } catch (const nlohmann::json::exception& e) {  // a reader's bug, still reported as this file's
    return error(StatusCode::invalid_argument, path + ": " + e.what());
  }
  if (file.runs.size() > k_import_max_runs) {
    return error(StatusCode::invalid_argument,
                 path + ": more than k_import_max_runs (" + std::to_string(k_import_max_runs) + ") runs");
  }
  for (ImportedRun& r : file.runs) {
    r.scenario = options.scenario.empty() ? std::string(to_string(format->tool)) : options.scenario;
    if (!options.label.empty()) r.label = options.label;
  }
  return file;
}

int run_import(const ImportArgs& args, std::ostream& out, std::ostream& err) {
  if (args.files.empty() || args.files.size() > k_import_max_files || args.out_dir.empty()) {
    err << "import: give 1.." << k_import_max_files << " files (k_import_max_files) and --out DIR\n";
    return k_exit_usage;
  }
  ImportOptions options{std::nullopt, args.scenario, args.label};
  if (!args.tool.empty()) {
    Result<ImportTool> tool = parse_import_tool(args.tool);
    if (!tool.ok()) {
      err << tool.status().message() << "\n";
      return k_exit_usage;
    }
    options.tool = *tool;
  }
  std::vector<ImportedRun> runs;
  ImportedDocumentInfo info;
  for (const std::string& path : args.files) {
    Result<ImportedFile> f = import_file(path, options);
    if (!f.ok()) {
      err << "import: " << f.status().message() << "\n";
      return k_exit_usage;
    }
    if (runs.size() + f->runs.size() > k_import_max_runs) {
      err << "import: more than k_import_max_runs (" << k_import_max_runs << ") runs in all\n";
      return k_exit_usage;
    }
    info.headlines.push_back(headline(*f));
    out << info.headlines.back() << "\n";
    note_version(*f, info.versions);
    runs.insert(runs.end(), f->runs.begin(), f->runs.end());
  }
  info.scenario = document_scenario(options, runs);
  const nlohmann::json doc = imported_results_document(runs, info);
  // What import writes, compare/report/calibrate read: checked before writing.
  if (Result<std::vector<RunRecord>> back = parse_runs(doc); !back.ok()) {
    err << "import: internal: the document does not read back: " << back.status().message() << "\n";
    return k_exit_failed;
  }
  if (Status st = write_imported_results(args.out_dir, doc); !st.ok()) {
    err << st.message() << "\n";
    return k_exit_failed;
  }
  out << "results written: " << (std::filesystem::path(args.out_dir) / "results.json").string() << " (" << runs.size()
      << " run" << (runs.size() == 1 ? "" : "s") << ")\n";
  return k_exit_ok;
}

}  // namespace sluice::analysis
