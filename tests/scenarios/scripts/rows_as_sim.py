"""Checks that every run of a results file (a multi-process backend) is ok, of
`backend`, and has exactly the simulated run's rows: (workload, phase, ops,
ranks) in order. Used for study 3 (two workloads per point) on the cluster path.
Usage: rows_as_sim.py RESULTS.json SIM_RESULTS.json BACKEND"""
import json
import sys

runs = json.load(open(sys.argv[1]))["runs"]
sims = json.load(open(sys.argv[2]))["runs"]
backend = sys.argv[3]
assert len(runs) == len(sims) > 0, (len(runs), len(sims))
assert all(r["ok"] and r["backend"] == backend for r in runs), [(r["label"], r.get("error")) for r in runs]
for r, sim in zip(runs, sims):
    rows = [(p["workload"], p["phase"], p["ops"], p["ranks"]) for p in r["phases"]]
    want = [(p["workload"], p["phase"], p["ops"], p["ranks"]) for p in sim["phases"]]
    assert rows == want, (r["label"], rows, want)
print("rows as in sim:", [(p["workload"], p["phase"], p["ops"]) for p in runs[-1]["phases"]])
