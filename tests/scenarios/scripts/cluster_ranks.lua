-- emulate_backend_test.sh: several client ranks per node on the multi-process
-- path (3 nodes; every node a client with 1 or 3 ranks), a file sweep whose
-- bytes are written and read back verified by each rank.
local sl = require "sluice"
local P = sl.params{ ranks = {"client ranks per node", {1, 3}}, files = {"files per rank", 4},
                     gds = {"GPU-direct mode (on, auto, off)", "auto"} }
local server = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 1, nic_gbps = 10 }
local cluster = sl.cluster{ machines = {server, server, server}, fabric = sl.fabric.ethernet{ gbps = 10 } }
local fs = sl.fs.beeond{ stripe = { chunk = "256KiB", count = 2 }, gds = P.gds }
for _, ranks in ipairs(P.ranks) do
  local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = "1MiB", block = "256KiB",
                                        threads = 2, ranks_per_node = ranks }
  local r = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 1,
                    label = ranks .. " ranks/node", params = { ranks = ranks } }
  sl.report{ r, title = ranks .. " ranks per node" }
end
