local sl = require "sluice"
local w = sl.workload.md_bench{ phases = {"create", "stats"} }
