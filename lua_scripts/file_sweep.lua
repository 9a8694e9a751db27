-- A plain file sweep on a small cluster, for the multi-process path: node 0
-- hosts mgmt, the metadata server and the client; nodes 1..N-1 a storage
-- server with one target each. The client writes its files, then reads them
-- back, every byte checked against the written pattern (phase extra
-- verified_bytes). Sizes and counts are parameters (sluice describe lists them):
--   sluice run lua_scripts/file_sweep.lua --backend emulate --set link_gbps=0.15   # netns hosts, root
--   mpirun -np 4 sluice run lua_scripts/file_sweep.lua --backend cluster --set nodes=4  # one rank per node
-- In simulation (the default) it predicts the same sweep.
local sl = require "sluice"
local P = sl.params{
  nodes = {"nodes (node 0: mgmt, metadata and the client; the others storage)", 3},
  files = {"files the client writes, then reads", 8},
  file_size = {"bytes per file", "4MiB"},
  block = {"bytes per read or write call", "1MiB"},
  threads = {"files in flight", 4},
  chunk = {"stripe chunk", "1MiB"},
  stripe_count = {"targets per file (0: every storage target)", 0},
  link_gbps = {"rate of every node's network link, Gb/s (emulate: the shaped veth links)", 10},
}
assert(P.nodes >= 2, "nodes: at least 2 (a client node and a storage node)")
local client = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 0, nic_gbps = P.link_gbps }
local server = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 1, nic_gbps = P.link_gbps }
local machines, storage = {client}, {}
for n = 1, P.nodes - 1 do
  machines[#machines + 1] = server
  storage[#storage + 1] = n
end
local cluster = sl.cluster{ machines = machines, fabric = sl.fabric.ethernet{ gbps = P.link_gbps } }
local fs = sl.fs.beegfs{ mgmt_node = 0, meta_nodes = {0}, storage_nodes = storage, client_nodes = {0},
                         stripe = { chunk = P.chunk, count = P.stripe_count > 0 and P.stripe_count or #storage } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files_per_rank = P.files, size = P.file_size,
                                      block = P.block, threads = P.threads }
local results = sl.run{ cluster = cluster, fs = fs, workload = sweep }
sl.report{ results, title = "file sweep on " .. P.nodes .. " nodes" }
