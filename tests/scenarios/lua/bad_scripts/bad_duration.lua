local sl = require "sluice"
local w = sl.workload.train_epoch{ compute_ns_per_step = "10 sec" }
