#!/bin/bash
# Issue 52 item 1 (ctest mlperf.dlio_sim): sl.workload.dlio end to end on the
# simulator (tests/scenarios/scripts/mlperf_unet3d_tiny.lua): the unet3d H100
# config at a tiny size runs, reads every sample's bytes once and reports an
# AU in (0, 100] %; results.json holds the run labelled unet3d with the
# config's compute time. A config the reader refuses is exit 2 naming it.
# Usage: mlperf_dlio_sim_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
script=$here/tests/scenarios/scripts/mlperf_unet3d_tiny.lua
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/scenarios/test_lib.sh"

expect 0 "unet3d_h100.yaml runs on the simulator" -- "$sluice" run "$script" --out "$tmp/run"
line=$(grep '^dlio: ' "$tmp/out")
echo "$line"
re='^dlio: model=unet3d type=train_epoch au_pct=([0-9.]+) au_threshold=0.90 bytes=29360128$'
if [[ $line =~ $re ]]; then
  awk -v a="${BASH_REMATCH[1]}" 'BEGIN { exit !(a > 0 && a <= 100) }' ||
    { echo "FAIL: AU ${BASH_REMATCH[1]}% is not in (0, 100]"; fail=1; }
else
  echo "FAIL: no AU line with 28 x 1 MiB read: '$line'"; fail=1
fi
python3 - "$tmp/run/results.json" <<'PY' || fail=1
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
text = json.dumps(runs)
ok = len(runs) == 1 and '"unet3d"' in text and "323000000" in text and "au_pct" in text
print(("ok" if ok else "FAIL") + ": results.json holds the unet3d run with its compute time and AU")
sys.exit(0 if ok else 1)
PY
printf 'dataset:\n  format: parquet\n' >"$tmp/bad.yaml"
printf 'local sl = require "sluice"\nlocal w = sl.workload.dlio{ config = "bad.yaml" }\n' >"$tmp/bad.lua"
expect 2 "a refused key is a script error" -- "$sluice" run "$tmp/bad.lua" --out "$tmp/bad"
grep -q 'bad.lua:2: sl.workload.dlio: bad.yaml:2: dataset.format: no read pattern for format "parquet"' "$tmp/err" ||
  { echo "FAIL: the error does not name bad.yaml:2: dataset.format"; cat "$tmp/err"; fail=1; }
exit $fail
