-- Study 3 (docs/seeds.md#sharded-metadata): Lustre DNE metadata sharding. One
-- directory striped over 1, 4 or 16 metadata shards (MDTs, one per server);
-- clients create and stat files in it (mdtest), then every client runs `ls -l`
-- on it (readdir with attributes + a stat per entry): the metadata storm.
-- Seed: one MDT ~200,000 ops/s, 16 MDTs ~3.2 M ops/s; 1 M entries listed by
-- 10,000 clients saturate the metadata service (100,000 stats x 1 ms = 100 s).
-- Full scale (--set entries=1000000 --set clients=10000) is large; the
-- defaults keep the shape at a size a workstation simulates in minutes.
-- Reduced run (CI): --set shards=1,4 --set entries=512 --set clients=8 --set storm_clients=2
local sl = require "sluice"
local study = require "study"

local P = sl.params{
  shards = {"metadata shards (MDTs) to compare", {1, 4, 16}},
  servers = {"metadata/storage servers (a shard count above this wraps around them)", 16},
  clients = {"client nodes creating and stating", 64},
  entries = {"entries in the shared directory (all clients together)", 100000},
  threads = {"metadata operations in flight per client", 16},
  storm_clients = {"client nodes running ls -l at once (0: no storm)", 16},
}

local server = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 1, nic_gbps = 100 }
local client = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 0, nic_gbps = 100 }
local machines = {}
for i = 1, P.servers do machines[#machines + 1] = server end
for i = 1, P.clients do machines[#machines + 1] = client end
local cluster = sl.cluster{ machines = machines, fabric = sl.fabric.infiniband{ gbps = 100 } }

local client_nodes, storm_nodes = {}, {}
for i = 0, P.clients - 1 do client_nodes[#client_nodes + 1] = P.servers + i end
for i = 0, math.min(P.storm_clients, P.clients) - 1 do storm_nodes[#storm_nodes + 1] = P.servers + i end

-- One run per shard count, given at once (sl.run_all) so that they run
-- together: on the cores of this machine (--jobs) or over the ranks of
-- `mpirun -np N sluice run ...`.
local runs = {}
for _, shards in ipairs(P.shards) do
  -- The seed's striped directories hash names with fnv_1a_64: the only
  -- production hash of DNE2 (Lustre 2.8), still the default of
  -- lfs-setdirstripe(1) -H. lustre_like's own default, crush (Lustre 2.14+,
  -- for splits that move few names), maps names to 4,096 placement groups
  -- first, and the groups do not spread evenly: the busiest of 16 stripes
  -- holds 1.15x the mean, of 64 1.31x (docs/sim.md, "bench-sim P8"), which
  -- caps a saturated directory at mean / max of the linear rate.
  local fs = sl.fs.lustre_like{ meta_servers = shards, dir_stripe_count = shards, dir_auto_split = false,
                                dir_hash = "fnv_1a_64", client_nodes = client_nodes }
  local md = sl.workload.md_bench{ label = "mdtest", shared_dir = true, files = P.entries, threads = P.threads,
                                   phases = {"create", "stat"}, remove_dirs = false, root_dir = "/mdtest" }
  local storm = nil  -- the ls -l storm, unless storm_clients = 0
  if #storm_nodes > 0 then
    storm = sl.workload.md_bench{ label = "ls_storm", client_nodes = storm_nodes, shared_dir = true,
                                  files_per_rank = 0, threads = P.threads, phases = {"ls_storm"},
                                  storm_dir = "/mdtest/shared", remove_dirs = false, root_dir = "/mdtest" }
  end
  runs[#runs + 1] = { backend = "sim", cluster = cluster, fs = fs,
                      workloads = storm and { md, storm } or { md }, seed = 1,
                      label = shards .. " MDS", params = { shards = shards } }
end
local results = {}
for i, points in ipairs(sl.run_all(runs)) do
  local shards = P.shards[i]
  results[shards] = points
  sl.report{ points, title = string.format("%d metadata shard(s)", shards) }
end

print("")
sl.headlines("next to docs/seeds.md#sharded-metadata")
local base = P.shards[1]
for _, shards in ipairs(P.shards) do
  local create = study.ops(results[shards], {}, "create", "mdtest")
  local stat = study.ops(results[shards], {}, "stat", "mdtest")
  sl.headline(string.format("%d shard(s): create / stat rate", shards),
              study.kops(create) .. " / " .. study.kops(stat),
              shards == 1 and "~200 kops/s per MDT" or string.format("~%d kops/s (%d x 200k)", 200 * shards, shards))
  local storm = study.row(results[shards], {}, "ls_storm", "ls_storm")
  if storm then
    sl.headline(string.format("%d shard(s): ls -l of %d entries by %d clients", shards, P.entries, #storm_nodes),
                string.format("%.4f s", storm.last_done_s), "saturates the metadata service")
  end
  if shards ~= base then
    sl.headline(string.format("create rate %d vs %d shard(s)", shards, base),
                study.ratio(create, study.ops(results[base], {}, "create", "mdtest")), string.format("~%dx", shards / base))
    -- Linear: the seed's 16 MDTs give 16 x one MDT (3.2 M = 16 x 200 k).
    for _, op in ipairs({"create", "stat"}) do
      sl.claim{string.format("%s rate, %d / %d shard(s)", op, shards, base),
               measured = study.ops(results[shards], {}, op, "mdtest") / study.ops(results[base], {}, op, "mdtest"),
               seed_value = shards / base, seed = "near-linear: 16 MDTs ~3.2 M ops/s = 16 x 200 k"}
    end
  end
  -- The seed's own values: one MDT ~200,000 ops/s, 16 MDTs ~3.2 M ops/s.
  -- One MDT's is an input: the profile's MDT costs come from it
  -- (sim/sim_profile.hpp cost_ns_per_unit); 16 MDTs' is the prediction.
  local published = ({ [1] = 200e3, [16] = 3.2e6 })[shards]
  if published then
    for _, op in ipairs({"create", "stat"}) do
      sl.claim{string.format("%s rate, %d shard(s), ops/s", op, shards),
               measured = study.ops(results[shards], {}, op, "mdtest"), seed_value = published,
               input = shards == 1, seed = shards == 1 and "one MDT ~200,000 ops/s" or "16 MDTs ~3.2 M ops/s"}
    end
  end
end
local all = {}
for _, shards in ipairs(P.shards) do all = study.concat(all, results[shards]) end
study.check(all)
