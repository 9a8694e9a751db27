#!/usr/bin/env python3
"""Line coverage per top-level folder, from gcovr's JSON summary.

Usage: coverage_by_folder.py BUILD_DIR [--min-core PCT]
Prints one row per top-level source folder (core/, sim/, ...), the lines of
the core's subfolders, and exits non-zero when core/ is below --min-core.
"""
import collections
import json
import os
import subprocess
import sys


def main() -> int:
    build = sys.argv[1]
    min_core = float(sys.argv[sys.argv.index("--min-core") + 1]) if "--min-core" in sys.argv else 0.0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    summary = subprocess.run(
        ["gcovr", "-r", root, build, "--json-summary", "-", "--exclude", r".*tests/.*",
         "--exclude", r".*/build[^/]*/.*", "--gcov-ignore-parse-errors"],
        check=True, capture_output=True, text=True).stdout
    files = json.loads(summary)["files"]
    totals = collections.defaultdict(lambda: [0, 0])
    for f in files:
        parts = f["filename"].split("/")
        keys = [parts[0] + "/"]
        if parts[0] == "core" and len(parts) > 2:
            keys.append("/".join(parts[:2]) + "/")
        for key in keys:
            totals[key][0] += f["line_covered"]
            totals[key][1] += f["line_total"]
    print(f"{'folder':<22}{'lines':>8}{'covered':>9}{'line_%':>8}")
    for key in sorted(totals):
        covered, total = totals[key]
        pct = 100.0 * covered / total if total else 100.0
        print(f"{key:<22}{total:>8}{covered:>9}{pct:>8.1f}")
    covered, total = totals.get("core/", [0, 0])
    core_pct = 100.0 * covered / total if total else 0.0
    print(f"RESULT coverage core_line_pct={core_pct:.1f}")
    if core_pct < min_core:
        print(f"core/ line coverage {core_pct:.1f}% is below {min_core}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
