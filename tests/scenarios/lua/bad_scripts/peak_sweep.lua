local sl = require "sluice"
local c = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(), fabric = sl.fabric.infiniband{ gbps = 100 } }
local w = sl.workload.file_sweep{ op = {"read"}, threads = {1, 2} }
sl.peak{ run = { cluster = c, fs = sl.fs.beeond{}, workload = w } }
