-- sl.claim and report:plot over a fake runner's results (lua_script_test.cpp).
local sl = require "sluice"
local P = sl.params{ threads = {"threads per node", {1, 8}} }
local cluster = sl.cluster{ nodes = 2, node = sl.machines.generic{ nvmes = 1 }, fabric = sl.fabric.ethernet{ gbps = 25 } }
local r = sl.run{ cluster = cluster, fs = sl.fs.beeond{},
                  workload = sl.workload.file_sweep{ op = {"read"}, files = 8, size = "1MiB", threads = P.threads } }
local holds = sl.claim{"rate in range", measured = 2.0, at_least = 1.5, at_most = 2.5, seed = "~2x"}
local fails = sl.claim{"rate above", measured = 1.0, at_least = 1.5}
local nan = sl.claim{"ratio over nothing", measured = 0 / 0, at_most = 10}
assert(holds == true and fails == false and nan == false)
sl.report{ r }:plot("claims_plot.svg")
