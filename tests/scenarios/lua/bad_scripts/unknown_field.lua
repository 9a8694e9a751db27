local sl = require "sluice"
local fs = sl.fs.beeond{
  stripe = { chunck = "512KiB" },
}
