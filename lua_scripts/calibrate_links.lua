-- Calibration study (issue 8, F1): a client node reading and writing files
-- striped over storage nodes through one shaped Ethernet-like link per node.
-- `sluice calibrate` runs it twice, once per point set:
--   set = "fit"      links of fit_links Mb/s x stripe counts fit_stripes x
--                    file sizes fit_sizes: measured, then used to fit the sim
--                    profile (link bandwidth factor, latency, per-request costs);
--   set = "holdout"  a link rate, stripe count and file size the fit never saw
--                    (holdout_link, holdout_stripes, holdout_sizes): measured,
--                    then predicted by the simulator with the fitted profile.
-- Node 0 runs mgmt, the metadata server and the client (one rank); nodes
-- 1..nodes-1 are storage servers with one target each (as `sluice emulate`).
--   sluice calibrate lua_scripts/calibrate_links.lua --backend emulate --profile netns
-- Reduced run (CI): --set files=2 --set fit_sizes=4MiB,12MiB --set holdout_sizes=6MiB,10MiB
-- It also runs on its own (`sluice run ... --set set=holdout`), in sim by default.
local sl = require "sluice"

local P = sl.params{
  set = {"which points: fit or holdout", "fit"},
  nodes = {"nodes: one client node + storage nodes", 4},
  fit_links = {"link rates of the fit points, Mb/s", {200, 500}},
  fit_stripes = {"stripe counts of the fit points", {1, 2}},
  fit_sizes = {"file sizes of the fit points", {"4MiB", "12MiB"}},
  holdout_link = {"link rate of the held-out points, Mb/s", 300},
  holdout_stripes = {"stripe counts of the held-out points", {3}},
  holdout_sizes = {"file sizes of the held-out points", {"8MiB"}},
  files = {"files the client writes, then reads", 4},
  chunk = {"stripe chunk size", "1MiB"},
  block = {"bytes per read/write call", "4MiB"},
  threads = {"files in flight", 2},
}

if P.set ~= "fit" and P.set ~= "holdout" then
  error("set must be \"fit\" or \"holdout\", not \"" .. tostring(P.set) .. "\"")
end

-- Node 0 has no drive (client, mgmt, metadata); storage nodes have one. The
-- NICs are far faster than the links, so the shaped link is the bottleneck.
local client_node = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 0, nic_gbps = 10 }
local storage_node = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 1, nic_gbps = 10 }
local machines = { client_node }
local storage = {}
for i = 1, P.nodes - 1 do
  machines[#machines + 1] = storage_node
  storage[#storage + 1] = i
end

local function as_list(v)
  if type(v) == "table" then return v end
  return { v }
end

local links = P.set == "fit" and as_list(P.fit_links) or { P.holdout_link }
local stripes = as_list(P.set == "fit" and P.fit_stripes or P.holdout_stripes)
local sizes = as_list(P.set == "fit" and P.fit_sizes or P.holdout_sizes)

for _, mbit in ipairs(links) do
  local cluster = sl.cluster{ machines = machines,
                              fabric = sl.fabric.ethernet{ rate = string.format("%gMb/s", mbit) } }
  for _, count in ipairs(stripes) do
    local fs = sl.fs.beegfs{ storage_nodes = storage, meta_nodes = {0}, mgmt_node = 0, client_nodes = {0},
                             stripe = { chunk = P.chunk, count = count } }
    -- A list of sizes is a sweep axis of the workload: one point per size.
    local sweep = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = sizes,
                                          block = P.block, threads = P.threads }
    local runs = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = sweep, seed = 1,
                         params = { link_mbit = mbit, stripe_count = count } }
    sl.report{ runs, title = string.format("%s points, link %g Mb/s, stripe count %d", P.set, mbit, count) }
  end
end
