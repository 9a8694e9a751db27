// The fidelity report (issue 19): how far the simulated studies are from the
// figures their seeds publish. Each seed study states a published figure as a
// claim with a seed value and a tolerance (sl.claim{..., seed_value =,
// tolerance =}, results.json "claims" of kind "seed_figure"); this reads those
// claims from the studies' results files and prints one table (study, figure,
// published, simulated, error, holds), the summary line
//   RESULT F3 median_err=<pct> within_tolerance=<n>/<m>
// and, on request, the same as Markdown with the studies' plots.
//
//   sluice fidelity RESULTS.json... [--markdown FILE]
//
// Shape claims (a direction or a bound, no published value) are listed apart
// and do not enter F3: there is no error to take the median of.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::analysis {

// One claim of one study's results file.
struct FidelityRow {
  std::string study;                // results.json "scenario"
  std::string text;                 // the claim's text
  std::string seed_words;           // the seed's own words ("~2x"), may be empty
  std::optional<double> published;  // seed figures only
  double tolerance = 0;             // seed figures only: relative
  std::string tolerance_why;
  bool model_input = false;  // the figure is a parameter of the run: shown, not in F3
  std::string expected;      // shapes: "in [a, b]", ">= a", "<= b"
  double simulated = 0;      // NaN when the run wrote null
  double error = 0;          // seed figures: (simulated - published) / |published|; NaN when not finite
  bool holds = false;
  std::string results_file;  // where it was read
};

// The claims of one results file, read by the reader of every command
// (load_results, run_record.hpp): invalid_argument naming the file and the
// field (or the line and column of a syntax error) for a file that is not a
// study's sluice-results document or has a run or claim of the wrong shape;
// io_error when it cannot be read.
Result<std::vector<FidelityRow>> read_fidelity_rows(const std::string& results_path);

struct FidelitySummary {
  std::size_t figures = 0;           // seed figures, less those that are inputs of their run
  std::size_t within_tolerance = 0;  // of them, those that hold
  double median_abs_err_pct = 0;     // over every seed figure; a non-finite error counts as 100%
};
FidelitySummary summarize_fidelity(const std::vector<FidelityRow>& rows);

// "RESULT F3 median_err=<pct> within_tolerance=<n>/<m>".
std::string f3_line(const FidelitySummary& summary);

// The plain-text table of seed figures, then the shape claims.
void print_fidelity(const std::vector<FidelityRow>& rows, std::ostream& out);

// The Markdown report: the table, the shape claims and every SVG plot found
// beside the results files (linked relative to the report's folder).
std::string fidelity_markdown(const std::vector<FidelityRow>& rows, const std::string& markdown_path);

struct FidelityArgs {
  std::vector<std::string> files;
  std::string markdown;  // empty: none
};
// 0: the report was printed (misses are data, not a failure); 2: a results
// file is missing or not a results file; 1: the Markdown cannot be written.
int run_fidelity(const FidelityArgs& args, std::ostream& out, std::ostream& err);

}  // namespace sluice::analysis
