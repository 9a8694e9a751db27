-- cluster_backend_test.sh: an md_bench study (mdtest-like creates and stats in one
-- shared directory) on 3 nodes, 1 and 2 metadata shards, for --backend cluster.
local sl = require "sluice"
local P = sl.params{ shards = {"metadata shards", {1, 2}}, files = {"entries", 600} }
local server = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 1, nic_gbps = 100 }
local cluster = sl.cluster{ machines = {server, server, server}, fabric = sl.fabric.infiniband{ gbps = 100 } }
for _, shards in ipairs(P.shards) do
  local fs = sl.fs.lustre_like{ meta_servers = shards, dir_stripe_count = shards, dir_auto_split = false,
                                client_nodes = {0, 1, 2} }
  local md = sl.workload.md_bench{ label = "mdtest", shared_dir = true, files = P.files, threads = 8,
                                   phases = {"create", "stat"}, remove_dirs = false, root_dir = "/mdtest" }
  local r = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = md, seed = 1, label = shards .. " MDS",
                    params = { shards = shards } }
  sl.report{ r, title = shards .. " shards" }
end
