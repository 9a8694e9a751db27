local sl = require "sluice"
local c = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(), fabric = sl.fabric.infiniband{ gbps = 100 } }
local w = sl.workload.md_bench{ files_per_rank = 4 }
sl.peak{ run = { cluster = c, fs = sl.fs.beeond{}, workload = w } }
