local sl = require "sluice"
local cluster = sl.cluster{ nodes = 1, node = sl.machines.generic{ gpus = 1, nics = 1, nvmes = 1 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, client_nodes = {0}, mirror = { storage = false, metadata = true } }
sl.run{ cluster = cluster, fs = fs, workload = sl.workload.md_bench{} }
