-- Regression (issue 25 item 8): a DGX H100-like client (8 GPUs, 8 x 400 Gb/s
-- NICs) reading from 16 storage nodes with GDS off and 512 chunks in flight
-- per client killed the point's child with SIGSEGV. The full form was
--   sluice run h1b.lua --backend sim --set stripes=16 --set gds=off --set files=256
--     --set file_size=16MiB --set threads=32 --set rail=64 --set inflight=512
-- this is it at a size a CI machine simulates in seconds.
local sl = require "sluice"

local P = sl.params{
  storage_nodes = {"storage nodes", 16},
  files = {"files, all ranks together", 64},
  file_size = {"size of every file", "16MiB"},
  threads = {"files in flight per rank", 32},
  inflight = {"client max_inflight_chunks", 512},
  rail = {"connections per NIC", 64},
  gds = {"GDS mode", "off"},
}

local dgx = sl.machines.generic{ sockets = 2, gpus = 8, nics = 8, nic_gbps = 400, nvmes = 8, pcie_gen = 5 }
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = 2, nic_gbps = 200, nvmes = 4 }
local machines = { dgx }
local storage = {}
for i = 1, P.storage_nodes do
  machines[#machines + 1] = server
  storage[#storage + 1] = i
end
local cluster = sl.cluster{ machines = machines, fabric = sl.fabric.infiniband{ gbps = 400 } }
local fs = sl.fs.beegfs{ storage_nodes = storage, meta_nodes = {1}, mgmt_node = 1, client_nodes = {0},
                         gds = P.gds, stripe = { count = P.storage_nodes },
                         max_inflight_chunks = P.inflight, rail_connections = P.rail }
local read = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.file_size,
                                     threads = P.threads, buffer_kind = "gpu", ranks_per_node = 8 }
sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = read, seed = 1 }
