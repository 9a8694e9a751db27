local sl = require "sluice"
local x = 1
local y = = 2
