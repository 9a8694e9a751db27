-- Calibration study (issue 22, F4): the simulator's drive model against fio on
-- this machine's drive. One node runs everything (mgmt, metadata, one storage
-- target on its one drive, one client rank); each point is a file_sweep whose
-- rank keeps `qd` files in flight, each written then read in blocks of `bs`:
-- the drive sees qd requests at a time, as fio with numjobs = qd.
-- `sluice calibrate` runs it twice, once per point set:
--   set = "fit"      block sizes fit_bs x queue depths fit_qd x accesses:
--                    measured by fio, then used to fit the drive model
--                    (latencies, occupancy, bandwidth factors, per-request rates);
--   set = "holdout"  block sizes and queue depths the fit never saw.
--   sluice calibrate lua_scripts/calibrate_disk.lua --backend fio --fio-dir /var/tmp/f4 --result F4 \
--     --fit-param disk.read_latency_ns ... (make bench-f4 gives the whole line)
-- What the simulated point adds to the drive (the model of sluice's own stack
-- on one node, which fio does not pay): two local messages per request (5 us
-- each), the servers' CPU per request (~1.5 us), and the copy from the storage
-- server's buffer to the client's (host memory, 10 GB/s). Reads are not
-- checksummed and writes carry no pattern, as fio's do not.
-- "access" is recorded on each point for fio (sequential or random); the
-- simulator's drive has no seek cost, so both run the same in simulation.
-- It also runs on its own in sim: sluice run lua_scripts/calibrate_disk.lua
local sl = require "sluice"

local P = sl.params{
  set = {"which points: fit or holdout", "fit"},
  fit_bs = {"block sizes of the fit points", {"4KiB", "64KiB", "1MiB", "16MiB"}},
  fit_qd = {"queue depths (files in flight) of the fit points", {1, 8, 64}},
  holdout_bs = {"block sizes of the held-out points", {"16KiB", "256KiB", "4MiB"}},
  holdout_qd = {"queue depths of the held-out points", {4, 32}},
  access = {"fio's access patterns measured", {"sequential", "random"}},
  phase_bytes = {"bytes each phase moves (all files together; at least one block per file)", "256MiB"},
  max_requests = {"requests each phase makes at most (small blocks move fewer bytes)", 4096},
  min_file_bytes = {"bytes each file holds at least (more requests than max_requests where needed)", "1MiB"},
}

if P.set ~= "fit" and P.set ~= "holdout" then
  error("set must be \"fit\" or \"holdout\", not \"" .. tostring(P.set) .. "\"")
end

local function as_list(v)
  if type(v) == "table" then return v end
  return { v }
end

-- The drive's datasheet rates stay the generic machine's; the fit scales them
-- (disk.read_bandwidth_factor, disk.write_bandwidth_factor).
local node = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 1 }
local cluster = sl.cluster{ machines = { node } }

local KiB = 1024
local phase_bytes = sl.size(P.phase_bytes)
local block_sizes = as_list(P.set == "fit" and P.fit_bs or P.holdout_bs)
local depths = as_list(P.set == "fit" and P.fit_qd or P.holdout_qd)

for _, access in ipairs(as_list(P.access)) do
  for _, bs_text in ipairs(block_sizes) do
    local bs = sl.size(bs_text)
    for _, qd in ipairs(depths) do
      -- Each file holds whole blocks; all files together move about phase_bytes in at most
      -- max_requests blocks (a phase of a fraction of a second is mostly fio's start and noise).
      -- Each file also holds at least min_file_bytes: with 64 files of 64 blocks
      -- (4 KiB at depth 64), fio's start of 64 jobs on this 2-core VM overlapped a
      -- phase of ~0.15 s and cut its rate by ~35% (101 MB/s with 256 KiB per file,
      -- 148-159 MB/s with 1 MiB, 144-164 MB/s with 4 MiB: fio 3.33 randwrite,
      -- psync, 2026-11-28), a cost the simulated point does not pay.
      local blocks = math.min(math.ceil(phase_bytes / bs), P.max_requests)
      local blocks_per_file = math.max(1, math.ceil(blocks / qd), math.ceil(sl.size(P.min_file_bytes) / bs))
      local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {0},
                               stripe = { chunk = math.max(64 * KiB, bs), count = 1 },
                               max_active_per_target = math.max(8, qd), verify_reads = false }
      local sweep = sl.workload.file_sweep{ op = {"write", "read"}, threads = qd, files = qd,
                                            size = bs * blocks_per_file, block = bs, pattern_data = false }
      local runs = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 1,
                           label = string.format("%s %s qd%d", access, bs_text, qd),
                           params = { access = access, bs_bytes = bs, qd = qd } }
      sl.report{ runs, title = string.format("%s points: %s, %s blocks, %d in flight", P.set, access, bs_text, qd) }
    end
  end
end
