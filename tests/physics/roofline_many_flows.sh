#!/bin/bash
# Roofline configuration 38 at full scale with 64 threads, per chunk: one
# client reading into GPU buffers through a bounce, thousands of comms in
# flight over routes of sub-microsecond latencies. SimGrid's solver crashed
# on it (SIGSEGV in MaxMin::do_solve) while the sharing penalties were the
# raw latencies (~1e-7): a link's usage, the sum of 1 / penalty, reached
# ~1e10, and a subtraction's rounding left more than the solver's absolute
# precision behind (sim/sim_platform.hpp, k_sim_latency_scale). Checks that
# the run ends, and that no phase goes above its bound.
# Usage: roofline_many_flows.sh SLUICE OUT
set -u
sluice=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 2
"$sluice" run "$here/roofline.lua" --set scale=full --set first=38 --set count=1 --set threads=64 \
  --sim-mode chunk --jobs 1 --out "$out" >"$out/run.log" 2>&1 ||
  { tail -20 "$out/run.log"; echo "FAIL: the run failed (log: $out/run.log)"; exit 1; }
python3 - "$out/results.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
if len(runs) != 1 or not runs[0]["ok"]:
    sys.exit("FAIL: the point did not run: %s" % (runs[0].get("error") if runs else "no run"))
for p in runs[0]["phases"]:
    name, rate, bound = p["phase"], p.get("last_bytes_per_s") or 0, p.get("bound_bytes_per_s")
    if name in ("write", "read") and bound:
        print("configuration 38, 64 threads, %s: %.2f / %.2f GB/s ratio=%.3f" % (name, rate / 1e9, bound / 1e9, rate / bound))
        if rate > bound * 1.0001:
            sys.exit("FAIL: %s above its bound" % name)
print("ok")
PY
