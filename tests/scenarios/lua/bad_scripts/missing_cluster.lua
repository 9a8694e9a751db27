local sl = require "sluice"
local fs = sl.fs.beeond{}
local w = sl.workload.md_bench{}
sl.run{ fs = fs, workload = w }
