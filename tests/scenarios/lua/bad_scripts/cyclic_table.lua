local sl = require "sluice"
local t = {}
t.t = t
local c = sl.cluster{ node = t }
