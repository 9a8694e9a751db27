// elbencho result files as sluice runs: `--csvfile` and `--jsonfile`
// (elbencho source/Statistics.cpp: printPhaseResultsToStringVec writes a CSV
// row per phase after printISODateToStringVec and ProgArgs::getAsStringVec's
// configuration columns, under one header line of labels;
// printPhaseResultsAsJSON appends one JSON object per phase, written by
// boost::property_tree's write_json, which quotes every value).
//
// CSV columns are found by their header label, not by position, so rows of
// other elbencho versions read as long as the labels below exist; required:
// "operation", "time ms [first]", "time ms [last]". JSON records: phase_type,
// config, last_done (first_done optional), one object per line.
//
// Runs: consecutive phases with the same configuration (every configuration
// column/field, label and command line) form one run; a phase name seen again
// starts the next run (elbencho --iterations), a repeat of the same point.
// Params (file_sweep style): threads, hosts, bs_bytes (block size), size_bytes
// (file size), direct, random (0/1), iodepth, files, dirs (those present).
// Phases (workload file_sweep; ranks = threads x hosts): elbencho_phase_name
// of the operation; first/last done from elbencho's own "first done" and
// "last done" (the same definitions as sluice's, phase_summary.hpp):
//   *_done_s = time ms / 1000; *_bytes_per_s = MiB/s x 2^20 (CSV: elbencho
//   rounds MiB/s down to a whole number) or bytes/s (JSON); *_ops_per_s =
//   IOPS, or entries/s where no I/O was counted (metadata phases);
//   bytes = MiB x 2^20 (CSV, rounded down by elbencho) or bytes (JSON);
//   ops = round(IOPS x last done s) for I/O phases, else entries;
//   latency_us_p50/p99 = null (elbencho writes min/avg/max to these files);
//   extra: latency_us_mean/_min/_max (I/O latency, else entry latency),
//   entries, entries_per_s, cpu_pct where present.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/import_input.hpp"
#include "analysis/import_record.hpp"

namespace sluice::analysis {

// Throw ImportError naming the file and line (and, for JSON, the field path).
std::vector<ImportedRun> import_elbencho_csv(const ImportInput& input);
std::vector<ImportedRun> import_elbencho_json(const ImportInput& input);

// sluice's name of an elbencho phase (elbencho source/Common.h PHASENAME_*):
// WRITE -> write, READ -> read, MKDIRS -> mkdir, RMDIRS -> rmdir,
// RMFILES -> delete, STAT -> stat (file_sweep's phases); any other
// (SYNC, DROPCACHE, RWMIX70, ...) in lower case.
std::string elbencho_phase_name(std::string_view operation);

}  // namespace sluice::analysis
