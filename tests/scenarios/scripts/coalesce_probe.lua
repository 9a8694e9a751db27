-- docs/sim.md, "The runner's check": where merged requests distort. A BeeOND
-- write-then-read sweep of whole-file calls striped in 1 MiB chunks, so that
-- each call has size / (count x 1 MiB) pieces on each target. Run it with
-- --sim-coalesce off and on and compare the phases
-- (tests/scenarios/study_coalesce_test.sh does the same for a study).
local sl = require "sluice"
local P = sl.params{
  nodes = {"cluster nodes (one storage target each)", 2},
  files = {"files, all nodes together", 16},
  size = {"file size = block", "8MiB"},
  count = {"stripe count", 4},
}
local cluster = sl.cluster{ nodes = P.nodes, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beeond{ meta_servers = 1, stripe = { chunk = "1MiB", count = P.count, chooser = "randomized" } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.size, block = P.size }
local results = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 3, sim_coalesce = true,
                        sweep = { threads = {1, 2} } }
sl.report{ results, title = "coalescing probe" }
