-- Study 1 (docs/seeds.md#beegfs-and-gpudirect-storage): BeeGFS + GPUDirect
-- Storage on 2 DGX A100 and one BeeGFS building block (2 servers running
-- mgmt/metadata/storage, their NVMe standing in for the EF600 arrays) over a
-- 200 Gb/s InfiniBand switch. Read throughput into GPU memory vs GPU count and
-- I/O size, with GDS (the storage server RDMAs straight into GPU memory) and
-- without (bounce through a pinned host buffer and cudaMemcpy). Seed: GDS reads
-- ~2x the bounce path.
-- Reduced run (CI): --set gpus=1,8 --set sizes=1MiB --set files=64
local sl = require "sluice"
local study = require "study"

local P = sl.params{
  gpus = {"GPUs per DGX reading at once", {1, 2, 4, 8}},
  sizes = {"I/O sizes (one read call)", {"1MiB", "16MiB"}},
  files = {"files per test, all GPUs together", 1024},
  file_size = {"size of every file", "64MiB"},
  threads = {"files in flight per GPU", 4},
  server_drives = {"NVMe drives per storage server (stand-in for an EF600 half)", 12},
}

local dgx = sl.machines.dgx_a100()
local server = sl.machines.generic{ sockets = 2, gpus = 0, nics = 2, nvmes = P.server_drives, nic_gbps = 200,
                                    switches_per_socket = 2 }
local cluster = sl.cluster{ machines = { dgx, dgx, server, server },
                            fabric = sl.fabric.infiniband{ gbps = 200 } }

local results = {}
for _, gds in ipairs({"on", "off"}) do
  local fs = sl.fs.beegfs{ storage_nodes = {2, 3}, meta_nodes = {2, 3}, mgmt_node = 2, client_nodes = {0, 1},
                           gds = gds, stripe = { chunk = "1MiB", count = 4 } }
  local read = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.file_size,
                                       block = P.sizes, threads = P.threads, buffer_kind = "gpu",
                                       ranks_per_node = P.gpus }
  results[gds] = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = read, seed = 1,
                         label = "GDS " .. gds, params = { gds = gds } }
  sl.report{ results[gds], phases = {"read"}, title = "read into GPU memory, GDS " .. gds }
end

print("")
sl.headlines("next to the BeeGFS/NetApp blog")
local ratios = {}
for _, g in ipairs(P.gpus) do
  for _, size in ipairs(P.sizes) do
    local on = study.rate(results.on, {ranks_per_node = g, block = size}, "read")
    local off = study.rate(results.off, {ranks_per_node = g, block = size}, "read")
    if off > 0 then ratios[#ratios + 1] = on / off end
    sl.headline(string.format("%d GPU(s)/DGX, %s reads: GDS %s vs bounce %s", g, size, study.gbs(on), study.gbs(off)),
                study.ratio(on, off), "~2x")
  end
end
local sum = 0
for _, r in ipairs(ratios) do sum = sum + r end
sl.headline("mean GDS / bounce read ratio", #ratios > 0 and string.format("%.2fx", sum / #ratios) or "n/a", "~2x")
-- The seed figure: GDS reads ~2x the bounce path "across GPU counts and I/O
-- sizes", so the smallest and the largest ratio over the points are both
-- claimed at 2 (the bounce path pays the client's kernel->user CPU copy and
-- the extra host memory traffic; docs/sim.md "staging").
local worst, best = math.huge, 0
for _, r in ipairs(ratios) do worst, best = math.min(worst, r), math.max(best, r) end
sl.claim{"GDS / bounce read rate, smallest over GPU counts and sizes", measured = #ratios > 0 and worst or 0 / 0,
         seed_value = 2.0, seed = "roughly 2x across GPU counts and I/O sizes"}
sl.claim{"GDS / bounce read rate, largest over GPU counts and sizes", measured = #ratios > 0 and best or 0 / 0,
         seed_value = 2.0, seed = "roughly 2x across GPU counts and I/O sizes"}
study.check(study.concat(results.on, results.off))
