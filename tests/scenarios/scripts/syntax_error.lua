-- cli_test.sh: a syntax error on line 3 (exit 2, file:line in the message).
local sl = require "sluice"
local x = = 1
