local sl = require "sluice"
local fs = sl.fs.beeond{ stripe = { chunk = "64KB" } }
