local sl = require "sluice"
local P = sl.params{ nodes = {"cluster nodes", 4} }
