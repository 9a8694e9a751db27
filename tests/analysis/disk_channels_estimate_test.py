#!/usr/bin/env python3
"""scripts/disk_channels_estimate.py (issue 22, F4): the channel count of a drive from fit points.

Points made by the same queueing model with a known channel count give that
count back; malformed results files get an error naming the file and the place.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "disk_channels_estimate.py")
spec = importlib.util.spec_from_file_location("estimate", SCRIPT)
estimate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(estimate)


def results(points):
    """A results.json of calibrate_disk.lua points: (bs, qd, {phase: ops/s})."""
    runs = []
    for bs, qd, rates in points:
        runs.append({"label": f"{bs} qd{qd}", "params": {"bs_bytes": bs, "qd": qd},
                     "phases": [{"phase": p, "last_ops_per_s": x} for p, x in rates.items()]})
    return {"runs": runs}


def run(doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    try:
        return subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)


def model_points(channels, service_s, delay_s):
    return [(4096, q, {"read": estimate.mva_throughput(channels, service_s, delay_s, q)}) for q in (1, 8, 64)]


class Estimate(unittest.TestCase):
    def test_points_of_a_known_channel_count_give_it_back(self):
        for channels, service_s, delay_s in ((1, 12e-6, 40e-6), (3, 35e-6, 18e-6), (4, 45e-6, 6e-6)):
            with self.subTest(channels=channels):
                doc = results(model_points(channels, service_s, delay_s))
                doc["runs"].append({"params": {"bs_bytes": 65536, "qd": 1}, "phases": [{"phase": "read", "last_ops_per_s": 1}]})
                r = run(doc)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(f"estimate: disk.channels = {channels} ", r.stdout)

    def test_repeats_count_by_their_median(self):
        points = model_points(3, 35e-6, 18e-6)
        noisy = [(bs, q, {"read": x["read"] * 5}) for bs, q, x in points[:1]]  # one wild repeat of depth 1
        doc = results(points + points + noisy)
        r = run(doc)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("estimate: disk.channels = 3 ", r.stdout)

    def test_malformed_files_name_the_place(self):
        cases = [
            ("not json", "Expecting value"),
            (results([]), "no points of 4096-byte blocks"),
            ({"runs": [{"params": {"qd": 1}, "phases": []}]}, "runs[0].params: expected bs_bytes and qd"),
            (results(model_points(3, 35e-6, 18e-6)[:2]), "read: 4096-byte points at 2 depths; need 3"),
            ({"runs": [{"params": {"bs_bytes": 4096, "qd": 1}, "phases": [{"phase": "read"}]}]},
             "runs[0] phase read: expected a phase name and last_ops_per_s > 0"),
            ({"runs": [{"params": {"bs_bytes": 4096, "qd": 1}, "phases": [{"last_ops_per_s": 5}]}]},
             "runs[0] phase None: expected a phase name"),
            ({"runs": [{"params": {"bs_bytes": 4096, "qd": 1}, "phases": 7}]}, "runs[0].phases: expected a list"),
            ([1, 2], "expected a results.json object"),
        ]
        for doc, expect in cases:
            with self.subTest(expect=expect):
                r = run(doc)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(expect, r.stderr)
                self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main()
