local sl = require "sluice"
local w = sl.workload.file_sweep{
  files = 100,
  threads = 0,
}
