local sl = require "sluice"

local fs = sl.fs.beeond{ egress_limit_bytes_per_s = "100Gbit" }
