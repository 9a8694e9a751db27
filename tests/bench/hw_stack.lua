-- make bench-hw (P10, issue 20): one file sweep through the whole hardware
-- stack (client, transport, storage server, storage backend) on one node:
-- mgmt, one metadata server, one storage server with `targets` targets and a
-- client whose `threads` threads each write, then read, their own file in
-- blocks of `block`, one block in flight per thread. scripts/bench_hw.sh runs
-- it with --backend hw --storage-backend uring --storage-root DIR and fio with
-- the same pattern (numjobs = threads, one file each, bs = block, iodepth 1,
-- io_uring, O_DIRECT) in the same directory. The blocks carry no pattern
-- (fio's carry none that is checked); the file system's own checks stay on:
-- each chunk's CRC32C at the storage server and on the client's reads.
local sl = require "sluice"

local P = sl.params{
  block = {"bytes of each request (the stripe chunk too)", "1MiB"},
  threads = {"client threads, one file each", 4},
  file_size = {"bytes of each file", "256MiB"},
  targets = {"storage targets, all striped over (stripe count)", 4},
}

local node = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = P.targets }
local cluster = sl.cluster{ machines = { node } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {0},
                         stripe = { chunk = P.block, count = P.targets } }
local sweep = sl.workload.file_sweep{ op = {"write", "read"}, threads = P.threads, files = P.threads,
                                      size = P.file_size, block = P.block, pattern_data = false }
local runs = sl.run{ backend = "hw", cluster = cluster, fs = fs, workload = sweep, seed = 1,
                     label = string.format("%s blocks, %d threads", P.block, P.threads) }
sl.report{ runs, title = "the whole hardware stack (P10)" }
