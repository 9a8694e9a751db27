local sl = require "sluice"
local c = sl.cluster{ nodes = 2, node = sl.fs.beeond{} }
