local sl = require "sluice"
local w = sl.workload.file_sweep{ client_nodes = {0, nil, 2} }
