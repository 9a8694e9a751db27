-- hw_interrupt_test.sh: one hardware point that runs for a long while (many
-- 4 KiB writes over loopback TCP), so a signal finds it running.
local sl = require "sluice"
local P = sl.params{ files = {"files", 4000} }
local node = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 1 }
local cluster = sl.cluster{ machines = { node, node }, fabric = sl.fabric.ethernet{ gbps = 10 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1},
                         stripe = { chunk = "64KiB", count = 1 } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = "256KiB", block = "4KiB" }
sl.run{ backend = "hw", cluster = cluster, fs = fs, workload = sweep, seed = 1, label = "long hw point" }
