local sl = require "sluice"
local P = sl.params{ nodes = 4 }
