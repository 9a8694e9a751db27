local sl = require "sluice"
local fs = sl.fs.beegfs{ stripe = { chooser = "randomised" } }
