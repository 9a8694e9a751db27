#!/usr/bin/env bash
# `sluice run` stopped by SIGINT during a 3-point sweep, after the first point
# finished (issue 25 item 7): it exits 130 saying so, results.json holds the
# finished point marked "complete": false (and matches the schema), and no
# child process of it is left.
# Usage: interrupt_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../scripts/three_point_sweep.lua"
schema="$here/../../../analysis/results.schema.json"
# Limits: the first point takes about a second (more under sanitizers); the
# stop must end the run at once, the second point would take minutes.
first_point_limit_s=180
stop_limit_s=30  # also the limit on the second point's start
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/scenarios/test_lib.sh
source "$here/../test_lib.sh"
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out.txt"; echo "--- stderr"; cat "$tmp/err.txt"; exit 1; }

runs_in_results() {
  python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["runs"]))' "$tmp/out/results.json" 2>/dev/null ||
    echo 0
}

"$sluice" run "$script" --jobs 1 --out "$tmp/out" >"$tmp/out.txt" 2>"$tmp/err.txt" &
pid=$!
deadline=$((SECONDS + first_point_limit_s))
while [ "$(runs_in_results)" -lt 1 ]; do
  kill -0 "$pid" 2>/dev/null || fail "sluice ended before its first point was written"
  [ $SECONDS -lt $deadline ] || fail "no point in results.json after ${first_point_limit_s} s"
  sleep 0.1
done
# The second point's child starts right after the first point ended.
deadline=$((SECONDS + stop_limit_s))
children=$(children_of "$pid")
while [ -z "$children" ]; do
  [ $SECONDS -lt $deadline ] || fail "no point is running after the first finished"
  sleep 0.1
  children=$(children_of "$pid")
done
kill -INT "$pid"
deadline=$((SECONDS + stop_limit_s))
while kill -0 "$pid" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "sluice still runs ${stop_limit_s} s after SIGINT"
  sleep 0.1
done
wait "$pid"
rc=$?
pid=
[ "$rc" = 130 ] || fail "exit $rc after SIGINT, wanted 130"
grep -q "stopped by SIGINT" "$tmp/err.txt" || fail "no 'stopped by SIGINT' message"
for child in $children; do
  if kill -0 "$child" 2>/dev/null; then fail "child process $child is still there"; fi
done
python3 - "$tmp/out/results.json" <<'PY' || fail "results.json is not what a stopped run leaves"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["complete"] is False, "complete is %r" % doc["complete"]
assert 1 <= len(doc["runs"]) < 3, "%d runs" % len(doc["runs"])
first = doc["runs"][0]
assert first["ok"] and first["params"]["size"] == "1MiB", first["params"]
assert first["label"] == "three points", first["label"]
PY
python3 "$here/validate_results.py" "$schema" "$tmp/out/results.json" || fail "results.json does not match the schema"
[ -s "$tmp/out/results.csv" ] || fail "no results.csv"
echo "ok: SIGINT after the first point left it in results.json, marked incomplete, and no child"
