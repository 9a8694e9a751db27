local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2() }
local fs = sl.fs.beeond{}
local w = sl.workload.file_sweep{ files = 16 }
sl.run{ cluster = cluster, fs = fs, workload = w,
        sweep = { thread = {1, 8} } }
