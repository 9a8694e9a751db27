-- mlperf_search_test.sh (ctest mlperf.search): sl.mlperf on a configuration
-- built to bind at a count computable by hand. One storage server with one
-- NIC of 5 Gb/s (625e6 bytes/s) feeds every accelerator; each accelerator
-- reads B = 2 samples of S = 4 MiB a step and computes c = 102.7 ms. Past
-- the link, a step of N accelerators takes N x B x S / R, so
--   AU(N) = min(1, c x R / (N x B x S))
-- and AU >= T = 0.9 holds up to N = c x R / (T x B x S) = 8.50: the largest
-- count is 8 accelerators, on one client node (8 per client) or on two (4
-- per client: the link is the server's, shared by both).
local sl = require "sluice"
local client = sl.machines.generic{ sockets = 1, gpus = 16, nics = 1, nvmes = 0, nic_gbps = 400 }
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 4, nic_gbps = 5 }
local cluster = sl.cluster{ machines = {server, client, client}, fabric = sl.fabric.infiniband{ gbps = 400 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1, 2},
                         stripe = { chunk = "1MiB", count = 4 } }
local train = sl.workload.train_epoch{ samples = 384, sample_bytes = "4MiB", samples_per_file = 1, batch_samples = 2,
                                       compute_ns_per_step = "102.7ms", read_threads = 4, setup_dataset = true,
                                       label = "bound" }
local search = sl.mlperf{ backend = "sim", cluster = cluster, fs = fs, workload = train, seed = 1,
                          clients = {1, 2}, max_accelerators = 12, au = 0.9 }
for _, row in ipairs(search.rows) do
  print(string.format("answer: clients=%d accelerators=%d per_client=%d au=%.4f probes=%d", row.clients,
                      row.accelerators, row.accelerators_per_client, row.au, row.probes))
end
search:plot("au.svg")
