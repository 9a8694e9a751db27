#!/bin/bash
# Issue 50: a seed study in fluid mode gives its F3 figures within 2% of per
# chunk. Runs STUDY at the CI size (the same --set values as study.<name>)
# with --sim-mode fluid, then `sluice fidelity` over its results and over the
# per-chunk results recorded at that size (tests/scenarios/study_results_ci/,
# which study.<name> keeps equal to a fresh per-chunk run), and compares the
# simulated value of every figure:
#   * every run says it ran fluid (deployment sim_mode);
#   * every F3 figure of the per-chunk results is there, within k_max_error
#     (2%);
#   * a study without F3 figures at this size compares every phase's rate and
#     finish time instead: their median |error| within k_max_error. One
#     point may stray further: at CI size a few requests decide a phase, and
#     two events at one instant (node0's and node1's requests reaching one
#     server together) are taken in another order by SimGrid's action heap
#     than by FluidNet's timer; the other order is an equally valid run, and
#     per chunk moves as much with the seed (docs/sim.md, fluid mode). Each
#     one is printed;
#   * prints each comparison, and
#       RESULT fluid_vs_chunk study=<name> figures=<n> max_err=<pct> median_err=<pct>
# KNOWN_MISS="figure|...": F3 figures known to move past 2% at this size for
# the tie order above (docs/sim.md names each with its trace): printed, not
# failed; one that agrees fails (a ratchet: drop it).
# Usage: [KNOWN_MISS=...] study_fluid_test.sh SLUICE STUDY.lua [--set k=v ...]
set -u
sluice=$1; study=$2; shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
name=${study%.lua}
recorded="$root/tests/scenarios/study_results_ci/$name.json"
[ -f "$recorded" ] || { echo "FAIL: no recorded per-chunk results for $name"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
timeout 600 "$sluice" run "$root/lua_scripts/$study" --sim-mode fluid --out "$tmp/out" "$@" >"$tmp/log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then echo "FAIL: $study --sim-mode fluid exited $rc"; tail -30 "$tmp/log"; exit 1; fi
echo "$study in fluid mode: $(($(date +%s) - start)) s"
"$sluice" fidelity "$recorded" >"$tmp/chunk.txt" 2>&1
"$sluice" fidelity "$tmp/out/results.json" >"$tmp/fluid.txt" 2>&1
python3 - "$tmp/chunk.txt" "$tmp/fluid.txt" "$recorded" "$tmp/out/results.json" "$name" "${KNOWN_MISS:-}" <<'PY'
import json, re, statistics, sys
k_max_error = 0.02
chunk_txt, fluid_txt, chunk_json, fluid_json, name, known = sys.argv[1:7]
known = {k for k in known.split("|") if k}
runs = json.load(open(fluid_json))["runs"]
for r in runs:
    mode = (r.get("deployment") or {}).get("sim_mode", "")
    if not r["ok"]:
        sys.exit("FAIL: a fluid run failed: %s" % r.get("error"))
    if mode != "fluid":
        sys.exit("FAIL: a run with --sim-mode fluid says sim_mode %r" % mode)

def figures(path):
    out = {}
    for line in open(path):
        m = re.match(r"^(\S+)\s+(.+?)\s+(\S+)\s+(\S+)\s+\S+%\s+\S+%\s+(\S+)\s*$", line)
        if m and m.group(1) == name:
            out[m.group(2)] = float(m.group(4))
    return out

chunk, fluid = figures(chunk_txt), figures(fluid_txt)
pairs = []
if chunk:
    for fig, c in chunk.items():
        if fig not in fluid:
            sys.exit("FAIL: figure %r is missing from the fluid run's fidelity table" % fig)
        pairs.append((fig, c, fluid[fig]))
else:
    # No published figure: every phase's rate and finish time.
    a = json.load(open(chunk_json))["runs"]
    if len(a) != len(runs):
        sys.exit("FAIL: %d runs per chunk, %d fluid" % (len(a), len(runs)))
    for i, (ra, rb) in enumerate(zip(a, runs)):
        pb = {(p["workload"], p["phase"]): p for p in rb["phases"]}
        for p in ra["phases"]:
            q = pb[(p["workload"], p["phase"])]
            rate = "last_bytes_per_s" if p.get("last_bytes_per_s") else "last_ops_per_s"
            for key in (rate, "last_done_s"):
                if p.get(key):
                    pairs.append(("run %d %s/%s %s" % (i, p["workload"], p["phase"], key), p[key], q[key]))
errors, ratchet = [], []
for fig, c, f in pairs:
    err = f / c - 1 if c else 0.0
    mark = "  (past %.0f%%)" % (100 * k_max_error) if abs(err) > k_max_error else ""
    if fig in known:
        mark = "  (known miss)" if abs(err) > k_max_error else "  (known miss agrees now)"
        if abs(err) <= k_max_error:
            ratchet.append(fig)
    else:
        errors.append(abs(err))
    print("%-70s chunk %.6g  fluid %.6g  %+.2f%%%s" % (fig, c, f, 100 * err, mark))
if ratchet:
    sys.exit("FAIL: known misses agree now (drop them from KNOWN_MISS): %s" % "; ".join(ratchet))
worst = max(errors) if errors else 0.0
median = statistics.median(errors) if errors else 0.0
print("RESULT fluid_vs_chunk study=%s figures=%d max_err=%.2f median_err=%.2f" %
      (name, len(pairs), 100 * worst, 100 * median))
if not pairs:
    sys.exit("FAIL: nothing to compare")
if chunk and worst > k_max_error:
    sys.exit("FAIL: an F3 figure in fluid mode strays from per chunk by %.2f%% (limit %.0f%%)" %
             (100 * worst, 100 * k_max_error))
if not chunk and median > k_max_error:
    sys.exit("FAIL: the phases in fluid mode stray from per chunk by a median %.2f%% (limit %.0f%%)" %
             (100 * median, 100 * k_max_error))
PY
