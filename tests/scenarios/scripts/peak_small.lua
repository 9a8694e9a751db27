-- peak_sim_test.sh: sl.peak on the simulator, small enough for CI (well under a
-- second): one storage node of 2 drives (3 GB/s read, 2 GB/s write each)
-- behind a 100 Gb/s NIC, two clients; threads double from `threads` until
-- the phase's rate grows by less than 2% (writes: the drives bind).
local sl = require "sluice"
local P = sl.params{
  threads = {"files in flight per rank at the start", 1},
  steps = {"max_steps of the search", 8},
  phase = {"the measured phase", "write"},
  axis = {"the concurrency axis", "threads"},
}
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 2, nic_gbps = 100,
                                    nvme_read_bytes_per_s = "3GB/s", nvme_write_bytes_per_s = "2GB/s" }
local client = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 0, nic_gbps = 100 }
local cluster = sl.cluster{ machines = {server, client, client}, fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1, 2},
                         stripe = { chunk = "1MiB", count = 2 } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files_per_rank = 2 * P.threads, size = "8MiB",
                                      block = "1MiB", threads = P.threads }
local peak = sl.peak{ run = { backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 1 },
                      axis = P.axis, phase = P.phase, max_steps = P.steps }
print(string.format("returned: knee=%s %s=%d of_bound=%.2f points=%d", tostring(peak.knee), peak.axis, peak.value,
                    peak.of_bound, #peak.points))
