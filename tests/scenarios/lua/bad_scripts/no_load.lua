local sl = require "sluice"
local f = load("return 1")
