-- MLPerf Storage's training question for unet3d (issue 52 item 2): how many
-- emulated H100 accelerators does this storage feed? For each client node
-- count, sl.mlperf finds the most accelerators that keep the accelerator
-- utilisation (AU) at the config's threshold (metric.au = 0.90) and reports
-- them as MLPerf Storage does: accelerators, throughput (MiB/s), AU, clients
-- (results.json's mlperf, mlperf.csv), with AU against accelerators plotted
-- (mlperf_unet3d_au.svg).
--
-- The workload is MLPerf Storage v1.0's unet3d H100 config
-- (lua_scripts/mlperf/unet3d_h100.yaml: 7 samples of ~140 MB a step,
-- 0.323 s of compute), so one accelerator at AU 0.9 reads about
-- 7 x 146600628 / (0.323 / 0.9) = 2.86 GB/s; the storage is one BeeGFS server
-- with server_nics NICs of nic_gbps, so one NIC of 100 Gb/s (12.5 GB/s)
-- feeds about 4. The defaults run in seconds in simulation: two client
-- counts, at most 8 accelerators a client, one epoch of a dataset just large
-- enough for two steps at the largest count (an MLPerf submission sizes its
-- dataset to 5x the clients' memory instead: set files), and each sample's
-- bytes and each step's compute time (and their spreads: the config's
-- record_length_bytes_stdev) divided by shrink = 16: the same bytes
-- per second per accelerator, so the same count, in 1/16 of the simulated
-- bytes (shrink = 1 runs the config's own sizes, minutes).
--   sluice run lua_scripts/mlperf_unet3d.lua --set clients=1,2,4 --set max_accelerators=16 --set server_nics=4
local sl = require "sluice"
local P = sl.params{
  clients = {"client node counts to search", {1, 2}},
  max_accelerators = {"the most accelerators per client node to try", 8},
  server_nics = {"NICs of the storage server", 1},
  nic_gbps = {"rate of every NIC, Gb/s", 100},
  server_drives = {"NVMe drives of the storage server", 8},
  files = {"samples in the dataset (dataset.num_files_train; 0: two steps at the largest count)", 0},
  shrink = {"the config's sample bytes and compute time divided by this (the rate an accelerator needs kept)", 16},
}
assert(P.shrink >= 1, "shrink: 1 or more")
local config = "mlperf/unet3d_h100.yaml"
local as_given = sl.workload.dlio{ config = config }
local most_clients = 0
for _, c in ipairs(P.clients) do most_clients = math.max(most_clients, c) end
local files = P.files > 0 and P.files or 2 * as_given.batch_samples * P.max_accelerators * most_clients
local client = sl.machines.generic{ sockets = 1, gpus = P.max_accelerators, nics = 1, nvmes = 0, nic_gbps = P.nic_gbps }
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = P.server_nics, nvmes = P.server_drives,
                                    nic_gbps = P.nic_gbps }
local machines, clients = {server}, {}
for n = 1, most_clients do
  machines[#machines + 1] = client
  clients[#clients + 1] = n
end
local cluster = sl.cluster{ machines = machines, fabric = sl.fabric.infiniband{ gbps = P.nic_gbps } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = clients }
local unet = sl.workload.dlio{
  config = config,
  overrides = { ["dataset.num_files_train"] = files, ["train.epochs"] = 1,
                ["dataset.record_length_bytes"] = math.floor(as_given.sample_bytes / P.shrink),
                ["dataset.record_length_bytes_stdev"] = math.floor(as_given.sample_bytes_stdev / P.shrink),
                ["train.computation_time_stdev"] = as_given.compute_time_stdev / 1e9 / P.shrink,
                ["train.computation_time"] = as_given.compute_ns_per_step / 1e9 / P.shrink },
}
local search = sl.mlperf{ backend = "sim", cluster = cluster, fs = fs, workload = unet,
                          clients = P.clients, max_accelerators = P.max_accelerators }
search:plot("mlperf_unet3d_au.svg")
