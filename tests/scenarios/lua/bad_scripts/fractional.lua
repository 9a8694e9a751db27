local sl = require "sluice"
local w = sl.workload.md_bench{ files_per_rank = 2.5 }
