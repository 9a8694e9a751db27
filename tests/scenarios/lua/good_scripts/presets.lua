-- Every file-system preset on one heterogeneous cluster; checks of the
-- result tables the runner's answers become.
local sl = require "sluice"
local server = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 2, nic_gbps = 100 }
local gpu = sl.machines.generic{ gpus = 4, nics = 2, nvmes = 0 }
local cluster = sl.cluster{ machines = { gpu, gpu, server, server }, fabric = sl.fabric.ethernet{ gbps = 25, latency = "2us" } }
assert(cluster.node_count == 4, "node_count")
assert(server.nvmes == 2 and gpu.gpus == 4, "machine counts")
assert(tostring(cluster):find("star"), tostring(cluster))
local w = sl.workload.train_epoch{ samples = 64, sample_bytes = "1MiB", compute_ns_per_step = "5ms" }
assert(w.sample_bytes == "1MiB" and w.type == "train_epoch" and w.kind == "workload")
for _, fs in ipairs({ sl.fs.beegfs{ gds = "off" }, sl.fs.lustre_like{ meta_servers = 2, dir_stripe_count = 2 },
                      sl.fs.gekkofs_like{}, sl.fs.beeond{ storage_nodes = {2, 3}, targets_per_node = 1 } }) do
  local r = sl.run{ cluster = cluster, fs = fs, workload = w, backends = {"sim"}, seed = 3 }
  assert(#r == 1 and r[1].ok == true and r[1].seed == 3 and r[1].backend == "sim")
  local row = sl.phase(r[1], "read")
  assert(row and row.last_bytes_per_s == 2e9, "phase row")
  assert(sl.phase(r[1], "write") == nil)
end
assert(sl.size("1.5MiB") == 1572864 and sl.rate("100Gb/s") == 12.5e9)
assert(sl.format_size(65536) == "64KiB", sl.format_size(65536))
