local sl = require "sluice"
local cluster = sl.cluster{ nodes = 4, node = sl.machines.azure_nd40rs_v2() }
local fs = sl.fs.beeond{ targets_per_node = 2 }
sl.run{ cluster = cluster, fs = fs, workload = sl.workload.md_bench{} }
