-- One run of the R2 soak (issue 18; make soak-cluster, scripts/soak_cluster.sh):
-- a buddy-mirrored BeeGFS-like file system on 7 nodes, a client writing and
-- reading back (every byte verified) while the fault plan kills servers and
-- starts them again: a storage server (nodes 1-4) or the metadata server
-- (node 6, its namespace in the node's RocksDB store). Servers' nodes host
-- nothing else, so under `--backend cluster` each kill is a SIGKILL of the
-- process that hosts the server and each restart a new process on its
-- storage root. Which servers, when and for how long come from the seed (a
-- linear congruential generator: the script's own, so the plan is the same
-- in every world).
local sl = require "sluice"
local P = sl.params{
  seed = {"the run's seed: the kills' servers, times and outages", 1},
  files = {"files the client writes and reads back (96: the writes and reads outlast the kills)", 96},
  file_size = {"bytes per file", "2MiB"},
  kills = {"server kills in the run (each a storage server or the metadata server)", 2},
  partitions = {"partitions of a storage node from the rest (netns links: --backend emulate)", 0},
  loss = {"packet loss on every link while a partition may happen, probability (--backend emulate)", 0},
}

local state = P.seed % 2147483648
local function unit()
  state = (state * 1103515245 + 12345) % 2147483648
  return state / 2147483648
end

local faults = {}
local at_ms = 0
local plan = {}
for _ = 1, P.kills do
  at_ms = at_ms + 100 + math.floor(unit() * 600)
  local victim = math.floor(unit() * 5)
  local server = victim < 4 and ("storage:" .. victim) or "meta:0"
  local outage_ms = 200 + math.floor(unit() * 1200)
  faults[#faults + 1] = { at = at_ms .. "ms", kill = server, revive_after = outage_ms .. "ms" }
  plan[#plan + 1] = string.format("%s at %d ms for %d ms", server, at_ms, outage_ms)
  at_ms = at_ms + outage_ms
end

-- Partitions: one storage node cut from every other node for 100-600 ms,
-- starting inside the kills' span; loss on every link over the same span.
local span_ms = at_ms
for _ = 1, P.partitions do
  local from_ms = math.floor(unit() * math.max(span_ms, 1))
  local victim = 1 + math.floor(unit() * 4)
  local cut_ms = 100 + math.floor(unit() * 500)
  faults[#faults + 1] = { at = from_ms .. "ms", partition = { "node" .. victim }, for_ = cut_ms .. "ms" }
  plan[#plan + 1] = string.format("node%d cut at %d ms for %d ms", victim, from_ms, cut_ms)
end
if P.loss > 0 then
  faults[#faults + 1] = { at = "0ms", message_loss = P.loss, for_ = math.max(span_ms, 1) .. "ms" }
  plan[#plan + 1] = string.format("loss %g for %d ms", P.loss, span_ms)
end

local cluster = sl.cluster{ nodes = 7, node = sl.machines.generic{ gpus = 1, nics = 1, nvmes = 1 },
                            fabric = sl.fabric.ethernet{ gbps = 10 } }
local fs = sl.fs.beegfs{
  storage_nodes = {1, 2, 3, 4}, meta_nodes = {6}, mgmt_node = 5, client_nodes = {0},
  stripe = { chunk = "512KiB", count = 2 },
  mirror = { heartbeat = "200ms", probably_offline_after = "1s", offline_after = "2s" },
}
local r = sl.run{ cluster = cluster, fs = fs,
                  workload = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.file_size,
                                                     threads = 4 },
                  faults = faults, seed = P.seed, label = "soak " .. P.seed,
                  params = { seed = P.seed, plan = table.concat(plan, "; ") } }
sl.report{ r, title = "soak " .. P.seed .. ": " .. table.concat(plan, "; ") }
