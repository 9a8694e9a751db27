local sl = require "sluice"
local c = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(), fabric = sl.fabric.infiniband{ gbps = 100 } }
sl.run_all{ { cluster = c, fs = sl.fs.beeond{}, workload = sl.workload.file_sweep{ op = {"write"} } }, "oops" }
