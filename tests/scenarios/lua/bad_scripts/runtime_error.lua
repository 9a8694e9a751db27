local sl = require "sluice"
local t = nil
print(t.field)
