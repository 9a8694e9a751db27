-- sl.peak against peak_test.cpp's fake runner (its rates saturate at a known
-- concurrency): the knee, its bound, the step limit, and headlines with a row.
local sl = require "sluice"
local P = sl.params{
  threads = {"threads at the start", 1},
  files = {"files per rank at the start", 2},
  phase = {"the measured phase (\"\": the first bulk phase)", "read"},
  steps = {"max_steps", 8},
}
local c = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(), fabric = sl.fabric.infiniband{ gbps = 100 } }
local w = sl.workload.file_sweep{ op = {"write", "read"}, threads = P.threads, files_per_rank = P.files }
local peak = sl.peak{ run = { cluster = c, fs = sl.fs.beeond{}, workload = w, seed = 5 }, axis = "threads",
                      phase = P.phase ~= "" and P.phase or nil, max_steps = P.steps }
sl.headline("peak", string.format("knee=%s %s=%d %s %s of_bound=%.2f steps=%d points=%d", tostring(peak.knee),
                                  peak.axis, peak.value, peak.phase, sl.format_rate(peak.rate), peak.of_bound,
                                  peak.steps, #peak.points))
sl.headline("stopped", peak.stopped)
local first = peak.points[1]
sl.headline("read row", "x", "y", sl.phase(first, "read"))
sl.headline("write row", "x", "y", sl.phase(first, "write"))
