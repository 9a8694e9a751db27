#!/usr/bin/env bash
# Issue 26's acceptance: the two commands that returned wrong bytes over slow
# links (150 Mbit/s, 6 files in flight), each run N times in a row (default
# 20), as root on this machine (network namespaces). Prints one line per run
# and a RESULT line per command; exits 1 if any run failed.
#   bash scripts/slow_links_acceptance.sh [runs] [build dir]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
build="${2:-build}"
sluice="$build/sluice"
work="$(mktemp -d /tmp/sluice-slow-links-XXXXXX)"
trap 'rm -rf "$work"' EXIT
[ -x "$sluice" ] || { echo "no $sluice: build first (make)" >&2; exit 2; }

failed_total=0
run_series() {
  local name="$1"; shift
  local ok=0 failed=0 i
  for i in $(seq 1 "$runs"); do
    local log="$work/$name.$i.log"
    local t0 t1
    t0=$(date +%s.%N)
    if "${@//@RUN@/$i}" >"$log" 2>&1; then
      ok=$((ok + 1)); status=ok
    else
      failed=$((failed + 1)); status="FAILED ($(grep -m1 -E 'corrupt|CRC32C|error|FAILED' "$log" | cut -c1-200))"
      cp "$log" "/tmp/sluice-slow-links-$name-$i.log"
    fi
    t1=$(date +%s.%N)
    printf '%s run %d/%d: %s (%.1f s)\n' "$name" "$i" "$runs" "$status" "$(echo "$t1 - $t0" | bc)"
  done
  echo "RESULT issue26 command=$name runs=$runs ok=$ok failed=$failed"
  failed_total=$((failed_total + failed))
}

# The file sweep on 4 netns hosts (the command was `sluice emulate` before issue 49).
run_series emulate "$sluice" run lua_scripts/file_sweep.lua --backend emulate --set nodes=4 --set link_gbps=0.15 \
  --set files=6 --set file_size=48MiB --set block=4MiB --set threads=6 --set chunk=1MiB --set stripe_count=3 \
  --storage-root "$work" --out "$work/sweep@RUN@"
run_series study "$sluice" run lua_scripts/calibrate_links.lua --backend emulate --set set=holdout \
  --set holdout_link=150 --set holdout_stripes=3 --set holdout_sizes=48MiB --set threads=6 --set files=6 \
  --out "$work/study@RUN@"
[ "$failed_total" -eq 0 ]
