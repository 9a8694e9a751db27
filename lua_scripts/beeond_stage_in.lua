-- Study 6 (docs/seeds.md#beeond-staging): BeeOND staging. Every node pulls its
-- share of a dataset from an object store into BeeOND (node 0: mgmt + metadata;
-- every node's NVMe a storage target) in parallel, at 4 .. 100 nodes, the same
-- data per node (weak scaling). Seed claim: ingress scales linearly with the
-- node count, 500 GB/s at 100 nodes (5 GB/s per node from the object store).
-- Reduced run (CI): --set nodes=2,4 --set objects_per_node=4
local sl = require "sluice"
local study = require "study"

local P = sl.params{
  nodes = {"node counts to compare", {4, 16, 50, 100}},
  objects_per_node = {"objects staged per node", 64},
  object_size = {"object size", "64MiB"},
  source_rate = {"object-store egress per node", "5GB/s"},
  get_latency = {"first-byte latency of one ranged GET", "20ms"},
  -- In flight per node: 5 GB/s from a store that answers a 4 MiB ranged GET
  -- after 20 ms needs >= 5e9 x (20 ms + 0.8 ms) / 4 MiB = 25 GETs in flight
  -- (Little's law); staging tools run many more (s5cmd: 256 workers). At 16
  -- the GETs' latency, not the store, held a node to 2.8 GB/s.
  threads = {"objects in flight per node", 32},
}

local node = sl.machines.generic{ sockets = 2, gpus = 8, nics = 2, nvmes = 4, nic_gbps = 200 }
local results = {}
for _, n in ipairs(P.nodes) do
  local cluster = sl.cluster{ nodes = n, node = node, fabric = sl.fabric.infiniband{ gbps = 200 },
                              topology = n > 16 and "fat_tree" or "star" }
  local fs = sl.fs.beeond{ stripe = { chunk = "1MiB", count = 4 } }
  local stage = sl.workload.stage_in{ objects = n * P.objects_per_node, object_bytes = P.object_size,
                                      block_bytes = "4MiB", threads = P.threads,
                                      source_bytes_per_s_per_rank = P.source_rate,
                                      source_request_latency_ns = P.get_latency }
  results[n] = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = stage, seed = 1,
                       label = n .. " nodes", params = { nodes = n } }
  sl.report{ results[n], title = string.format("%d nodes", n) }
end

print("")
print("Headlines (simulated, next to docs/seeds.md#beeond-staging):")
local first, last = P.nodes[1], P.nodes[#P.nodes]
local all = {}
for _, n in ipairs(P.nodes) do
  local rate = study.rate(results[n], {}, "ingress")
  sl.headline(string.format("%d nodes: aggregate ingress (per node)", n),
              string.format("%s (%s)", study.gbs(rate), study.gbs(rate / n)),
              n == 100 and "500 GB/s" or string.format("~%d GB/s if linear", 5 * n))
  all = study.concat(all, results[n])
end
local r1, r2 = study.rate(results[first], {}, "ingress"), study.rate(results[last], {}, "ingress")
sl.headline(string.format("scaling %d -> %d nodes (ideal %.1fx)", first, last, last / first), study.ratio(r2, r1),
            "linear")
if last > first then
  sl.claim{string.format("ingress scaling %d -> %d nodes / ideal %.1fx", first, last, last / first),
           measured = (r2 / r1) / (last / first), seed_value = 1.0, seed = "scales linearly with node count"}
end
-- The slope of the seed's claim: 500 GB/s at 100 nodes, 5 GB/s per node.
-- The object store's 5 GB/s per node is a parameter (source_rate), so these
-- two are inputs: they check that nothing else limits, the scaling above is
-- the prediction.
sl.claim{string.format("ingress per node at %d nodes, bytes/s", last), measured = r2 / last, seed_value = 5e9,
         input = true, seed = "500 GB/s at 100 nodes"}
if last == 100 then
  sl.claim{"ingress at 100 nodes, bytes/s", measured = r2, seed_value = 500e9, input = true,
           seed = "500 GB/s at 100 nodes"}
end
study.check(all)
