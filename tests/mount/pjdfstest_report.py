#!/usr/bin/env python3
"""Reads the TAP output of pjdfstest's test files (one file per test, as
mount_pjdfstest_test.sh writes them) and the expected-failure list, prints
the pass count per test group, and exits 1 when a test fails that the list
does not name (a bug, never to be added to the list without a reason that is
a deliberate design choice) or a file's output is broken (no plan, fewer results
than planned). Tests the list names that now pass are reported, not failed.

Usage: pjdfstest_report.py TAP_DIR EXPECTED_FAILURES
TAP_DIR holds <group>__<NN>.t.tap files; the list has lines
  <group>/<NN>.t  <tests: 1-3,7 or all>  <reason>
"""
import collections
import re
import sys


def parse_ranges(text, planned):
    if text == "all":
        return set(range(1, planned + 1))
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def read_tap(path):
    planned, results, bailed = None, {}, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^1\.\.(\d+)", line)
            if m and planned is None:
                planned = int(m.group(1))
                continue
            m = re.match(r"^(not ok|ok) (\d+)(.*)", line)
            if m:
                todo = "# TODO" in m.group(3)
                results[int(m.group(2))] = m.group(1) == "ok" or todo
            if line.startswith("Bail out!"):
                bailed = True
    return planned, results, bailed


def main():
    import os
    tap_dir, expected_path = sys.argv[1], sys.argv[2]
    expected = {}
    with open(expected_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                print(f"{expected_path}:{n}: expected '<file> <tests> <reason>', got: {line}")
                return 1
            expected[parts[0]] = (parts[1], parts[2])
    groups = collections.defaultdict(lambda: [0, 0])
    unexpected, now_passing, broken = [], [], []
    for name in sorted(os.listdir(tap_dir)):
        if not name.endswith(".t.tap"):
            continue
        test = name[: -len(".tap")].replace("__", "/")
        planned, results, bailed = read_tap(os.path.join(tap_dir, name))
        if planned is None:
            with open(os.path.join(tap_dir, name), encoding="utf-8", errors="replace") as f:
                head = f.read(300).strip().replace("\n", " | ")
            broken.append(f"{test}: no plan line (its output: {head or 'none'})")
            continue
        failed = {i for i in range(1, planned + 1) if not results.get(i, False)}
        group = test.split("/")[0]
        groups[group][0] += planned - len(failed)
        groups[group][1] += planned
        allowed = set()
        if test in expected:
            allowed = parse_ranges(expected[test][0], planned)
        if bailed and test not in expected:
            broken.append(f"{test}: bailed out")
        extra = sorted(failed - allowed)
        if extra:
            unexpected.append(f"{test}: tests {extra} failed (not in the expected-failure list)")
        fixed = sorted(allowed - failed)
        if fixed and expected.get(test, ("", ""))[0] != "all":
            now_passing.append(f"{test}: tests {fixed} pass now (listed as expected failures)")
    total_pass = sum(p for p, _ in groups.values())
    total = sum(t for _, t in groups.values())
    for group, (passed, planned) in sorted(groups.items()):
        print(f"pjdfstest {group:<10} {passed:>5} of {planned:>5} pass")
    print(f"pjdfstest all        {total_pass:>5} of {total:>5} pass; expected failures listed with reasons in "
          f"{os.path.basename(expected_path)}")
    for line in now_passing:
        print("note: " + line)
    for line in broken + unexpected:
        print("FAIL: " + line)
    return 1 if broken or unexpected or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
