local sl = require "sluice"
local helpers = require "no_such_helper"
