#!/bin/bash
# Runs one seed study in simulation at a reduced size (the --set values CI
# uses) and checks its claims (sl.claim) in results.json against
# tests/scenarios/study_claims_ci.json, the claims that hold at this size:
#   * a claim of that list that misses (or is no longer made) is a
#     regression: the test fails;
#   * a claim that misses and is not listed is printed with its error, not
#     failed: the model does not reproduce it yet (docs/sim.md says why), and
#     at CI size many seed figures cannot be reached (make bench-fidelity runs
#     the seeds' sizes); a bound is never loosened to make it pass;
#   * a claim that holds and is not listed fails too, so that the list grows
#     with the model (a ratchet): add it;
#   * the run makes at least one claim and results.json matches the schema;
#   * results.json equals the one recorded in tests/scenarios/study_results_ci/
#     (wall times, dates and the machine aside; results_equal.py): a change
#     that moves a study's figures says so by recording them again
#     (SLUICE_RECORD_STUDY_RESULTS=1 ctest -L study), one that should not
#     (a move, a refactor) is caught.
# Usage: studies_sim_test.sh SLUICE STUDY.lua [--set k=v ...]
set -u
sluice=$1; study=$2; shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
timeout 600 "$sluice" run "$root/lua_scripts/$study" --out "$tmp/out" "$@" >"$tmp/log" 2>&1
rc=$?
grep -E "claim|CLAIM" "$tmp/log"
if [ $rc -ne 0 ]; then echo "FAIL: $study exited $rc"; tail -30 "$tmp/log"; exit 1; fi
python3 - "$tmp/out/results.json" "$root/tests/scenarios/study_claims_ci.json" "${study%.lua}" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
baseline = json.load(open(sys.argv[2])).get(sys.argv[3], [])
claims = doc.get("claims", [])
if not claims:
    sys.exit("FAIL: the study made no claim")
if not all(r["ok"] for r in doc["runs"]):
    sys.exit("FAIL: a run failed")
fail = []
texts = {c["text"] for c in claims}
for c in claims:
    err = c.get("relative_error")
    err = "" if err is None else " (error %+.1f%%)" % (100 * err)
    if c["holds"] and c["text"] not in baseline:
        fail.append("holds at CI size and is not in tests/scenarios/study_claims_ci.json (add it): %s" % c["text"])
    elif not c["holds"] and c["text"] in baseline:
        fail.append("held at CI size and now misses: %s%s" % (c["text"], err))
    elif not c["holds"]:
        print("known miss at CI size: %s: %s%s" % (c["text"], c["measured"], err))
for t in baseline:
    if t not in texts:
        fail.append("a claim of tests/scenarios/study_claims_ci.json was not made: %s" % t)
if fail:
    sys.exit("FAIL: " + "; ".join(fail))
PY
python3 "$root/tests/scenarios/runner/validate_results.py" "$root/analysis/results.schema.json" "$tmp/out/results.json" ||
  { echo "FAIL: results.json does not match the schema"; exit 1; }
recorded="$root/tests/scenarios/study_results_ci/${study%.lua}.json"
if [ "${SLUICE_RECORD_STUDY_RESULTS:-0}" = 1 ]; then
  python3 "$root/tests/scenarios/results_equal.py" --record "$tmp/out/results.json" "$recorded" || exit 1
  echo "recorded: $recorded"
elif [ ! -f "$recorded" ]; then
  echo "FAIL: no recorded results for $study (SLUICE_RECORD_STUDY_RESULTS=1 records them)"; exit 1
else
  python3 "$root/tests/scenarios/results_equal.py" "$recorded" "$tmp/out/results.json" || exit 1
fi
echo "ok: $study"
