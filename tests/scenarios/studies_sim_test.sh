#!/bin/bash
# Runs one seed study in simulation at a reduced size (the --set values CI
# uses), with --check-claims: the study's shape claims (sl.claim) must hold
# in the simulator, the run must make at least one claim, and results.json
# must be valid against analysis/results.schema.json.
# Usage: studies_sim_test.sh SLUICE STUDY.lua [--set k=v ...]
set -u
sluice=$1; study=$2; shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
timeout 600 "$sluice" run "$root/lua_scripts/$study" --out "$tmp/out" --check-claims "$@" >"$tmp/log" 2>&1
rc=$?
grep -E "claim|CLAIM" "$tmp/log"
if [ $rc -ne 0 ]; then echo "FAIL: $study exited $rc"; tail -30 "$tmp/log"; exit 1; fi
python3 - "$tmp/out/results.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
claims = doc.get("claims", [])
if not claims:
    sys.exit("FAIL: the study made no claim")
bad = [c["text"] for c in claims if not c["holds"]]
if bad:
    sys.exit("FAIL: claims do not hold: %s" % bad)
if not all(r["ok"] for r in doc["runs"]):
    sys.exit("FAIL: a run failed")
PY
python3 "$root/tests/scenarios/runner/validate_results.py" "$root/analysis/results.schema.json" "$tmp/out/results.json" ||
  { echo "FAIL: results.json does not match the schema"; exit 1; }
echo "ok: $study"
