// sl.compare's binding (ScriptOptions::compare, scenarios/lua/lua_script.hpp)
// for the programs that run scripts: `sluice run` (scenarios/cli/run_command.cpp) and
// `sluice calibrate SCRIPT` (script_calibration.cpp).
//
// It lives here because this is the one library that links all three of its
// pieces: the Lua layer's contract (which must not include analysis/), the
// runner's result_codec (a RunResult as results.json's run object) and
// analysis (which reads that object back as a RunRecord and aligns it with
// the measured files: analysis::compare_with_measured).
//
// Thread-safety: none needed; called from the thread that runs the script.
#pragma once

#include <vector>

#include "analysis/run_record.hpp"
#include "core/common/status.hpp"
#include "scenarios/lua/lua_script.hpp"

namespace sluice::calibrate {

// RunResults as analysis reads them: each through results.json's run layout
// (scenario::to_json, then analysis::parse_runs), so a run compares the same
// here as from a results file. internal when one cannot be read back.
Result<std::vector<analysis::RunRecord>> to_run_records(const std::vector<scenario::RunResult>& results);

// ScriptOptions::compare: reads the request's files (analysis::load_results;
// a file that cannot be read is invalid_argument naming its argument,
// "measured[2]: cannot read x.json: ..."), compares, and gives the rows, the
// error percentiles and the text `sluice compare` prints, preceded by a note
// for each file that holds only part of its run (results.json "complete": false).
Result<scenario::ScriptComparison> compare_script_runs(const std::vector<scenario::RunResult>& predicted,
                                                       const scenario::ScriptCompareRequest& request);

}  // namespace sluice::calibrate
