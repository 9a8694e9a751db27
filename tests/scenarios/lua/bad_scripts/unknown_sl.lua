local sl = require "sluice"
sl.clustr{}
