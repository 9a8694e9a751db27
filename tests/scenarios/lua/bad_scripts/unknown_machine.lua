local sl = require "sluice"
local m = sl.machines.dgx_a10()
