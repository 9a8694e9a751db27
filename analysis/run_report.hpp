// A Markdown report of one or more result files: per parameter point and
// backend the median and spread (IQR, MAD, n) of each phase's throughput, the
// predicted-vs-measured comparison when two backends ran the same points,
// and the throughput plot (plotter.hpp) embedded as SVG with a PNG link.
// Without gnuplot the report says so in place of the figure.
#pragma once

#include <string>
#include <vector>

#include "analysis/run_record.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

struct ReportOptions {
  std::string out_dir;  // created if missing
  std::string title = "sluice run report";
  std::string x_param;  // plot axis; empty: the first numeric param that varies
  std::string phase = "read";
  // Said at the top of the report: one line per results file that is incomplete (incomplete_note).
  std::vector<std::string> incomplete_notes;
};

// Lines in the throughput-over-time plot (one per run, the first runs), and
// points per line (windows are averaged in groups to stay under it).
inline constexpr std::size_t k_max_progress_series = 12;
inline constexpr std::size_t k_max_plotted_windows = 64;

// Writes <out_dir>/report.md (+ throughput_<phase>.{svg,png,dat,gp} and
// progress_<phase>.{svg,png,dat,gp}, throughput over time); returns
// the report's path. invalid_argument: no run; io_error naming the file.
Result<std::string> write_run_report(const std::vector<RunRecord>& runs, const ReportOptions& options);

}  // namespace sluice::analysis
