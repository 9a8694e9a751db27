local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.dgx_a100() }
local fs = sl.fs.beegfs{}
local w = sl.workload.file_sweep{ files = 16 }
sl.run{ cluster = cluster, fs = fs, workload = w }
