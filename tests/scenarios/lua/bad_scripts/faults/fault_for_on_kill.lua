local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.generic{ nvmes = 1 } }
sl.run{ cluster = cluster, fs = sl.fs.beeond{}, workload = sl.workload.md_bench{},
        faults = { { kill = "storage:0", for_ = "3s" } } }
