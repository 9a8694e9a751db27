-- cli_test.sh: a toy BeeOND sweep on 2 nodes, small enough for CI (a second or two).
local sl = require "sluice"
local P = sl.params{
  nodes = {"cluster nodes", 2},
  files = {"files per test, all nodes together", 16},
  size = {"file size", "256KiB"},
}
local cluster = sl.cluster{ nodes = P.nodes, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = 1, stripe = { chunk = "128KiB", count = 2, chooser = "randomized" } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.size, block = "128KiB" }
local results = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 3,
                        sweep = { threads = {1, 2} } }
sl.report{ results, title = "tiny sweep" }
