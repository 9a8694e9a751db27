-- A BeeOND sweep as study 2 writes it, at toy size.
local sl = require "sluice"
local P = sl.params{
  nodes = {"cluster nodes", 4},
  sizes = {"file sizes", {"256KiB", "1MiB"}},
  meta = {"metadata servers", 1},
}
local cluster = sl.cluster{ nodes = P.nodes, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = P.meta,
                         stripe = { chunk = "512KiB", count = 4, chooser = "randomized" } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = 64, size = P.sizes, block = "1MiB" }
local results = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 7,
                        sweep = { threads = {1, 8, 32} } }
print("points", #results)
sl.report{ results, title = "toy" }
sl.headline("points run", #results, "6")
