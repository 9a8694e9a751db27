-- results_truth_test.sh: a headline of a tiny sweep, whose heading names the backend it ran on.
local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = 1, stripe = { chunk = "128KiB", count = 2 } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = 4, size = "256KiB", block = "128KiB" }
local results = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 3 }
print("")
sl.headlines("of a test")
sl.headline("read", sl.format_rate(sl.phase(results[1], "read").last_bytes_per_s), "-")
