#!/usr/bin/env python3
"""Compares a study's results.json with one recorded before (issue 49: behaviour
unchanged by a move). What a rerun may change is left out: when and where it ran
(created_utc, machine, sluice_version, versions), wall times (any key with
"wall" in it), log tails, and where the study
was run from (a script's path is kept from its lua_scripts/ folder on). Everything else, every
counter, phase row, headline and claim, must be equal; numbers to 1e-9
relative (JSON's text round trip), the rest exactly.

Usage: results_equal.py RECORDED.json RESULTS.json
       results_equal.py --record RESULTS.json RECORDED.json  (writes the normal form)
"""
import json
import math
import re
import sys

DROPPED = {"created_utc", "machine", "sluice_version", "versions", "log_tail"}


def normal(value):
    if isinstance(value, dict):
        return {k: normal(v) for k, v in sorted(value.items()) if k not in DROPPED and "wall" not in k}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"[^\s\"']*/(lua_scripts/)", r"\1", value)
    return value


def differences(recorded, now, where, out):
    if len(out) >= 20:
        return
    if isinstance(recorded, dict) and isinstance(now, dict):
        for k in sorted(set(recorded) | set(now)):
            if k not in now:
                out.append("%s.%s: recorded, now missing" % (where, k))
            elif k not in recorded:
                out.append("%s.%s: new (%s)" % (where, k, json.dumps(now[k])[:80]))
            else:
                differences(recorded[k], now[k], "%s.%s" % (where, k), out)
    elif isinstance(recorded, list) and isinstance(now, list):
        if len(recorded) != len(now):
            out.append("%s: %d entries recorded, %d now" % (where, len(recorded), len(now)))
        for i, (a, b) in enumerate(zip(recorded, now)):
            differences(a, b, "%s[%d]" % (where, i), out)
    elif isinstance(recorded, (int, float)) and isinstance(now, (int, float)) and \
            not isinstance(recorded, bool) and not isinstance(now, bool):
        if not math.isclose(recorded, now, rel_tol=1e-9, abs_tol=1e-12):
            out.append("%s: recorded %r, now %r" % (where, recorded, now))
    elif recorded != now:
        out.append("%s: recorded %s, now %s" % (where, json.dumps(recorded)[:80], json.dumps(now)[:80]))


def main(argv):
    if len(argv) == 4 and argv[1] == "--record":
        with open(argv[2]) as f:
            doc = normal(json.load(f))
        with open(argv[3], "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        return 0
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        recorded = normal(json.load(f))
    with open(argv[2]) as f:
        now = normal(json.load(f))
    out = []
    differences(recorded, now, "results", out)
    if out:
        print("FAIL: results differ from %s (rerun with SLUICE_RECORD_STUDY_RESULTS=1 where the change "
              "is meant to change them):" % argv[1])
        for line in out:
            print("  " + line)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
