-- cli_test.sh: a script that declares nothing and runs nothing.
local sl = require "sluice"
print("size of 1MiB:", sl.size("1MiB"))
