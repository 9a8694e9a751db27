-- sweep_ranks_test.sh: six sim points in one sl.run, each 0.4 s at 2 MiB (6 s at
-- 8 MiB, the killed-rank case) of 4KiB blocks, to spread over mpirun ranks.
local sl = require "sluice"
local P = sl.params{
  size = {"file size", "2MiB"},
}
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = 1, stripe = { chunk = "128KiB", count = 2, chooser = "randomized" } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = 8, size = P.size, block = "4KiB" }
local results = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 5, label = "rank sweep",
                        sweep = { files = {8, 9, 10, 11, 12, 13} } }
sl.report{ results, title = "rank sweep" }
