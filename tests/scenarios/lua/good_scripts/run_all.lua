-- sl.run_all: a loop's runs given at once (one call to the runner).
local sl = require "sluice"
local cluster = sl.cluster{ nodes = 2, node = sl.machines.azure_nd40rs_v2(),
                            fabric = sl.fabric.infiniband{ gbps = 100 } }
local runs = {}
for _, meta in ipairs({1, 2}) do
  local fs = sl.fs.beeond{ meta_servers = meta }
  local w = sl.workload.file_sweep{ op = {"write"}, files = 4, size = "1MiB", threads = {1, 2} }
  runs[#runs + 1] = { cluster = cluster, fs = fs, workload = w, label = meta .. " MDS", params = { meta = meta } }
end
local all = sl.run_all(runs)
sl.headline("entries", #all)
sl.headline("points of the second", #all[2])
sl.headline("meta of the second", all[2][1].params.meta)
