-- cli_test.sh: a run whose point fails (the simulation's event budget is far too
-- small): results are still written, and sluice exits 1.
local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = 1 }
local sweep = sl.workload.file_sweep{ op = {"write"}, files = 8, size = "1MiB", block = "1MiB" }
sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 1, max_events = 100 }
