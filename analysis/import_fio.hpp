// fio's JSON output as sluice runs: `fio --output-format=json` and `json+`
// (fio HOWTO, "Interpreting the output" / "JSON output" and "JSON+ output";
// the fields are those of fio's stat.c show_thread_status_json).
//
// Runs: one per fio job, i.e. per (groupid, jobname): the numjobs clones of a
// job are its ranks (one entry each, or one entry already summed over them
// with group_reporting). Text that fio printed before the JSON ("note: ..."
// lines on stdout) is skipped.
// Params (file_sweep style): rw, bs_bytes (or bs verbatim when it is not one
// size: "4k,64k", "4k-16k"), iodepth, numjobs, direct, ioengine, size_bytes
// (or size verbatim: "50%"), rwmixread; fio's defaults where the job leaves
// them out (rw=read, bs=4k, iodepth=1, numjobs=1, direct=0). Sizes follow
// fio's kb_base rule (fio_size_bytes). Global options (a job file's [global])
// are overridden by the job's own.
// Phases: "read", "write", "trim" (workload file_sweep), each direction the
// job did I/O in, over its clones, with sluice's first/last-done definitions
// (core/workloads/phase_summary.hpp):
//   bytes = sum io_bytes, ops = sum total_ios, last_done_s = max runtime,
//   last_bytes_per_s = bytes / last_done_s (fio's own bw_bytes for one entry:
//   fio computes it as io_bytes x 1000 / runtime_ms), first_done_s = min
//   runtime and first_* as phase_summary.hpp estimates them;
//   latency_us_p50/p99 = clat_ns percentiles 50/99 (completion latency):
//   json+: computed from the clones' merged clat bins exactly as fio does
//   (fio_histogram_percentile_ns); json with one entry: fio's own; json with
//   several clones: the largest clone's, an upper bound of the merged
//   percentile (source.latency_percentiles says which);
//   extra: latency_us_mean (N-weighted over clones), latency_us_min, _max.
// A job with a non-zero "error" is a failed run naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/import_input.hpp"
#include "analysis/import_record.hpp"

namespace sluice::analysis {

// Limit: latency bins of one phase after merging clones (fio 3 keeps 1856
// buckets a direction, FIO_IO_U_PLAT_NR).
inline constexpr std::size_t k_fio_max_latency_bins = 65536;

// Throws ImportError naming the file and the field path.
std::vector<ImportedRun> import_fio(const ImportInput& input);

// A fio size in bytes: a number with an optional unit k/m/g/t/p (any case),
// optionally followed by "i" and/or "b". With kb_base=1024 (fio's default,
// "compatibility mode") k/kb are powers of 2 and the IEC kib powers of 10;
// with kb_base=1000 it is the other way round (fio HOWTO, kb_base; checked
// with fio 3.33: bs=4KiB moves 4000-byte blocks). nullopt when the text is
// not one size (a list, a range, a percentage) or kb_base is neither.
std::optional<std::uint64_t> fio_size_bytes(std::string_view text, unsigned kb_base = 1024);

// The pct percentile (0..100] of a latency histogram as fio computes it
// (stat.c calc_clat_percentiles): the first bin value whose cumulative count
// reaches pct/100 x total. bins: (value_ns, count) sorted by value. NaN when empty.
double fio_histogram_percentile_ns(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& bins, double pct);

}  // namespace sluice::analysis
