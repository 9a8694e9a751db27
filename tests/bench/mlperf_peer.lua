-- make bench-mlperf (P15, issue 52 item 4): sluice's own train_epoch on the deployment that
-- scripts/bench_mlperf.sh mounts for DLIO: `sluice mount`'s default shape (node 0 mgmt, the
-- metadata server and the client; nodes 1 .. nodes-1 a storage server with one target each; every
-- node's link link_gbps; 1 MiB chunks striped over every target). The workload is MLPerf Storage's
-- unet3d config (config) with the overrides DLIO gets on its command line as
-- ++workload.KEY=VALUE: the bench passes the one list to both (--set overrides=KEY=VALUE,...).
-- --backend emulate runs it on netns nodes; the simulator (the default) predicts it.
-- Two settings differ from sl.workload.dlio's defaults, so that sluice does what DLIO does:
--   buffer_kind host: DLIO's PyTorch loader leaves each batch in host memory (no GPU is touched);
--   pattern_data false: DLIO checks no bytes it reads (the file system's own CRC32C checks stay on).
local sl = require "sluice"
local P = sl.params{
  nodes = {"nodes (node 0: mgmt, metadata and the client; the others storage)", 3},
  link_gbps = {"rate of every node's link, Gb/s (emulate: the shaped veth links)", 0.5},
  chunk = {"stripe chunk (sluice mount's default)", "1MiB"},
  config = {"the DLIO workload YAML", "../../lua_scripts/mlperf/unet3d_h100.yaml"},
  overrides = {"DLIO overrides KEY=VALUE, as DLIO's ++workload.KEY=VALUE",
               {"dataset.num_files_train=14", "train.epochs=1"}},
}
assert(P.nodes >= 2, "nodes: at least 2 (a client node and a storage node)")
local overrides = {}
for _, o in ipairs(P.overrides) do
  local key, value = string.match(o, "^([%w_.]+)=(.+)$")
  assert(key, "overrides: " .. o .. " is not KEY=VALUE")
  overrides[key] = value
end
local client = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 0, nic_gbps = P.link_gbps }
local server = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 1, nic_gbps = P.link_gbps }
local machines, storage = {client}, {}
for n = 1, P.nodes - 1 do
  machines[#machines + 1] = server
  storage[#storage + 1] = n
end
local cluster = sl.cluster{ machines = machines, fabric = sl.fabric.ethernet{ gbps = P.link_gbps } }
local fs = sl.fs.beegfs{ mgmt_node = 0, meta_nodes = {0}, storage_nodes = storage, client_nodes = {0},
                         stripe = { chunk = P.chunk, count = #storage } }
local train = sl.workload.dlio{ config = P.config, overrides = overrides, buffer_kind = "host", pattern_data = false }
local results = sl.run{ cluster = cluster, fs = fs, workload = train, seed = 1 }
sl.report{ results, title = "MLPerf Storage unet3d (DLIO config) on " .. P.nodes .. " nodes" }
