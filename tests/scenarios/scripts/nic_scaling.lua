-- Issue 48's configuration nobody tuned for: storage nodes with 2 sockets,
-- `nics` x `nic_gbps` NICs and 16 NVMe drives (7 GB/s read, 4 GB/s write);
-- clients with one 200 Gb/s NIC (client_nics); BeeGFS with 1 MiB chunks striped 16 ways.
-- `sluice bound` on it names what binds; `sluice run` on it says whether the
-- simulator reaches that bound as the servers get more NICs.
local sl = require "sluice"
local P = sl.params{
  servers = {"storage nodes", 4},
  clients = {"client nodes", 11},
  nics = {"NICs per storage node", 2},
  nic_gbps = {"rate of a storage node's NIC, Gb/s", 200},
  files = {"files per client node", 16},
  size = {"file size", "1GiB"},
  threads = {"files in flight per client rank", 16},
  client_nics = {"NICs per client node (one per socket on 2 sockets: 2)", 1},
}
local server = sl.machines.generic{ sockets = 2, gpus = 0, nics = P.nics, nvmes = 16, nic_gbps = P.nic_gbps,
                                    nvme_read_bytes_per_s = "7GB/s", nvme_write_bytes_per_s = "4GB/s" }
local client = sl.machines.generic{ sockets = 2, gpus = 0, nics = P.client_nics, nvmes = 0, nic_gbps = 200 }
local machines, servers, clients = {}, {}, {}
for i = 1, P.servers do
  machines[#machines + 1] = server
  servers[#servers + 1] = i - 1
end
for i = 1, P.clients do
  machines[#machines + 1] = client
  clients[#clients + 1] = P.servers + i - 1
end
local cluster = sl.cluster{ machines = machines, fabric = sl.fabric.infiniband{ gbps = math.max(P.nic_gbps, 200) } }
local fs = sl.fs.beegfs{ storage_nodes = servers, meta_nodes = {servers[1]}, mgmt_node = servers[1],
                         client_nodes = clients, stripe = { chunk = "1MiB", count = 16 } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files * P.clients, size = P.size,
                                      block = "4MiB", threads = P.threads }
local results = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 1 }
sl.report{ results, phases = {"write", "read"}, title = "issue 48: NICs per storage node" }
