#!/bin/bash
# Issue 48 item 4 (ctest physics.peak_sim): sl.peak on the simulator
# (tests/scenarios/scripts/peak_small.lua, under a second): the writes of 2
# clients to one server's 2 drives saturate, so the search finds a knee and
# reports it with its bound and binding resource, at saturation within
# [0.9, 1.0] of the bound; every step is a point of results.json with its
# threads and files_per_rank (raised with the threads); max_steps holds; a
# bad axis or phase is refused (exit 2) naming the field.
# Usage: peak_sim_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
script=$here/tests/scenarios/scripts/peak_small.lua
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/scenarios/test_lib.sh"

expect 0 "sl.peak finds a knee" -- "$sluice" run "$script" --out "$tmp/run"
line=$(grep '^peak: ' "$tmp/out")
echo "$line"
re='^peak: threads=([0-9]+) write [0-9.]+ GB/s = ([0-9.]+) of bound 4 GB/s \(drive write: node0/nvme0, node0/nvme1\)$'
if [[ $line =~ $re ]]; then
  knee=${BASH_REMATCH[1]} of_bound=${BASH_REMATCH[2]}
  awk -v f="$of_bound" 'BEGIN { exit !(f >= 0.9 && f <= 1.0) }' ||
    { echo "FAIL: the knee is at $of_bound of its bound, not in [0.9, 1.0]"; fail=1; }
else
  echo "FAIL: no knee with its bound and binding resource: '$line'"; fail=1; knee=0
fi
steps=$(grep -c '^peak step ' "$tmp/out")
python3 - "$tmp/run/results.json" "$steps" "$knee" <<'PY' || fail=1
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
steps, knee = int(sys.argv[2]), int(sys.argv[3])
threads = [int(r["params"]["threads"]) for r in runs]
files = [int(r["params"]["files_per_rank"]) for r in runs]
ok = len(runs) == steps and threads == [2 ** i for i in range(steps)] and files == [2 * t for t in threads]
ok = ok and threads[-2] == knee  # the step after the knee grew by less than 2%
print(("ok" if ok else "FAIL") + f": results.json holds {len(runs)} points, threads {threads}, files_per_rank {files}")
sys.exit(0 if ok else 1)
PY

expect 0 "max_steps = 2 holds" -- "$sluice" run "$script" --set steps=2 --out "$tmp/two"
grep -q '^peak: no knee (2 steps (max_steps) and the rate still grew); the last step: threads=2 write' "$tmp/out" ||
  { echo "FAIL: no 'no knee' line after 2 steps"; cat "$tmp/out"; fail=1; }
[ "$(grep -c '^peak step ' "$tmp/out")" = 2 ] || { echo "FAIL: more than 2 steps ran"; fail=1; }

# The iodepth axis: blocks in flight per file, the files as given (2 per
# rank at threads=1); it stops, and says so, past a file's 8 blocks.
expect 0 "sl.peak raises iodepth" -- "$sluice" run "$script" --set axis=iodepth --out "$tmp/depth"
grep -Eq '^peak: (iodepth=[0-9]+ write [0-9.]+ GB/s = [0-9.]+ of bound 4 GB/s|no knee \(iodepth=16 would pass the 8 blocks of a file\))' "$tmp/out" ||
  { echo "FAIL: no iodepth knee or stop"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/depth/results.json" <<'PY' || fail=1
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
depth = [int(r["params"]["iodepth"]) for r in runs]
files = {r["params"].get("files_per_rank") for r in runs}
ok = depth == [2 ** i for i in range(len(runs))] and files == {None} and 2 <= len(runs) <= 4
print(("ok" if ok else "FAIL") + f": iodepth steps {depth}, files_per_rank as given ({files})")
sys.exit(0 if ok else 1)
PY

expect 2 "a bad axis is refused" -- "$sluice" run "$script" --set axis=thread --out "$tmp/bad"
grep -q 'sl.peak: axis: "thread" is not one of threads, iodepth, inflight_blocks' "$tmp/err" ||
  { echo "FAIL: the axis error does not name the field"; cat "$tmp/err"; fail=1; }
expect 2 "a bad phase is refused" -- "$sluice" run "$script" --set phase=stat --out "$tmp/bad2"
grep -q 'sl.peak: phase: "stat" is not a bulk phase of this file_sweep (its bulk phases: write, read)' "$tmp/err" ||
  { echo "FAIL: the phase error does not name the field"; cat "$tmp/err"; fail=1; }
[ $fail = 0 ] && echo "peak on sim: ok"
exit $fail
