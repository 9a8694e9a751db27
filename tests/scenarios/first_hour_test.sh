#!/usr/bin/env bash
# Issue 25, the first hour of a new user, at the command line: sluice --version,
# topo show SCRIPT.lua (and machine:describe()), require "study" from a script
# anywhere, sl.run's label and params on every point, --keep for hw runs.
set -u
sluice="$1"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# shellcheck source=tests/scenarios/test_lib.sh
source "$here/test_lib.sh"
must() {  # must PATTERN FILE DESCRIPTION
  grep -qE -- "$1" "$2" || { echo "FAIL: $3"; head -30 "$2"; fail=1; }
}

# --version: release, commit, build type, optional pieces.
expect 0 "--version" -- "$sluice" --version
must '^sluice [0-9]+\.[0-9]+\.[0-9]+ \(.+, [A-Za-z]+ build\)' "$tmp/out" "--version lacks release/commit/build type"
must 'optional pieces: .*SIMGRID (yes|no)' "$tmp/out" "--version lacks the optional pieces"

# topo show SCRIPT.lua: a script's own machines, shown like the built-in ones.
mkdir -p "$tmp/elsewhere"
cat >"$tmp/elsewhere/machines.lua" <<'LUA'
local sl = require "sluice"
local P = sl.params{ gpus = {"GPUs per client", 4} }
local client = sl.machines.generic{ sockets = 2, gpus = P.gpus, nics = 2, nvmes = 0 }
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 4 }
print(client:describe():match("Scheduler choices") ~= nil)
LUA
expect 0 "topo show SCRIPT.lua" -- "$sluice" topo show "$tmp/elsewhere/machines.lua" --out "$tmp/topo"
must '^Machine: #1 generic \(.*machines.lua:3\)' "$tmp/out" "topo show SCRIPT.lua lacks the first machine"
must '^Machine: #2 generic' "$tmp/out" "topo show SCRIPT.lua lacks the second machine"
must 'Scheduler choices' "$tmp/out" "topo show SCRIPT.lua lacks the scheduler's choices"
must 'gpu3' "$tmp/out" "topo show SCRIPT.lua lacks the client's 4 GPUs"
must '"machines"' "$tmp/topo/topology.json" "topology.json of a script lacks its machines"
expect 0 "topo show SCRIPT.lua --machine 2 --set gpus=2" -- "$sluice" topo show "$tmp/elsewhere/machines.lua" --machine 2 --set gpus=2
must '^Machine: #2 generic' "$tmp/out" "--machine 2 shows the wrong machine"
grep -q '^Machine: #1' "$tmp/out" && { echo "FAIL: --machine 2 also showed machine 1"; fail=1; }
expect 2 "topo show SCRIPT.lua --machine 9" -- "$sluice" topo show "$tmp/elsewhere/machines.lua" --machine 9
must 'no such machine.*#1 generic' "$tmp/err" "--machine 9 does not list the script's machines"
expect 2 "--machine without a script" -- "$sluice" topo show dgx_a100 --machine 1

# require "study" from a script outside lua_scripts/, and a clear error for a missing module.
cat >"$tmp/elsewhere/uses_study.lua" <<'LUA'
local sl = require "sluice"
local study = require "study"
local P = sl.params{ n = {"a number", 1} }
print("study.concat is " .. type(study.concat))
LUA
expect 0 "require study from another directory" -- "$sluice" describe "$tmp/elsewhere/uses_study.lua"
cat >"$tmp/elsewhere/missing.lua" <<'LUA'
local nope = require "no_such_module"
LUA
expect 2 "a missing module" -- "$sluice" describe "$tmp/elsewhere/missing.lua"
must "module 'no_such_module' not found: no no_such_module.lua in .*elsewhere/lib, .*elsewhere.*lua_scripts/lib.*SLUICE_LUA_PATH" \
  "$tmp/err" "the missing-module error does not list where it looked"
[ "$(grep -o "not found" "$tmp/err" | wc -l)" = 1 ] || { echo "FAIL: the missing-module error is repeated"; cat "$tmp/err"; fail=1; }
mkdir -p "$tmp/mylib"
printf 'return { answer = 42 }\n' >"$tmp/mylib/mine.lua"
printf 'local m = require "mine"\nassert(m.answer == 42)\nlocal sl = require "sluice"\nsl.params{}\n' >"$tmp/elsewhere/uses_mine.lua"
expect 0 "SLUICE_LUA_PATH" -- env SLUICE_LUA_PATH="$tmp/nothing:$tmp/mylib" "$sluice" describe "$tmp/elsewhere/uses_mine.lua"

# The issue 25 crash (GDS off, 512 chunks in flight, 16 storage nodes) at CI size.
expect 0 "DGX-like client, GDS off, 512 chunks in flight" -- "$sluice" run "$here/runner/scripts/dgx_bounce_inflight_512.lua" --out "$tmp/dgx"
must '1 run, 0 failed' "$tmp/out" "the 512-in-flight bounce run failed"

exit $fail
