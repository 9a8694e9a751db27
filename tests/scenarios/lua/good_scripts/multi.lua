-- Two workloads, an explicit sweep over a file-system field and a workload
-- field, a fat tree; headlines.
local sl = require "sluice"
local P = sl.params{ gpus = {"GPUs per node", 2}, tag = {"a string", "x"}, fast = {"a flag", false} }
local dgx = sl.machines.dgx_a100()
local cluster = sl.cluster{ nodes = 4, node = dgx, topology = "fat_tree", nodes_per_leaf = 2, spines = 2,
                            fabric = sl.fabric.infiniband{ gbps = 200 } }
local fs = sl.fs.beegfs{ storage_nodes = {2, 3}, meta_nodes = {2}, client_nodes = {0, 1},
                         stripe = { chunk = "1MiB", count = 2, chooser = "roundrobin" }, gds = "on" }
local a = sl.workload.checkpoint_burst{ shard_bytes = "64MiB", ranks_per_node = P.gpus }
local b = sl.workload.gpu_stream{ direction = "playback", buffers = 16, client_nodes = {1} }
local r = sl.run{ cluster = cluster, fs = fs, workloads = { a, b }, sweep = { rail_connections = {2, 12} } }
sl.headline("points", #r, 2)
sl.headline("tag", P.tag)
