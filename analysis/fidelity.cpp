#include "analysis/fidelity.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "analysis/run_record.hpp"
#include "core/common/percentile.hpp"

namespace sluice::analysis {
namespace {

namespace fs = std::filesystem;

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;

// A seed figure whose error is not finite (its run failed) counts at this
// error in the median: a failed figure is a miss, not a figure left out.
constexpr double k_unmeasured_error_pct = 100.0;

// A claim of a results file as a row of the report.
FidelityRow row_of(const ClaimRecord& c, const ResultsFile& file) {
  FidelityRow row;
  row.study = file.scenario;
  row.results_file = file.path;
  row.text = c.text;
  row.seed_words = c.seed_words;
  row.holds = c.holds;
  row.simulated = c.measured;
  row.error = std::numeric_limits<double>::quiet_NaN();
  if (c.seed_value) {
    row.published = c.seed_value;
    row.tolerance = c.tolerance;
    row.tolerance_why = c.tolerance_why;
    row.model_input = c.model_input;
    if (std::isfinite(row.simulated)) row.error = (row.simulated - *c.seed_value) / std::fabs(*c.seed_value);
  } else if (c.at_least && c.at_most) {
    row.expected = fmt::format("in [{:.4g}, {:.4g}]", *c.at_least, *c.at_most);
  } else {
    row.expected = c.at_least ? fmt::format(">= {:.4g}", *c.at_least) : fmt::format("<= {:.4g}", *c.at_most);
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
  Result<ResultsFile> file = load_results(results_path);
  if (!file.ok()) return error(file.status().code(), "fidelity: " + file.status().message());
  if (!file->sluice_results || file->scenario.empty()) {
    return error(StatusCode::invalid_argument, "fidelity: " + results_path +
                                                   ": not the results of a study (a sluice-results document with "
                                                   "its \"scenario\")");
  }
  std::vector<FidelityRow> rows;
  for (const ClaimRecord& c : file->claims) rows.push_back(row_of(c, *file));
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
