local sl = require "sluice"
local c = sl.cluster{ nodes = 4, node = sl.machines.dgx_a100(), spines = 2 }
