-- Study 9 (issue 9): what a storage server failure does to a pipeline, with
-- and without BeeGFS storage buddy mirroring. Four storage servers (one NVMe
-- each) on 10 GbE, one metadata server, one client node writing then reading
-- files striped over two targets (two buddy groups when mirrored).
--   calm:     no fault.
--   outage:   storage:0 dies early in the writes. Without mirroring it comes
--             back after `outage_s` (a reboot): its chunks wait for it, the
--             clients retry (3 attempts,
--             waiting 2, 4 and 8 s). With mirroring it never
--             comes back: mgmt marks it offline after mirror.offline_after,
--             switches its group over to the secondary, the clients resend
--             to the new primary, and every byte is still read back.
-- Mirroring is not free: every write crosses the network twice (client ->
-- primary -> secondary) before it is acknowledged.
--   meta_outage: metadata mirrored too (mirror.metadata: a second metadata
--             server on node 1); meta:0, the shard's primary, dies for
--             good early in the writes. mgmt switches the shard to its second
--             server, clients resend their creates and closes there (a resent
--             create is answered from the replicated reply cache), and every
--             file is still there to read.
-- A permanent failure without mirroring fails the run (try
-- --set outage_s=0 --set mirror_only=false): the reads of the dead
-- server's chunks end in timed_out naming the target.
-- Reduced run (CI): --set files=32
local sl = require "sluice"
local study = require "study"

local P = sl.params{
  files = {"files written and read by the client", 64},
  file_size = {"bytes per file", "8MiB"},
  threads = {"client threads", 4},
  kill_at_s = {"when storage:0 dies, seconds after the writes began", 0.2},
  outage_s = {"how long an unmirrored storage:0 stays down (0 = for good)", 3},
  offline_after_s = {"mgmt marks a silent server offline (and switches over) after this", 4},
}

local cluster = sl.cluster{ nodes = 6, node = sl.machines.generic{ gpus = 1, nics = 1, nvmes = 1 },
                            fabric = sl.fabric.ethernet{ gbps = 10 } }

local function fs(mirrored, metadata)
  return sl.fs.beegfs{
    storage_nodes = {1, 2, 3, 4}, meta_nodes = {5}, mgmt_node = 5, client_nodes = {0},
    stripe = { chunk = "512KiB", count = 2 },
    mirror = mirrored and { heartbeat = "500ms", probably_offline_after = "2s",
                            offline_after = P.offline_after_s .. "s", metadata = metadata } or nil,
  }
end

local function run(mirrored, fault, metadata)
  local kill = nil
  if fault then
    kill = { at = P.kill_at_s .. "s", kill = metadata and "meta:0" or "storage:0" }
    if not mirrored and P.outage_s > 0 then kill.revive_after = P.outage_s .. "s" end
  end
  local mirror = mirrored and (metadata and "data+metadata" or "data") or "none"
  local killed = fault and (metadata and "meta:0" or "storage:0") or "none"
  local title = (mirrored and (metadata and "data+metadata mirrored" or "buddy-mirrored") or "plain") .. ", " ..
                (fault and (killed .. " dies") or "calm")
  local r = sl.run{ cluster = cluster, fs = fs(mirrored, metadata),
                    workload = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files,
                                                       size = P.file_size, threads = P.threads },
                    faults = kill and { kill } or nil, seed = 1,
                    label = title, params = { mirror = mirror, killed = killed } }
  sl.report{ r, title = title }
  return r
end

local R = {
  plain_calm = run(false, false), plain_outage = run(false, true),
  mirror_calm = run(true, false), mirror_outage = run(true, true),
  meta_calm = run(true, false, true), meta_outage = run(true, true, true),
}

local function row(name, phase) return study.row(R[name], {}, phase) end
local function done_s(name, phase) local x = row(name, phase); return x and x.last_done_s or 0 end
local function bytes(name, phase) local x = row(name, phase); return x and x.bytes or 0 end
local function rate(name, phase) return study.rate(R[name], {}, phase) end

print("")
sl.headlines()
sl.headline("calm writes, mirrored / plain", study.ratio(rate("mirror_calm", "write"), rate("plain_calm", "write")),
            "< 1: every byte crosses the network twice")
sl.headline("writes done, plain, storage:0 down " .. P.outage_s .. " s",
            string.format("%.2f s (calm %.2f s)", done_s("plain_outage", "write"), done_s("plain_calm", "write")), "")
sl.headline("writes done, mirrored, storage:0 dead for good",
            string.format("%.2f s (calm %.2f s)", done_s("mirror_outage", "write"), done_s("mirror_calm", "write")), "")
sl.claim{"mirrored / plain write rate without faults", measured = rate("mirror_calm", "write") / rate("plain_calm", "write"),
         at_most = 1.0, seed = "BeeGFS: a mirrored write is acknowledged after the secondary has it"}
sl.claim{"mirrored, a server dead for good: bytes read back / written",
         measured = bytes("mirror_outage", "read") / math.max(1, bytes("mirror_calm", "write")),
         at_least = 1.0, at_most = 1.0, seed = "buddy mirroring: no acknowledged byte lost"}
sl.claim{"mirrored: the failover stall (s) lasts at least mgmt's offline timeout less one heartbeat",
         measured = done_s("mirror_outage", "write") - done_s("mirror_calm", "write"),
         at_least = P.offline_after_s - 0.5, seed = "switchover only after the primary is offline"}
sl.headline("writes done, metadata mirrored, meta:0 dead for good",
            string.format("%.2f s (calm %.2f s)", done_s("meta_outage", "write"), done_s("meta_calm", "write")), "")
sl.claim{"metadata mirrored, its primary dead for good: bytes read back / written",
         measured = bytes("meta_outage", "read") / math.max(1, bytes("meta_calm", "write")),
         at_least = 1.0, at_most = 1.0, seed = "BeeGFS metadata mirroring: no acknowledged create lost"}
sl.claim{"metadata mirrored: the failover stall (s) lasts at least mgmt's offline timeout less one heartbeat",
         measured = done_s("meta_outage", "write") - done_s("meta_calm", "write"),
         at_least = P.offline_after_s - 0.5, seed = "switchover only after the primary is offline"}
study.check(study.concat(R.plain_calm, R.plain_outage, R.mirror_calm, R.mirror_outage, R.meta_calm, R.meta_outage))
