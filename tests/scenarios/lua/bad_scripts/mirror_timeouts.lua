local sl = require "sluice"
local cluster = sl.cluster{ nodes = 4, node = sl.machines.generic{ gpus = 1, nics = 1, nvmes = 1 } }
local fs = sl.fs.beegfs{ storage_nodes = {1, 2}, mirror = { heartbeat = "2s", probably_offline_after = "1s" } }
sl.run{ cluster = cluster, fs = fs, workload = sl.workload.md_bench{} }
