#include "analysis/fidelity.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/percentile.hpp"

namespace sluice::analysis {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;

// A seed figure whose error is not finite (its run failed) counts at this
// error in the median: a failed figure is a miss, not a figure left out.
constexpr double k_unmeasured_error_pct = 100.0;

Status bad(const std::string& where, const std::string& what) {
  return error(StatusCode::invalid_argument, "fidelity: " + where + ": " + what);
}

double number_or_nan(const json& v) {
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// One entry of "claims"; `where` names the file and the index in messages.
Result<FidelityRow> read_claim(const json& c, const std::string& where) {
  if (!c.is_object()) return bad(where, "a claim is not an object");
  for (const char* key : {"text", "seed_figure"}) {
    if (!c.contains(key) || !c[key].is_string()) return bad(where, std::string("\"") + key + "\" is not text");
  }
  if (!c.contains("holds") || !c["holds"].is_boolean()) return bad(where, "\"holds\" is not true or false");
  if (!c.contains("measured") || !(c["measured"].is_number() || c["measured"].is_null())) {
    return bad(where, "\"measured\" is not a number or null");
  }
  FidelityRow row;
  row.text = c["text"].get<std::string>();
  row.seed_words = c["seed_figure"].get<std::string>();
  row.holds = c["holds"].get<bool>();
  row.simulated = number_or_nan(c["measured"]);
  const std::string kind = c.value("kind", std::string("shape"));
  if (kind == "seed_figure") {
    if (!c.contains("seed_value") || !c["seed_value"].is_number() || c["seed_value"].get<double>() == 0) {
      return bad(where, "a seed figure without a nonzero \"seed_value\"");
    }
    if (!c.contains("tolerance") || !c["tolerance"].is_number() || c["tolerance"].get<double>() < 0) {
      return bad(where, "a seed figure without a \"tolerance\" of 0 or more");
    }
    row.published = c["seed_value"].get<double>();
    row.tolerance = c["tolerance"].get<double>();
    row.tolerance_why = c.value("tolerance_why", std::string());
    if (c.contains("model_input") && !c["model_input"].is_boolean())
      return bad(where, "\"model_input\" is not true or false");
    row.model_input = c.value("model_input", false);
    row.error = std::isfinite(row.simulated) ? (row.simulated - *row.published) / std::fabs(*row.published)
                                             : std::numeric_limits<double>::quiet_NaN();
    return row;
  }
  if (kind != "shape") return bad(where, "\"kind\" is \"" + kind + "\", not seed_figure or shape");
  row.error = std::numeric_limits<double>::quiet_NaN();
  const bool low = c.contains("at_least") && c["at_least"].is_number();
  const bool high = c.contains("at_most") && c["at_most"].is_number();
  if (low && high) {
    row.expected = fmt::format("in [{:.4g}, {:.4g}]", c["at_least"].get<double>(), c["at_most"].get<double>());
  } else if (low) {
    row.expected = fmt::format(">= {:.4g}", c["at_least"].get<double>());
  } else if (high) {
    row.expected = fmt::format("<= {:.4g}", c["at_most"].get<double>());
  } else {
    return bad(where, "a shape claim without \"at_least\" or \"at_most\"");
  }
  return row;
}

std::string number_text(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "n/a"; }

std::string error_text(const FidelityRow& r) {
  return std::isfinite(r.error) ? fmt::format("{:+.1f}%", 100 * r.error) : "n/a";
}

std::string tolerance_text(const FidelityRow& r) {
  std::string t = fmt::format("{:.0f}%", 100 * r.tolerance);
  if (!r.tolerance_why.empty()) t += " (" + r.tolerance_why + ")";
  return t;
}

// "yes", "MISS"; a figure that is an input of its run says so (not in F3).
std::string verdict_text(const FidelityRow& r, const char* miss) {
  std::string v = r.holds ? "yes" : miss;
  return r.model_input ? v + " (input, not in F3)" : v;
}

// Markdown cells hold no '|' or newline.
std::string cell(std::string s) {
  for (char& ch : s) {
    if (ch == '|' || ch == '\n') ch = ch == '|' ? '/' : ' ';
  }
  return s;
}

void markdown_plots(const std::vector<FidelityRow>& rows, const std::string& markdown_path, std::ostream& md) {
  std::set<std::string> dirs;
  for (const FidelityRow& r : rows) dirs.insert(fs::path(r.results_file).parent_path().string());
  const fs::path base = fs::absolute(fs::path(markdown_path)).parent_path();
  std::vector<std::string> plots;
  for (const std::string& d : dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(d.empty() ? "." : d, ec)) {
      if (entry.path().extension() == ".svg") {
        plots.push_back(fs::relative(fs::absolute(entry.path()), base, ec).generic_string());
      }
    }
  }
  std::sort(plots.begin(), plots.end());
  if (plots.empty()) return;
  md << "\n## Plots\n\n";
  for (const std::string& p : plots) md << "![" << fs::path(p).stem().string() << "](" << p << ")\n\n";
}

}  // namespace

Result<std::vector<FidelityRow>> read_fidelity_rows(const std::string& results_path) {
  std::ifstream in(results_path);
  if (!in) return error(StatusCode::io_error, "fidelity: cannot read " + results_path);
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return bad(results_path, "not JSON (a sluice results.json)");
  if (doc.value("format", std::string()) != "sluice-results") {
    return bad(results_path, "not a sluice results file (\"format\" is not \"sluice-results\")");
  }
  if (!doc.contains("scenario") || !doc["scenario"].is_string()) return bad(results_path, "\"scenario\" is not text");
  if (!doc.contains("claims")) return std::vector<FidelityRow>{};
  if (!doc["claims"].is_array()) return bad(results_path, "\"claims\" is not a list");
  std::vector<FidelityRow> rows;
  for (std::size_t i = 0; i < doc["claims"].size(); ++i) {
    Result<FidelityRow> row = read_claim(doc["claims"][i], fmt::format("{} claim {}", results_path, i + 1));
    if (!row.ok()) return row.status();
    row->study = doc["scenario"].get<std::string>();
    row->results_file = results_path;
    rows.push_back(std::move(*row));
  }
  return rows;
}

FidelitySummary summarize_fidelity(const std::vector<FidelityRow>& rows) {
  FidelitySummary s;
  std::vector<double> errors;
  for (const FidelityRow& r : rows) {
    if (!r.published || r.model_input) continue;
    ++s.figures;
    s.within_tolerance += r.holds ? 1 : 0;
    errors.push_back(std::isfinite(r.error) ? 100 * std::fabs(r.error) : k_unmeasured_error_pct);
  }
  std::sort(errors.begin(), errors.end());
  s.median_abs_err_pct = errors.empty() ? 0 : percentile_of_sorted(errors, 0.5);
  return s;
}

std::string f3_line(const FidelitySummary& summary) {
  return fmt::format("RESULT F3 median_err={:.2f} within_tolerance={}/{}", summary.median_abs_err_pct,
                     summary.within_tolerance, summary.figures);
}

void print_fidelity(const std::vector<FidelityRow>& rows, std::ostream& out) {
  out << fmt::format("{:<26} {:<62} {:>11} {:>11} {:>8} {:>5}  {}\n", "study", "figure", "published", "simulated",
                     "error", "tol", "holds");
  for (const FidelityRow& r : rows) {
    if (!r.published) continue;
    out << fmt::format("{:<26} {:<62} {:>11} {:>11} {:>8} {:>4.0f}%  {}\n", r.study, r.text, number_text(*r.published),
                       number_text(r.simulated), error_text(r), 100 * r.tolerance, verdict_text(r, "MISS"));
  }
  bool any_shape = false;
  for (const FidelityRow& r : rows) any_shape = any_shape || !r.published;
  if (!any_shape) return;
  out << "\nshape claims (the seed gives a direction or a bound, no value):\n";
  for (const FidelityRow& r : rows) {
    if (r.published) continue;
    out << fmt::format("{:<26} {:<62} {:>11} {:>17}  {}\n", r.study, r.text, number_text(r.simulated), r.expected,
                       r.holds ? "yes" : "MISS");
  }
}

std::string fidelity_markdown(const std::vector<FidelityRow>& rows, const std::string& markdown_path) {
  std::ostringstream md;
  const FidelitySummary s = summarize_fidelity(rows);
  md << "# Fidelity: the seed studies against their published figures\n\n";
  md << "`" << f3_line(s) << "`\n\n";
  md << "Error is (simulated - published) / published; a figure holds within its tolerance. A figure marked "
        "*input* is also a parameter of its run (the study sets it), so it is shown and left out of F3.\n\n";
  md << "| study | figure | seed | published | simulated | error | tolerance | holds |\n";
  md << "|---|---|---|---:|---:|---:|---|---|\n";
  for (const FidelityRow& r : rows) {
    if (!r.published) continue;
    md << "| " << cell(r.study) << " | " << cell(r.text) << " | " << cell(r.seed_words) << " | "
       << number_text(*r.published) << " | " << number_text(r.simulated) << " | " << error_text(r) << " | "
       << cell(tolerance_text(r)) << " | " << verdict_text(r, "**miss**") << " |\n";
  }
  md << "\n## Shape claims\n\nThe seed gives a direction or a bound, not a value.\n\n";
  md << "| study | claim | seed | simulated | expected | holds |\n|---|---|---|---:|---|---|\n";
  for (const FidelityRow& r : rows) {
    if (r.published) continue;
    md << "| " << cell(r.study) << " | " << cell(r.text) << " | " << cell(r.seed_words) << " | "
       << number_text(r.simulated) << " | " << cell(r.expected) << " | " << (r.holds ? "yes" : "**miss**") << " |\n";
  }
  markdown_plots(rows, markdown_path, md);
  return md.str();
}

int run_fidelity(const FidelityArgs& args, std::ostream& out, std::ostream& err) {
  std::vector<FidelityRow> rows;
  for (const std::string& f : args.files) {
    Result<std::vector<FidelityRow>> r = read_fidelity_rows(f);
    if (!r.ok()) {
      err << r.status().message() << "\n";
      return k_exit_usage;
    }
    rows.insert(rows.end(), r->begin(), r->end());
  }
  print_fidelity(rows, out);
  const FidelitySummary s = summarize_fidelity(rows);
  if (s.figures == 0) err << "fidelity: no seed figure in these results (sl.claim with seed_value)\n";
  out << f3_line(s) << "\n";
  if (args.markdown.empty()) return k_exit_ok;
  const std::string text = fidelity_markdown(rows, args.markdown);
  std::ofstream md(args.markdown);
  md << text;
  md.close();
  if (!md) {
    err << "fidelity: cannot write " << args.markdown << "\n";
    return k_exit_failed;
  }
  out << "report written: " << args.markdown << "\n";
  return k_exit_ok;
}

}  // namespace sluice::analysis
