local sl = require "sluice"
local lib = require "broken_helper"
