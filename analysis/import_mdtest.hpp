// mdtest's text output as sluice runs (mdtest source, hpc/ior src/mdtest.c:
// summarize_results prints "SUMMARY rate: (of N iterations)", a header
// "Operation  Max  Min  Mean  Std Dev", dashes, and one row per operation
// ("File creation", "Directory stat", "Tree removal", ...; with a colon after
// the name in mdtest 3.x, without in later versions); with -P also a
// "SUMMARY time:" table. Before it: "mdtest-X was launched with N total
// task(s) on M node(s)", "Command line used: ...", "N tasks, M files/directories").
//
// Runs: one per "SUMMARY rate:" table (a file may hold several mdtest runs),
// with the header lines above it. Params (md_bench style): ranks (tasks),
// files_per_rank (-n), iterations (-i, default 1), unique_dir (-u: 1/0),
// write_bytes (-w), read_bytes (-e), items_per_dir (-I), depth (-z),
// branch (-b) where given.
// Phases (workload md_bench; ranks = tasks), named after md_bench's phases:
// File creation -> create, File stat -> stat, File read -> read, File removal
// -> remove, Directory creation/stat/rename/removal -> dir_create, dir_stat,
// dir_rename, dir_remove, Tree creation/removal -> tree_create, tree_remove;
// any other row in lower case with '_' for spaces.
//   last_ops_per_s = the rate table's MEAN (ops/s over iterations);
//   extra: ops_per_s_max/_min/_stddev;
//   ops = the run's files/directories (for file and directory rows; 0 for
//   tree rows, which mdtest does not count);
//   last_done_s = the time table's mean where printed, else ops / rate
//   (derived); bytes = ops x -w (create) or x -e (read);
//   latencies and first done: null (mdtest does not report them here).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/import_input.hpp"
#include "analysis/import_record.hpp"

namespace sluice::analysis {

// Throws ImportError naming the file and line.
std::vector<ImportedRun> import_mdtest_text(const ImportInput& input);

// sluice's name of an mdtest operation ("File creation" -> "create"), as above.
std::string mdtest_phase_name(std::string_view operation);

}  // namespace sluice::analysis
