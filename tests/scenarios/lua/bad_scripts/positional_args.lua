local sl = require "sluice"
local c = sl.cluster{ 4, sl.machines.dgx_a100() }
