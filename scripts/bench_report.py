#!/usr/bin/env python3
"""Renders the record of benchmark results into docs/benchmarks.md and the README's headline
table (issue 49 item 6; `make bench-report`).

The record, docs/bench_results.jsonl (env BENCH_RESULTS_FILE or --results overrides), has
one JSON object per line, appended by scripts/bench_record.py after each `make bench-*`
run: {"tag", "fields", "raw", "machine", "date", "command", "commit"} and optionally
"note" (the raw line's note, or a remark where the line has none), "exit_status" and
"source" (where a record seeded from docs/figures.md came from).

docs/benchmarks.md: the headline figures, the latest record of each tag (by date; of one
date, the later line of the file), with its value (the tag's key fields, FIGURES below),
goal, machine, date and benchmark; then the history, every older record. README.md: the
same headline table without goal and date (the README carries no dates: ctest
structure's TheReadmeIsAUsersPageOfAtMost200LinesWithoutDates) between the lines
  <!-- bench-report:begin -->  and  <!-- bench-report:end -->
The output depends on the record alone: the same record renders byte-identical files.

--check: write nothing; exit 1 with a diff when either file is not what the record
renders. A bad line of the record (not JSON, a missing or unknown key, a field or raw
line that does not parse, raw and fields that disagree) is an error naming file:line,
exit 2, as are missing README markers.

Usage: bench_report.py [--check] [--results FILE] [--out FILE] [--readme FILE]
"""
import argparse
import datetime
import difflib
import json
import math
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402  (the RESULT line parser the recorder uses)

ROOT = bench_record.ROOT
BEGIN = "<!-- bench-report:begin -->"
END = "<!-- bench-report:end -->"

# tag: (figure, key fields shown as the value, goal, benchmark, what it links to from the repository root).
FIGURES = {
    "P1": ("sim speed vs raw SimGrid", ("ratio",), "ratio >= 0.8", "make bench-sim", "tests/bench/sim_bench.cpp"),
    "P2": ("sim speed, coalesced vs raw SimGrid", ("ratio", "error"), "ratio >= 10", "make bench-sim",
           "tests/bench/sim_bench.cpp"),
    "P3": ("TCP transport vs iperf3", ("ratio",), ">= 0.8", "make bench-tcp", "tests/bench/tcp_bench.cpp"),
    "P4": ("reads over netns links vs line rate", ("ratio",), ">= 0.95", "make bench-emulate",
           "tests/bench/emulate_bench.cpp"),
    "P5": ("uring backend vs fio io_uring", ("ratio", "checksums"), ">= 0.95", "make bench-nvme",
           "tests/bench/nvme_bench.cpp"),
    "P6": ("file to GPU vs KvikIO", ("vs_kvikio_min", "vs_kvikio_median", "vs_ceiling", "vs_kvikio_min_1_2_threads"),
           "min >= 1.0, ceiling >= 0.9, 1-2 threads >= 1.3", "make bench-gpu", "tests/bench/gpu_bench.cpp"),
    "P6-cufile": ("file to GPU vs cuFile compat", ("ratio_vs_cufile", "ratio_vs_ceiling"), "3, 0.9", "make bench-gpu",
                  "tests/bench/gpu_bench.cpp"),
    "P6-direct-cufile": ("file to GPU vs cuFile compat, O_DIRECT", ("ratio_vs_cufile", "ratio_vs_ceiling"), "3, 0.9",
                         "make bench-gpu", "tests/bench/gpu_bench.cpp"),
    "P7": ("metadata server over loopback TCP",
           ("creates_per_s", "stats_per_s", "null_rpc_vs_sockperf", "stat_vs_null_rpc"), "40 k/s, 150 k/s, 0.8, 0.7",
           "make bench-meta", "tests/bench/meta_bench.cpp"),
    "P8": ("metadata sharding efficiency at 64 shards", ("efficiency_64",), ">= 0.9", "make bench-sim",
           "scripts/bench_sharding.sh"),
    "P9": ("fio through sluice mount vs sluice's sweep", ("fio_vs_sweep", "fio_vs_local"), "fio_vs_sweep >= 0.7",
           "make bench-mount", "scripts/bench_mount.sh"),
    "P10": ("whole hardware stack vs fio", ("read_vs_fio", "write_vs_fio", "transport"), ">= 0.8 (16-core host)",
            "make bench-hw", "scripts/bench_hw.sh"),
    "P11": ("study library at its seeds' sizes", ("library_wall_s", "cores"), "<= 900 s on 16 cores", "make bench-sim",
            "scripts/bench_fidelity.sh"),
    "P12": ("a 400 GiB read in fluid mode vs per chunk (18 + 50 nodes)", ("fluid_wall_s", "speedup", "max_err"),
            "fluid under 10 s, max_err under 2%", "make bench-sim", "scripts/bench_fluid.sh"),
    "P12b": ("a 2.3 TiB read in fluid mode (200 + 600 nodes)", ("big_wall_s", "max_rss_gib"),
             "under 60 s on one core, under 4 GiB", "make bench-sim", "scripts/bench_fluid.sh"),
    "P13": ("every point against its analytic bound", ("roofline_median", "roofline_min", "unexplained", "configs"),
            "none above its bound or below 0.9 unexplained", "make bench-roofline", "tests/physics/roofline.sh"),
    "P14": ("UCX transport puts vs ucx_perftest (same UCX, same transports)",
            ("put_bw_vs_perftest", "put_lat_vs_perftest", "tls"), "bandwidth >= 0.9, latency <= 1.2x", "make bench-ucx",
            "tests/bench/ucx_bench.cpp"),
    "P15": ("DLIO through sluice mount vs sluice's train_epoch and the simulation (MLPerf unet3d, shrunk)",
            ("train_epoch_vs_dlio", "sim_vs_dlio", "au_dlio", "au_train_epoch", "au_sim"), "none set yet (issue 52)",
            "make bench-mlperf", "scripts/bench_mlperf.sh"),
    "P16": ("4 KiB random and 1 MiB sequential reads through the mount vs fio on its local directory",
            ("rand4k_iops_vs_local", "seq_vs_local"), "none set yet (issue 54)", "make bench-mount",
            "scripts/bench_mount.sh"),
    "F1": ("calibration held-out error on netns links", ("median_err", "p90_err"), "-", "make bench-f1",
           "lua_scripts/calibrate_links.lua"),
    "F2": ("GPU copy model held-out error", ("median_err", "max_err", "p90_err"), "-", "ctest -R calibrate.gpu_sweep",
           "tests/scenarios/gpu_calibration_test.sh"),
    "F3": ("seed studies vs their published figures", ("median_err", "within_tolerance"), "median <= 10%",
           "make bench-fidelity", "scripts/bench_fidelity.sh"),
    "F4": ("drive model held-out error vs fio", ("median_err", "p90_err"), "median <= 10%", "make bench-f4",
           "scripts/f4_calibrate.sh"),
    "R1": ("fault soak", ("world", "worlds", "mirroring", "runs", "lost", "corrupt", "hung", "meta_bad"),
           "0 lost, corrupt, hung", "make soak", "tests/soak/soak_harness.hpp"),
    "R2": ("cluster soak, servers killed", ("runs", "lost", "corrupt", "hung", "launcher"), "0 lost, corrupt, hung",
           "make soak-cluster", "scripts/soak_cluster.sh"),
}

REQUIRED = ("tag", "fields", "raw", "machine", "date", "command", "commit")
OPTIONAL = ("note", "exit_status", "source")


class BadRecord(ValueError):
    pass


def shown(path):
    absolute = os.path.abspath(path)
    return os.path.relpath(absolute, ROOT) if absolute.startswith(ROOT + os.sep) else path


def fail(message, status=2):
    print(f"bench_report.py: {message}", file=sys.stderr)
    sys.exit(status)


def check_value(key, value):
    if not bench_record.KEY.match(key):
        raise BadRecord(f"field '{key}' is not a name")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadRecord(f"field '{key}' is not a number or a string")
    if isinstance(value, float) and not math.isfinite(value):
        raise BadRecord(f"field '{key}' is not finite")
    if isinstance(value, str) and (not value or any(c.isspace() for c in value)):
        raise BadRecord(f"field '{key}' is empty or has white space")


def check_date(date):
    if not isinstance(date, str) or not bench_record.DATE.match(date):
        raise BadRecord(f"date {date!r} is not YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]Z (UTC)")
    try:
        datetime.date.fromisoformat(date[:10])
        if "T" in date:
            datetime.time.fromisoformat(date[11:-1])
    except ValueError as e:
        raise BadRecord(f"date {date!r}: {e}") from None


def check_record(r):
    """The record's texts of its fields (as printed where there is a raw line). Raises BadRecord."""
    if not isinstance(r, dict):
        raise BadRecord("not a JSON object")
    missing = [k for k in REQUIRED if k not in r]
    if missing:
        raise BadRecord("no " + ", ".join(f"'{k}'" for k in missing))
    unknown = sorted(k for k in r if k not in REQUIRED + OPTIONAL)
    if unknown:
        raise BadRecord("unknown key(s) " + ", ".join(f"'{k}'" for k in unknown))
    if not isinstance(r["tag"], str) or not bench_record.TAG.match(r["tag"]):
        raise BadRecord(f"tag {r['tag']!r} is not letters, digits, '_', '.' or '-'")
    if not isinstance(r["fields"], dict) or not r["fields"]:
        raise BadRecord("'fields' is not a non-empty object")
    for k, v in r["fields"].items():
        check_value(k, v)
    for k in ("machine",):
        if not isinstance(r[k], str) or not r[k].strip():
            raise BadRecord(f"'{k}' is not a non-empty string")
    for k in ("command", "commit"):
        if r[k] is not None and (not isinstance(r[k], str) or not r[k].strip()):
            raise BadRecord(f"'{k}' is not null or a non-empty string")
    for k in ("note", "source"):
        if k in r and (not isinstance(r[k], str) or not r[k].strip()):
            raise BadRecord(f"'{k}' is not a non-empty string")
    if "exit_status" in r and (isinstance(r["exit_status"], bool) or not isinstance(r["exit_status"], int)
                               or r["exit_status"] == 0):
        raise BadRecord("'exit_status' is not a non-zero integer")
    check_date(r["date"])
    if r["raw"] is None:
        return {k: (str(v) if not isinstance(v, float) else repr(v)) for k, v in r["fields"].items()}
    if not isinstance(r["raw"], str) or not bench_record.is_result_line(r["raw"]):
        raise BadRecord("'raw' is not null or a RESULT line")
    try:
        parsed = bench_record.parse_result_texts(r["raw"])
    except bench_record.Malformed as e:
        raise BadRecord(f"'raw' is a malformed RESULT line ({e})") from None
    if parsed is None:
        raise BadRecord("'raw' is a skipped RESULT line")
    tag, texts, note, _ = parsed
    if tag != r["tag"]:
        raise BadRecord(f"'raw' names {tag}, the record {r['tag']}")
    if {k: bench_record.number_or_text(v) for k, v in texts.items()} != r["fields"] or list(texts) != list(r["fields"]):
        raise BadRecord("'fields' are not the raw line's key=value pairs")
    if note is not None and note != r.get("note"):
        raise BadRecord("'note' is not the raw line's note")
    return texts


def load(path):
    """[(index, record, texts)] of the record file; exits 2 naming file:line on a bad line."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        fail(f"{shown(path)}: {e.strerror}")
    except UnicodeDecodeError as e:
        fail(f"{shown(path)}: not UTF-8 ({e.reason})")
    if lines and lines[-1] == "":
        lines.pop()
    records = []
    for n, line in enumerate(lines, 1):
        try:
            if not line.strip():
                raise BadRecord("an empty line")
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                raise BadRecord(f"not JSON ({e.msg}, column {e.colno})") from None
            texts = check_record(r)
        except BadRecord as e:
            fail(f"{shown(path)}:{n}: {e}")
        records.append((n, r, texts))
    return records


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def value_text(key, text):
    return f"{key}={text}" + ("%" if key.endswith("_err") and not text.endswith("%") else "")


def value_cell(r, texts, keys, extra=""):
    shown_keys = [k for k in keys if k in texts] or list(texts)
    parts = ", ".join(value_text(k, texts[k]) for k in shown_keys)
    if "note" in r:
        parts += f" ({r['note']})"
    if "exit_status" in r:
        parts += f" (exit {r['exit_status']})"
    return cell(parts + extra)


def figure_of(tag):
    return FIGURES.get(tag, (tag, (), "-", None, None))


def benchmark_cell(tag, r, prefix):
    """The make target that produced the record where it was one, else the tag's benchmark; linked
    to the tag's script."""
    _, _, _, bench, link = figure_of(tag)
    if r["command"] and r["command"].startswith("make "):
        bench = r["command"]
    if link is None:
        return cell(f"`{bench or r['command']}`") if (bench or r["command"]) else "-"
    return f"[`{cell(bench)}`]({prefix}{link})"


def by_tag(records):
    """[(tag, [(index, record, texts)] newest first)], tags in FIGURES order, then the others by name."""
    tags = {}
    for entry in records:
        tags.setdefault(entry[1]["tag"], []).append(entry)
    order = [t for t in FIGURES if t in tags] + sorted(t for t in tags if t not in FIGURES)
    return [(t, sorted(tags[t], key=lambda e: (e[1]["date"], e[0]), reverse=True)) for t in order]


def same_run(a, b):
    """Records of one recorded run (a date with its time, machine, command and commit)."""
    return "T" in a["date"] and all(a[k] == b[k] for k in ("date", "machine", "command", "commit"))


def headline_rows(records, prefix, columns):
    rows = []
    for tag, entries in by_tag(records):
        _, latest, texts = entries[0]
        name, keys, goal, _, _ = figure_of(tag)
        more = sum(1 for _, r, _ in entries[1:] if same_run(r, latest))
        extra = f" (+{more} more of this run)" if more else ""
        values = {"figure": cell(f"{name} ({tag})" if name != tag else tag),
                  "value": value_cell(latest, texts, keys, extra),
                  "goal": cell(goal), "machine": cell(latest["machine"]), "date": latest["date"],
                  "benchmark": benchmark_cell(tag, latest, prefix)}
        rows.append("| " + " | ".join(values[c] for c in columns) + " |")
    return rows


def table(columns, rows):
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)] + rows


DOC_COLUMNS = ("figure", "value", "goal", "machine", "date", "benchmark")
README_COLUMNS = ("figure", "value", "machine", "benchmark")


def render_doc(records):
    out = [
        "# Benchmark results",
        "",
        "<!-- Generated by scripts/bench_report.py from docs/bench_results.jsonl; do not edit:",
        "     `make bench-report`. -->",
        "",
        "The latest run of each figure with its machine and date, then every older run. Each real",
        "`make bench-*` run appends its RESULT lines to [bench_results.jsonl](bench_results.jsonl)",
        "(scripts/bench_record.py; not with `BENCH_SMOKE=1`); `make bench-report` renders this page and the",
        "README's table from it. What each figure measures, what changed it and what limits it:",
        "[figures.md](figures.md). Compare figures only between runs on the same machine. Records seeded",
        "from figures.md carry its machine and dates; where it gives no date, the date of the commit that",
        "first recorded the figure (their `source` says so). Of one date, the later line of the record is",
        "taken as the later run.",
        "",
        "## Headline figures",
        "",
    ]
    out += table(DOC_COLUMNS, headline_rows(records, "../", DOC_COLUMNS))
    out += ["", "## History", "", "Older records, newest first.", ""]
    rows = []
    for tag, entries in by_tag(records):
        for _, r, texts in entries[1:]:
            value = " ".join(value_text(k, v) for k, v in texts.items())
            value += f" ({r['note']})" if "note" in r else ""
            value += f" (exit {r['exit_status']})" if "exit_status" in r else ""
            rows.append("| " + " | ".join([tag, r["date"], cell(r["machine"]), cell(value),
                                           cell(f"`{r['command']}`") if r["command"] else "-",
                                           cell(r["commit"]) if r["commit"] else "-"]) + " |")
    out += table(("tag", "date", "machine", "value", "command", "commit"), rows) if rows else ["None yet."]
    return "\n".join(out) + "\n"


def render_readme(text, records, where):
    lines = text.split("\n")
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begins) != 1 or len(ends) != 1 or begins[0] > ends[0]:
        fail(f"{where}: needs one line '{BEGIN}' and, after it, one line '{END}' "
             f"(found {len(begins)} and {len(ends)})")
    table_lines = table(README_COLUMNS, headline_rows(records, "", README_COLUMNS))
    return "\n".join(lines[:begins[0] + 1] + table_lines + lines[ends[0]:])


def read_text(path, missing_ok):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        if missing_ok:
            return None
        fail(f"{shown(path)}: no such file")
    except OSError as e:
        fail(f"{shown(path)}: {e.strerror}")


def main():
    ap = argparse.ArgumentParser(
        description="Render docs/benchmarks.md and README.md's headline table from docs/bench_results.jsonl.")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when either file is out of date")
    ap.add_argument("--results", default=os.environ.get("BENCH_RESULTS_FILE") or bench_record.DEFAULT_RESULTS)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = ap.parse_args()
    records = load(args.results)
    wanted = [(args.out, render_doc(records))]
    readme = read_text(args.readme, missing_ok=False)
    wanted.append((args.readme, render_readme(readme, records, shown(args.readme))))
    stale = []
    for path, text in wanted:
        now = read_text(path, missing_ok=True)
        if now == text:
            continue
        stale.append(path)
        if args.check:
            print(f"bench_report.py: {shown(path)} is not what {shown(args.results)} renders (make bench-report):")
            sys.stdout.writelines(difflib.unified_diff((now or "").splitlines(keepends=True),
                                                       text.splitlines(keepends=True), f"{shown(path)} (as it is)",
                                                       f"{shown(path)} (rendered)"))
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if args.check:
        if stale:
            sys.exit(1)
        print(f"bench_report.py: {', '.join(shown(p) for p, _ in wanted)} up to date with {shown(args.results)}")
    else:
        print(f"bench_report.py: {len(records)} records; " +
              (f"wrote {', '.join(shown(p) for p in stale)}" if stale else "nothing changed"))


if __name__ == "__main__":
    main()
