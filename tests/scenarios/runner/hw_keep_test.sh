#!/usr/bin/env bash
# Issue 47 item 2: `sluice run --backend hw --keep` keeps each point's run
# directory until the user removes it. The directory is marked kept
# (base/run_marker.hpp), so the sweep of dead runs' directories at the start of
# the next point and of the next hardware run leaves it alone, though the
# process that made it is gone.
# Usage: hw_keep_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../scripts/hw_long_point.lua"
limit_s=120
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"  # --storage-root: where this test's run directories go, and nobody else's
mkdir -p "$root"
fail() { echo "FAIL: $*"; echo "--- stderr"; tail -20 "$tmp/err.txt"; exit 1; }
kept() { find "$root" -mindepth 1 -maxdepth 1 -name 'sluice-hw-run-*' | sort; }

timeout "$limit_s" "$sluice" run "$script" --backend hw --set files=2 --keep --storage-root "$root" \
  --out "$tmp/a" >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "the first --keep run failed"
first=$(kept)
[ "$(echo "$first" | grep -c .)" = 1 ] || fail "$(echo "$first" | grep -c .) directories after one kept point, wanted 1"
grep -q "$first" "$tmp/out.txt" "$tmp/err.txt" "$tmp/a/results.json" || fail "the run did not say where it kept $first"
# Two points, two sl.run calls: the second call sweeps before its point runs.
{ cat "$script"; echo 'sl.run{ backend = "hw", cluster = cluster, fs = fs, workload = sweep, seed = 2, label = "2nd" }'; } \
  >"$tmp/two.lua"
timeout "$limit_s" "$sluice" run "$tmp/two.lua" --backend hw --set files=3 --keep --storage-root "$root" \
  --out "$tmp/b" >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "the second --keep run (two points) failed"
[ "$(kept | grep -c .)" = 3 ] || fail "$(kept | grep -c .) directories after three kept points, wanted 3: $(kept)"
timeout "$limit_s" "$sluice" run "$script" --backend hw --set files=1 --storage-root "$root" \
  --out "$tmp/c" >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "the next hardware run failed"
grep -q "stale hw run" "$tmp/err.txt" && fail "the next hardware run swept a kept directory"
[ "$(kept | grep -c .)" = 3 ] || fail "$(kept | grep -c .) directories after the next run, wanted the 3 kept ones"
[ -d "$first/storage" ] || [ -n "$(ls -A "$first")" ] || fail "$first was emptied"
echo "ok: three kept directories survive the next points and the next hardware run"
