local sl = require "sluice"
local cluster = sl.cluster{ nodes = 4, node = sl.machines.azure_nd40rs_v2() }
local fs = sl.fs.beeond{ meta_nodes = {0, 5} }
local w = sl.workload.file_sweep{ files = 16 }
sl.run{ cluster = cluster, fs = fs, workload = w }
