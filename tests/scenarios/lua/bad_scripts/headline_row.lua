local sl = require "sluice"
sl.headline("read", "1 GB/s", "2 GB/s", "oops")
