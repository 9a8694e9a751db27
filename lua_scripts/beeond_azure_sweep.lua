-- Study 2 (docs/seeds.md#beeond-for-cosmoflow-on-azure): BeeOND on Azure
-- ND40rs_v2 nodes, measured with elbencho as in the NAG tutorial: 4 nodes,
-- every node a BeeOND storage server (its local NVMe) and a client, ONE
-- metadata server on node 0; file sizes 256 KiB .. 64 MiB, 1 .. 128 I/O threads
-- per node, 12,800 files per test. Claims to reproduce:
--   * metadata-limited regime: small files (256 KiB, 1 MiB) grow from 1 to
--     ~8 threads, then stall as the single metadata server saturates, and
--     more metadata servers help;
--   * bandwidth-limited regime: large files reach > 10 GB/s aggregate
--     (up to ~15 GB/s read, > 15 GB/s write) with many threads.
-- Reduced run (CI): sluice run beeond_azure_sweep.lua --set files=256
--   --set sizes=256KiB,16MiB --set threads=1,8 --set more_meta=2
local sl = require "sluice"
local study = require "study"

local P = sl.params{
  nodes = {"ND40rs_v2 nodes (each BeeOND storage server and client)", 4},
  files = {"files per test, all nodes together (elbencho -N x -t x hosts)", 12800},
  sizes = {"file sizes", {"256KiB", "1MiB", "16MiB", "64MiB"}},
  threads = {"I/O threads per node (elbencho -t)", {1, 8, 32, 128}},
  block = {"I/O size of one read/write call (elbencho -b); at most the file size", "1MiB"},
  more_meta = {"metadata servers of the comparison run for small files", 4},
  ib_gbps = {"InfiniBand link rate, Gb/s (EDR)", 100},
  buffered_writes = {"storage servers write through the page cache (write-back under the dirty budget, as "
                     .. "beegfs-storage does; the seed's writes were 'helped by caching')", true},
  between_phases = {"between two phases (elbencho --sync --dropcache, as the seed ran it): every storage "
                    .. "server writes back and drops its cache, timed outside the phases; 'nothing' to skip it",
                    "sync_dropcache"},
}

local cluster = sl.cluster{
  nodes = P.nodes,
  node = sl.machines.azure_nd40rs_v2(),
  fabric = sl.fabric.infiniband{ gbps = P.ib_gbps },
}

local function beeond(meta_servers)
  return sl.fs.beeond{
    meta_servers = meta_servers,
    stripe = { chunk = "512KiB", count = 4, chooser = "randomized" },  -- BeeGFS defaults
    buffered_writes = P.buffered_writes,
  }
end

local function elbencho(sizes)
  return sl.workload.file_sweep{
    op = {"write", "read"},
    files = P.files,
    size = sizes,
    block = P.block,
    threads = P.threads,
    -- elbencho gives every thread its own directory; BeeGFS spreads new
    -- directories over the metadata servers (random owner)
    dirs_per_rank = P.threads[#P.threads],
    between_phases = P.between_phases,
  }
end

-- The elbencho sweep with BeeOND's default single metadata server.
local main = sl.run{ backend = "sim", cluster = cluster, fs = beeond(1), workload = elbencho(P.sizes), seed = 1,
                    label = "1 MDS", params = { meta_servers = 1 } }
sl.report{ main, phases = {"write", "read"}, title = "BeeOND, 1 metadata server: aggregate throughput (GB/s) by file size and threads per node" }
  :plot("beeond_sweep.svg", { x = "threads", title = "BeeOND on 4 x ND40rs_v2, 1 metadata server (backend " .. main[1].backend .. ")" })

-- Small files again with more metadata servers.
local smallest = P.sizes[1]
local more = sl.run{ backend = "sim", cluster = cluster, fs = beeond(P.more_meta), workload = elbencho({smallest}),
                     seed = 1, label = P.more_meta .. " MDS", params = { meta_servers = P.more_meta } }
sl.report{ more, phases = {"write", "read"}, title = string.format("BeeOND, %d metadata servers, %s files", P.more_meta, smallest) }

local largest = P.sizes[#P.sizes]
local few, many = P.threads[1], P.threads[#P.threads]
local knee = P.threads[math.min(2, #P.threads)]
print("")
sl.headlines("next to the NAG tutorial's figures, docs/seeds.md#beeond-for-cosmoflow-on-azure")
for _, op in ipairs({"read", "write"}) do
  local at_few = study.rate(main, {size = smallest, threads = few}, op)
  local at_knee = study.rate(main, {size = smallest, threads = knee}, op)
  local at_many = study.rate(main, {size = smallest, threads = many}, op)
  sl.headline(string.format("%s %s files, 1 MDS, %d -> %d -> %d threads/node", smallest, op, few, knee, many),
              string.format("%s -> %s -> %s", study.gbs(at_few), study.gbs(at_knee), study.gbs(at_many)),
              "grows to ~8 threads, then stalls")
  local with_more = study.rate(more, {size = smallest, threads = many}, op)
  sl.headline(string.format("%s %s files at %d threads/node, %d MDS vs 1", smallest, op, many, P.more_meta),
              study.ratio(with_more, at_many), "more metadata servers help small files")
  -- Shapes: the seed gives directions for small files, no values.
  if knee > few then
    sl.claim{string.format("%s %s, 1 MDS: rate at %d / at %d threads per node", smallest, op, knee, few),
             measured = at_knee / at_few, at_least = 1.0, seed = "grows from 1 to 8 threads per node"}
  end
  if many > knee then
    sl.claim{string.format("%s %s, 1 MDS: rate at %d / at %d threads per node", smallest, op, many, knee),
             measured = at_many / at_knee, at_most = 1.0, seed = "then stalls and degrades"}
  end
  if P.more_meta > 1 and op == "read" then
    sl.claim{string.format("%s %s at %d threads: %d MDS / 1 MDS", smallest, op, many, P.more_meta),
             measured = with_more / at_many, at_least = 1.0, seed = "adding metadata servers would help small-file reads"}
  end
end
sl.headline(string.format("%s files, best aggregate read", largest), study.gbs(study.best_rate(main, {size = largest}, "read")),
            "> 10 GB/s, up to 15 GB/s", study.best_row(main, {size = largest}, "read"))
sl.headline(string.format("%s files, best aggregate write", largest),
            study.gbs(study.best_rate(main, {size = largest}, "write")), "> 15 GB/s (write-back caching)",
            study.best_row(main, {size = largest}, "write"))
if P.nodes == 4 then  -- the seed's figures are for 4 nodes
  sl.claim{string.format("%s files, best aggregate read, bytes/s", largest),
           measured = study.best_rate(main, {size = largest}, "read"), seed_value = 15e9,
           seed = "up to 15 GB/s read"}
  sl.claim{string.format("%s files, best aggregate write, bytes/s", largest),
           measured = study.best_rate(main, {size = largest}, "write"), at_least = 15e9,
           seed = "> 15 GB/s write (helped by caching)"}
end
study.check(study.concat(main, more))
