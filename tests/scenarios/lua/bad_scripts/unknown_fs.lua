local sl = require "sluice"
local fs = sl.fs.beond{}
