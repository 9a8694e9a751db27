-- Study 5 (docs/seeds.md#nvmesh-remote-nvme): 16 GPUs in one DGX-2-like box
-- with 8 x 100 Gb NICs reading from remote NVMe servers.
--   * pinned: each GPU's chunks stay on its own NIC (a connection limit per
--     NIC so high that the closest NIC never fills);
--   * dynamic: a small per-NIC connection window, so when a GPU's closest
--     NIC is busy its chunks overflow to the others (BeeGFS multirail);
--   * bursting: only a few GPUs active; dynamic sharing lets them use the
--     whole 100 GB/s, pinning leaves NICs idle.
-- Then egress congestion: small reads from every GPU converging on the
-- servers' ports, with and without the storage servers' read rate limiter.
-- Seed: ~100 GB/s of network (8 x 100 Gb) vs ~25 GB/s from 8 local drives;
-- GPUs should share all NICs and burst; a rate limiter prevents egress
-- congestion without idling the link.
-- Reduced run (CI): --set files=32 --set file_size=16MiB --set active_gpus=2,16 --set servers=2
local sl = require "sluice"
local study = require "study"

local P = sl.params{
  servers = {"remote NVMe servers (8 drives, 2 x 100 Gb each)", 4},
  files = {"files read per test, all GPUs together", 1024},
  file_size = {"file size", "64MiB"},
  active_gpus = {"GPUs reading at once", {2, 16}},
  pinned_window = {"connections per NIC that never fill (pinned)", 4096},
  shared_window = {"connections per NIC before overflowing (dynamic)", 4},
  small_block = {"read size of the congestion test", "64KiB"},
  egress_limit = {"storage server egress limit of the limiter run", "11GB/s"},
}

local box = sl.machines.dgx2_like()
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = 2, nvmes = 8, nic_gbps = 100 }
local machines = { box }
local servers = {}
for i = 1, P.servers do
  machines[#machines + 1] = server
  servers[#servers + 1] = i
end
local cluster = sl.cluster{ machines = machines, fabric = sl.fabric.infiniband{ gbps = 100 } }

local function fs(window, egress)
  return sl.fs.beegfs{ storage_nodes = servers, meta_nodes = {servers[1]}, mgmt_node = servers[1],
                       client_nodes = {0}, gds = "auto", rail_connections = window,
                       egress_limit_bytes_per_s = egress, stripe = { chunk = "1MiB", count = 8 } }
end

local function reads(block)
  return sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.file_size, block = block,
                                 threads = 4, buffer_kind = "gpu", ranks_per_node = P.active_gpus }
end

local pinned = sl.run{ backend = "sim", cluster = cluster, fs = fs(P.pinned_window, 0), workload = reads("4MiB"), seed = 1,
                      label = "pinned", params = { nics = "pinned", egress_limit = "none" } }
sl.report{ pinned, phases = {"read"}, title = "pinned: one NIC per GPU" }
local shared = sl.run{ backend = "sim", cluster = cluster, fs = fs(P.shared_window, 0), workload = reads("4MiB"), seed = 1,
                      label = "dynamic", params = { nics = "shared", egress_limit = "none" } }
sl.report{ shared, phases = {"read"}, title = "dynamic: NICs shared" }
local all_gpus = P.active_gpus[#P.active_gpus]
local congest = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.file_size,
                                        block = P.small_block, threads = 16, buffer_kind = "gpu",
                                        ranks_per_node = all_gpus }
local open = sl.run{ backend = "sim", cluster = cluster, fs = fs(P.shared_window, 0), workload = congest, seed = 1,
                    label = "small reads, no limiter", params = { nics = "shared", egress_limit = "none" } }
local limited = sl.run{ backend = "sim", cluster = cluster, fs = fs(P.shared_window, P.egress_limit), workload = congest,
                        seed = 1, label = "small reads, limiter",
                        params = { nics = "shared", egress_limit = P.egress_limit } }
sl.report{ open, limited, phases = {"read"}, title = "small reads from all GPUs: no limiter, then " .. P.egress_limit }

print("")
sl.headlines("next to the NVMesh blog")
local few = P.active_gpus[1]
sl.headline(string.format("%d GPU(s) bursting: dynamic vs pinned read", few),
            study.gbs(study.rate(shared, {ranks_per_node = few}, "read")) .. " vs " ..
            study.gbs(study.rate(pinned, {ranks_per_node = few}, "read")), "sharing lets few GPUs burst to ~100 GB/s")
sl.headline(string.format("%d GPUs: dynamic vs pinned read", all_gpus),
            study.gbs(study.rate(shared, {ranks_per_node = all_gpus}, "read")) .. " vs " ..
            study.gbs(study.rate(pinned, {ranks_per_node = all_gpus}, "read")), "~100 GB/s of network")
sl.claim{string.format("%d GPU(s) bursting: dynamic / pinned read rate", few),
         measured = study.rate(shared, {ranks_per_node = few}, "read") / study.rate(pinned, {ranks_per_node = few}, "read"),
         at_least = 1.0, seed = "GPUs should share all NICs and burst to the aggregate"}
if P.servers >= 4 and all_gpus == 16 then  -- enough servers' ports to fill the box's 8 NICs
  sl.claim{"16 GPUs, NICs shared: read rate, bytes/s", measured = study.rate(shared, {ranks_per_node = all_gpus}, "read"),
           seed_value = 100e9, seed = "~100 GB/s of network (8 x 100 Gb)"}
end
local o, l = study.row(open, {}, "read"), study.row(limited, {}, "read")
if o and l then
  sl.headline(P.small_block .. " reads: p99 latency without / with limiter",
              string.format("%.0f us / %.0f us", o.latency_us_p99, l.latency_us_p99), "limiter removes congestion jitter")
  sl.headline(P.small_block .. " reads: throughput without / with limiter",
              study.gbs(o.last_bytes_per_s) .. " / " .. study.gbs(l.last_bytes_per_s), "without under-using the link")
end
study.check(study.concat(pinned, shared, open, limited))
