local sl = require "sluice"
local fs = sl.fs.beeond{ gds = "maybe" }
