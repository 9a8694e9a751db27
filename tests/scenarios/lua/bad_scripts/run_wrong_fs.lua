local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2() }
sl.run{ cluster = cluster, fs = "beeond", workload = sl.workload.md_bench{} }
