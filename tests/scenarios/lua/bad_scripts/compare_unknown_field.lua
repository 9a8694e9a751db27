local sl = require "sluice"
sl.compare{ {}, measured = "fio.json", matsh = {"rw"} }
