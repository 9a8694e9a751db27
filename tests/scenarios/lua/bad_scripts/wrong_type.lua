local sl = require "sluice"
local w = sl.workload.file_sweep{ threads = "many" }
