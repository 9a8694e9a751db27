local sl = require "sluice"
os.execute("true")
