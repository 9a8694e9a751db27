// IOR results as sluice runs: the JSON output (`ior -O summaryFormat=JSON`)
// and the text output's "Summary of all tests:" table (IOR source
// src/ior-output.c: PrintLongSummaryOneOperation writes one summary entry or
// row per test and operation; PrintHeader and ShowSetup the header, the
// "Command line", "Machine" and the "Options:" of each test).
//
// Runs: one per IOR test (TestID / "Test#"), with its write and read phases.
// Params (file_sweep style): ioengine (IOR's API: POSIX, MPIIO, ...),
// threads (tasks), tasks_per_node, bs_bytes (transfer size: the size of one
// I/O), block_bytes (IOR's block: contiguous bytes a task writes per
// segment), segments, size_bytes (block x segments: bytes per task),
// file_per_proc; from the JSON test's Parameters also direct (useO_DIRECT)
// and random (randomOffset).
// Phases ("write", "read"; workload file_sweep; ranks = tasks): IOR gives
// bandwidth over its repetitions as max/min/mean/stddev in MiB/s (2^20
// bytes). sluice takes the MEAN as the phase's rate:
//   last_bytes_per_s = Mean(MiB) x 2^20; last_ops_per_s = Mean(OPs);
//   last_done_s = Mean(s) (mean time of a repetition);
//   bytes = aggregate size of one repetition (xsizeMiB / aggs(MiB) x 2^20);
//   ops = bytes / transfer size; first done is not reported (null);
//   extra: bytes_per_s_max/_min/_stddev, ops_per_s_max/_min/_stddev, repetitions.
#pragma once

#include <vector>

#include "analysis/import_input.hpp"
#include "analysis/import_record.hpp"

namespace sluice::analysis {

// Throw ImportError naming the file and the field path (JSON) or line (text).
std::vector<ImportedRun> import_ior_json(const ImportInput& input);
std::vector<ImportedRun> import_ior_text(const ImportInput& input);

}  // namespace sluice::analysis
