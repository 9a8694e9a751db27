local sl = require "sluice"
error({ code = 3 })
