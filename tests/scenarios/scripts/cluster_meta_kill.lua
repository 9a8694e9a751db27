-- A metadata server killed mid-workload (issue 18, "Real crashes"): the
-- metadata server of shard 0 is alone on node 4, so under `--backend
-- cluster` / `--backend emulate` its kill is a SIGKILL of the process that
-- hosts it and its restart a new process that reopens its metadata store
-- (RocksDB under the node's storage root). The client writes files and reads
-- every byte back (verified), then mdtest-like creates and stats entries;
-- the stats find every acknowledged create.
--   mirrored=0: one metadata server, started again after outage_ms: every
--               acknowledged create and size must come back from its store;
--   mirrored=1: metadata buddy-mirrored (its second server on node 1, with
--               storage), meta:0 killed for good: the clients follow the
--               switchover and lose nothing.
local sl = require "sluice"
local P = sl.params{
  mirrored = {"metadata buddy mirroring (0 or 1)", 0},
  kill_at_ms = {"when meta:0 is killed, ms after the servers are up", 150},
  outage_ms = {"how long meta:0 stays dead (mirrored=0)", 1000},
  files = {"files the client writes and reads back", 16},
  file_size = {"bytes per file", "1MiB"},
  entries = {"mdtest entries created and stated", 400},
}
local cluster = sl.cluster{ nodes = 5, node = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 1 },
                            fabric = sl.fabric.ethernet{ gbps = 10 } }
local mirrored = P.mirrored == 1
local fs = sl.fs.beegfs{
  storage_nodes = {1, 2}, meta_nodes = {4}, mgmt_node = 3, client_nodes = {0},
  stripe = { chunk = "256KiB", count = 2 },
  mirror = mirrored and { metadata = true, heartbeat = "200ms", probably_offline_after = "1s",
                          offline_after = "2s" } or nil,
}
local kill = { at = P.kill_at_ms .. "ms", kill = "meta:0" }
if not mirrored then kill.revive_after = P.outage_ms .. "ms" end
local sweep = sl.workload.file_sweep{ label = "sweep", op = {"write", "read"}, files = P.files, size = P.file_size,
                                      threads = 4 }
local md = sl.workload.md_bench{ label = "mdtest", files = P.entries, threads = 4, phases = {"create", "stat"},
                                 remove_dirs = false, root_dir = "/mdtest", client_nodes = {0} }
local r = sl.run{ cluster = cluster, fs = fs, workloads = { sweep, md }, faults = { kill }, seed = 1,
                  label = mirrored and "meta:0 killed, mirrored" or "meta:0 killed and restarted",
                  params = { mirrored = P.mirrored } }
sl.report{ r, title = "meta:0 killed" }
