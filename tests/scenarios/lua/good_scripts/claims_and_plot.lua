-- sl.claim and report:plot over a fake runner's results (lua_script_test.cpp).
local sl = require "sluice"
local P = sl.params{ threads = {"threads per node", {1, 8}} }
local cluster = sl.cluster{ nodes = 2, node = sl.machines.generic{ nvmes = 1 }, fabric = sl.fabric.ethernet{ gbps = 25 } }
local r = sl.run{ cluster = cluster, fs = sl.fs.beeond{},
                  workload = sl.workload.file_sweep{ op = {"read"}, files = 8, size = "1MiB", threads = P.threads } }
local holds = sl.claim{"rate in range", measured = 2.0, at_least = 1.5, at_most = 2.5, seed = "~2x"}
local fails = sl.claim{"rate above", measured = 1.0, at_least = 1.5}
local nan = sl.claim{"ratio over nothing", measured = 0 / 0, at_most = 10}
local near = sl.claim{"seed figure, within 15%", measured = 1.8, seed_value = 2.0, seed = "~2x"}
local far = sl.claim{"seed figure, 20% off", measured = 2.4, seed_value = 2.0}
local wide = sl.claim{"seed figure, a range", measured = 0.14, seed_value = 0.125, tolerance = 0.2,
                      tolerance_why = "the seed gives 10-15%"}
local given = sl.claim{"seed figure, an input of the run", measured = 5, seed_value = 5, input = true}
assert(given == true)
assert(holds == true and fails == false and nan == false)
assert(near == true and far == false and wide == true)
sl.report{ r }:plot("claims_plot.svg")
