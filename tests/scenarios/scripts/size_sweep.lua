-- results_pandas_test.sh (docs/results.md's pandas example): four sim points,
-- file size x threads, well under a second in all. The sizes are a list
-- parameter (the script's own axis, kept in results.json's params and left
-- out of results.csv); each point's size is the sweep axis param_size.
local sl = require "sluice"
local P = sl.params{
  sizes = {"file sizes to sweep", {"256KiB", "1MiB"}},
  files = {"files per test, all nodes together", 8},
}
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = 1, stripe = { chunk = "128KiB", count = 2, chooser = "randomized" } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = "256KiB", block = "128KiB" }
sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 7, label = "size sweep",
        sweep = { size = P.sizes, threads = {1, 2} } }
