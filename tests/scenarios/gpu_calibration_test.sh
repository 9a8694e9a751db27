#!/bin/bash
# `sluice calibrate --gpu-sweep` on the sweep measured on the GPU machine
# (sim/profiles/measurements/h200_gpu_sweep.csv, made by scripts/gpu_machine/gpu_device_run.sh):
# fit the host-memory/PCIe model on the 1 MiB and 16 MiB pieces, predict the
# 4 MiB pieces; the held-out median error must stay within 10% (issue 8's F1
# bound), the profile, the JSON/CSV table and the plot must be written and
# the profile must carry its source. Bad input gets exit 2 and a message.
# Usage: gpu_calibration_test.sh SLUICE
set -u
sluice=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
sweep=$root/sim/profiles/measurements/h200_gpu_sweep.csv
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

timeout 600 "$sluice" calibrate --gpu-sweep "$sweep" --fit-piece 1MiB --fit-piece 16MiB --holdout-piece 4MiB \
  --profile-dir "$root/sim/profiles" --out "$tmp/cal" --max-median-err 10 >"$tmp/log" 2>"$tmp/err"
rc=$?
grep -E "^held-out|RESULT F2" "$tmp/log"
[ $rc -eq 0 ] || { tail -40 "$tmp/log" "$tmp/err"; fail "calibrate exited $rc"; }
grep -q "^RESULT F2 median_err=[0-9.]* p90_err=[0-9.]*$" "$tmp/log" || fail "no RESULT F2 line"
python3 - "$tmp/cal" <<'PY' || exit 1
import json, os, sys
d = sys.argv[1]
p = json.load(open(os.path.join(d, "profiles", "gpu_calibrated.json")))
src = p["source"]
assert src["kind"] == "fit" and src["fit_error_pct"] >= 0 and "h200_gpu_sweep.csv" in src["scenario"], src
assert p["link_classes"]["pcie"]["latency_factor"] != 1.0, "the fit did not move the PCIe latency factor"
t = json.load(open(os.path.join(d, "gpu_calibration.json")))
sets = {r["set"] for r in t["points"]}
assert sets == {"fit", "holdout"}, sets
assert all(r["piece_bytes"] == 4 << 20 for r in t["points"] if r["set"] == "holdout")
lines = open(os.path.join(d, "gpu_calibration.csv")).read().splitlines()
assert lines[0].startswith("set,series,piece_bytes,lanes,depth,gpus,runs,measured_bytes_per_s"), lines[0]
assert len(lines) == 1 + len(t["points"])
PY
if command -v gnuplot >/dev/null; then
  [ "$(head -c 5 "$tmp/cal/gpu_calibration.svg")" = "<?xml" ] || head -c 200 "$tmp/cal/gpu_calibration.svg" | grep -q "<svg" || fail "no SVG plot"
  [ "$(head -c 8 "$tmp/cal/gpu_calibration.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "no PNG plot"
fi

# Bad input: exit 2 naming the problem.
expect_usage() {
  local what=$1; shift
  timeout 60 "$sluice" calibrate "$@" --profile-dir "$root/sim/profiles" --out "$tmp/bad" >"$tmp/bad.log" 2>&1
  local r=$?
  [ $r -eq 2 ] || { cat "$tmp/bad.log"; fail "$what: exit $r, expected 2"; }
  grep -q "$what" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "message lacks '$what'"; }
}
expect_usage "the sweep has no such piece size" --gpu-sweep "$sweep" --fit-piece 2MiB --holdout-piece 4MiB
expect_usage "both fitted and held out" --gpu-sweep "$sweep" --fit-piece 4MiB --holdout-piece 4MiB
expect_usage "needs at least one --fit-piece" --gpu-sweep "$sweep" --holdout-piece 4MiB
printf 'series,piece_bytes\n' > "$tmp/bad.csv"
expect_usage "line 1: header" --gpu-sweep "$tmp/bad.csv" --fit-piece 1MiB --holdout-piece 4MiB
expect_usage "no parameter" --gpu-sweep "$sweep" --fit-piece 1MiB --holdout-piece 4MiB --fit-param pcie.nonsense
echo "ok: gpu calibration"
