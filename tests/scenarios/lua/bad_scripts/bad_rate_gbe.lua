local sl = require "sluice"
local fabric = sl.fabric.ethernet{ rate = "25GbE" }
