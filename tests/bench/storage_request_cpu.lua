-- What one chunk request costs a storage server's thread (issue 19: a source
-- for the simulator's cpu.cost_ns_per_unit.storage_request). Two nodes: node
-- 0 runs mgmt, the metadata server and one storage server (posix, page
-- cache); node 1 a client whose `threads` threads write, then read, their
-- own file in blocks of `block` (one chunk each), so every request crosses
-- the transport and the storage thread does only the server's own work:
-- decode, queue, submit, the chunk's CRC32C, reply. `sluice run --backend hw`
-- records each kind of service's loop-thread CPU (cpu.storage_thread_ns) and
-- the storage requests (storage.requests) in results.json; their quotient is
-- a storage thread's CPU per request. docs/sim.md, "A storage server's CPU per
-- request", has the figures and what they hold besides the server's work.
local sl = require "sluice"

local P = sl.params{
  block = {"bytes of each request (the stripe chunk too; 64 KiB is the least chunk)", "64KiB"},
  threads = {"client threads, one file each", 8},
  file_size = {"bytes of each file", "64MiB"},
}

local node = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 1 }
local cluster = sl.cluster{ machines = { node, node } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1},
                         stripe = { chunk = P.block, count = 1 } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, threads = P.threads, files = P.threads,
                                      size = P.file_size, block = P.block, pattern_data = false }
local runs = sl.run{ backend = "hw", cluster = cluster, fs = fs, workload = sweep, seed = 1,
                     label = string.format("%s blocks, %d threads", P.block, P.threads) }
sl.report{ runs, title = "a storage server's CPU per chunk request" }
