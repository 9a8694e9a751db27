-- interrupt_test.sh: three sim points one after the other (--jobs 1); the
-- first is small (about a second), the other two take minutes (4KiB blocks
-- over 16MiB files), so a SIGINT sent once the first has finished finds the
-- second running.
local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = 1, stripe = { chunk = "128KiB", count = 2, chooser = "randomized" } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = 8, size = "1MiB", block = "4KiB" }
sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 3, label = "three points",
        sweep = { size = {"1MiB", "16MiB", "17MiB"} } }
