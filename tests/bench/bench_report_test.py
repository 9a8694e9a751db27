#!/usr/bin/env python3
"""ctest bench.report (issue 49 item 6): the record of benchmark results and what renders it.

1. docs/benchmarks.md and README.md's headline table are what docs/bench_results.jsonl
   renders (scripts/bench_report.py --check).
2. In a temporary folder: scripts/bench_record.py records a sample log's RESULT lines
   (not its `skipped` one; a key printed twice as key_2), a later run of one tag makes it that tag's headline row, and
   bench_report.py renders the rows with their values, goal, machine, date and benchmark
   (the README's table without a date).
3. A malformed RESULT line and a malformed line of the record each exit 2 with a message
   naming file:line, and leave the record and the rendered files as they were.
4. The same record renders byte-identical files; --check passes on them and fails (exit 1,
   with a diff) when one is edited.

Usage: bench_report_test.py SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

failures = []


def check(ok, what, detail=""):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)
        if detail:
            print("      " + detail.replace("\n", "\n      "))


def run(script, args, env=None, stdin=None):
    full_env = dict(os.environ)
    full_env.pop("BENCH_RESULTS_FILE", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, script] + args, capture_output=True, text=True, env=full_env, input=stdin,
                          check=False)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    record = os.path.join(src, "scripts", "bench_record.py")
    report = os.path.join(src, "scripts", "bench_report.py")

    # 1. The repository's rendered files are up to date with its record.
    r = run(report, ["--check"])
    check(r.returncode == 0, "docs/benchmarks.md and README.md are what docs/bench_results.jsonl renders "
          "(make bench-report)", r.stdout + r.stderr)

    with tempfile.TemporaryDirectory(prefix="bench-report-test.") as tmp:
        results = os.path.join(tmp, "results.jsonl")
        out = os.path.join(tmp, "benchmarks.md")
        readme = os.path.join(tmp, "README.md")
        with open(readme, "w", encoding="utf-8") as f:
            f.write("# x\n\n## Headline figures\n\n<!-- bench-report:begin -->\nold table\n"
                    "<!-- bench-report:end -->\n\nafter\n")
        render = ["--results", results, "--out", out, "--readme", readme]
        env = {"BENCH_RESULTS_FILE": results, "BENCH_MACHINE": "test machine", "BENCH_DATE": "2026-01-02T03:04:05Z"}

        # 2. Record a sample log: two RESULT lines and a skipped one.
        log = os.path.join(tmp, "bench.log")
        with open(log, "w", encoding="utf-8") as f:
            f.write("building...\nRESULT P1 ratio=3.210 goal=0.8\nsome table\n"
                    "RESULT P13 roofline_min=0.9 roofline_median=0.99 unexplained=0 configs=4 (smoke-sized)\n"
                    "RESULT P6-cufile ratio_vs_cufile=1.20 goal=3 ratio_vs_ceiling=0.95 goal=0.9\n"
                    "RESULT P6 skipped (no GPU)\n")
        r = run(record, ["--command", "make bench-test", log], env)
        check(r.returncode == 0, "bench_record.py records a sample log", r.stdout + r.stderr)
        lines = read(results).decode().splitlines() if os.path.exists(results) else []
        recs = [json.loads(line) for line in lines]
        check([x["tag"] for x in recs] == ["P1", "P13", "P6-cufile"],
              "three records, P1, P13 and P6-cufile (the skipped P6 line left out)", str(lines))
        if len(recs) == 3:
            p1, p13, cufile = recs
            check(cufile["fields"] == {"ratio_vs_cufile": 1.2, "goal": 3, "ratio_vs_ceiling": 0.95, "goal_2": 0.9},
                  "a key printed twice (bench_gpu's goal=) is kept as key_2", str(cufile))
            check(p1["fields"] == {"ratio": 3.21, "goal": 0.8} and isinstance(p13["fields"]["configs"], int),
                  "the fields are parsed into numbers", str(recs))
            check(p1["raw"] == "RESULT P1 ratio=3.210 goal=0.8" and p13.get("note") == "smoke-sized",
                  "the raw line and its note are kept", str(recs))
            check(all(x["machine"] == "test machine" and x["date"] == "2026-01-02T03:04:05Z"
                      and x["command"] == "make bench-test" and "commit" in x for x in recs),
                  "machine, date, command and commit recorded", str(recs))
        # A later run of P1, from stdin: P1's headline row is the later one, the first goes to the history.
        r = run(record, ["--command", "make bench-test"], dict(env, BENCH_DATE="2026-01-03T00:00:00Z",
                                                               BENCH_MACHINE="other machine"),
                stdin="RESULT P1 ratio=2.5 goal=0.8\n")
        check(r.returncode == 0 and len(read(results).decode().splitlines()) == 4, "a second run (stdin) is appended",
              r.stdout + r.stderr)
        # A run recorded later but dated earlier (BENCH_DATE) does not take the headline: the date decides.
        r = run(record, [], dict(env, BENCH_DATE="2026-01-01"), stdin="RESULT P1 ratio=1.5\n")
        check(r.returncode == 0 and len(read(results).decode().splitlines()) == 5, "a backdated run is appended",
              r.stdout + r.stderr)

        r = run(report, render)
        check(r.returncode == 0, "bench_report.py renders the sample record", r.stdout + r.stderr)
        doc = read(out).decode() if os.path.exists(out) else ""
        head = doc.split("## History")[0]
        history = doc.split("## History")[-1]
        row = next((line for line in head.splitlines() if "(P1)" in line), "")
        check("ratio=2.5" in row and "other machine" in row and "2026-01-03T00:00:00Z" in row
              and "ratio >= 0.8" in row and "[`make bench-test`](../tests/bench/sim_bench.cpp)" in row,
              "P1's headline row: the latest run's value, goal, machine, date and make target (linked)", row)
        row = next((line for line in head.splitlines() if "(P13)" in line), "")
        check("roofline_median=0.99, roofline_min=0.9, unexplained=0, configs=4 (smoke-sized)" in row
              and "test machine" in row and "2026-01-02T03:04:05Z" in row,
              "P13's headline row: its key fields and note", row)
        check("ratio=3.210 goal=0.8" in history and "2026-01-02T03:04:05Z" in history and "ratio=2.5" not in history
              and history.find("ratio=3.210") < history.find("ratio=1.5"),
              "the older P1 runs are in the history, as printed, newest first", history)
        text = read(readme).decode()
        table = text.split("<!-- bench-report:begin -->\n")[-1].split("<!-- bench-report:end -->")[0]
        rows = [line for line in table.splitlines() if line.startswith("| ") and "(P" in line]
        check(len(rows) == 3 and "ratio=2.5" in rows[0] and "other machine" in rows[0] and "old table" not in text
              and text.endswith("<!-- bench-report:end -->\n\nafter\n"),
              "README: the table between the markers, the rest as it was", text)
        check(not re.search(r"\b20[0-9][0-9]-[01][0-9]-[0-3][0-9]\b", table), "README: no dates in the table", table)

        # 4. Determinism and --check.
        before = {p: read(p) for p in (results, out, readme)}
        r = run(report, render)
        check(r.returncode == 0 and all(read(p) == b for p, b in before.items()),
              "rendering the same record again gives byte-identical files", r.stdout + r.stderr)
        r = run(report, render + ["--check"])
        check(r.returncode == 0, "--check passes on what was just rendered", r.stdout + r.stderr)
        with open(out, "a", encoding="utf-8") as f:
            f.write("edited by hand\n")
        r = run(report, render + ["--check"])
        check(r.returncode == 1 and "+++" in r.stdout and "-edited by hand" in r.stdout,
              "--check fails with a diff when benchmarks.md was edited", r.stdout + r.stderr)
        with open(out, "wb") as f:
            f.write(before[out])
        with open(readme, "wb") as f:
            f.write(before[readme].replace(b"ratio=2.5", b"ratio=2.6"))
        r = run(report, render + ["--check"])
        check(r.returncode == 1 and "README.md" in r.stdout and "+| " in r.stdout,
              "--check fails when the README's table was edited", r.stdout + r.stderr)
        with open(readme, "ab") as f:
            f.write(b"a line after the table\n")
        r = run(report, render)
        check(r.returncode == 0 and read(readme) == before[readme] + b"a line after the table\n",
              "rendering keeps the README's text outside the markers", r.stdout + r.stderr)
        with open(readme, "wb") as f:
            f.write(before[readme])

        # 3. A malformed RESULT line: exit 2 naming the line; nothing appended (not even the good line).
        bad_log = os.path.join(tmp, "bad.log")
        with open(bad_log, "w", encoding="utf-8") as f:
            f.write("RESULT P1 ratio=1.0\nok\nRESULT P3 ratio=0.9 oops\n")
        r = run(record, [bad_log], env)
        check(r.returncode == 2 and f"{bad_log}:3:" in r.stderr and "oops" in r.stderr,
              "a malformed RESULT line: exit 2, naming file:line", f"exit {r.returncode}: {r.stderr}")
        check(read(results) == before[results], "a malformed RESULT line leaves the record as it was")
        for line in ("RESULT P1 ratio=", "RESULT P1 =1", "RESULT P1 ratio=1 =2", "RESULT", "RESULT P1 (note only)",
                     "RESULT P1 ratio=1 (unclosed"):
            r = run(record, [], env, stdin=f"{line}\n")
            check(r.returncode == 2 and "<stdin>:1:" in r.stderr and read(results) == before[results],
                  f"malformed '{line}': exit 2, naming <stdin>:1, nothing appended", f"exit {r.returncode}: {r.stderr}")

        # 3. A malformed line of the record: exit 2 naming file:line; nothing rendered.
        good = read(results)
        for n, broken in ((3, b"{not json\n"), (2, b'{"tag": "P1"}\n'),
                          (3, b'{"tag": "P1", "fields": {"ratio": 2.5}, "raw": "RESULT P1 ratio=9", "machine": "m", '
                              b'"date": "2026-01-03", "command": null, "commit": null}\n')):
            lines = good.splitlines(keepends=True)
            if len(lines) < n:
                check(False, f"the record has a line {n} to break", good.decode())
                continue
            lines[n - 1] = broken
            with open(results, "wb") as f:
                f.write(b"".join(lines))
            r = run(report, render)
            check(r.returncode == 2 and f"{results}:{n}:" in r.stderr,
                  f"a malformed record line {n}: exit 2, naming file:line", f"exit {r.returncode}: {r.stderr}")
            check(read(out) == before[out] and read(readme) == before[readme],
                  f"a malformed record line {n} leaves benchmarks.md and the README as they were")
            r = run(report, render + ["--check"])
            check(r.returncode == 2 and f"{results}:{n}:" in r.stderr, f"--check on it: exit 2 too", r.stderr)

    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
