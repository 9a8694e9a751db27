#!/usr/bin/env python3
"""Appends a benchmark run's RESULT lines to the record of results (issue 49 item 6).

Reads a benchmark's log (a file, or stdin when none or "-" is given), takes every line
  RESULT TAG key=value ... [(note)]
and appends one JSON object per line to docs/bench_results.jsonl (env BENCH_RESULTS_FILE
overrides the path): {"tag", "fields", "raw", ["note",] "machine", "date", "command",
"commit"[, "exit_status"]}. fields holds the key=value pairs, a value as a number where it
is one (an integer or a decimal), a key printed again as the first free key_2, key_3, ..
(bench_gpu's goal= after each ratio); raw is the line as printed. `RESULT TAG skipped (why)`
lines are left out. `make bench-*` runs this on the log of each run (the Makefile,
"bench_logged"); scripts/bench_report.py renders the record into docs/benchmarks.md and
the README's headline table.

  machine  env BENCH_MACHINE, else "<nproc>-core <GPU> host" with the GPU named by
           nvidia-smi ("16-core H200 host"), else "<nproc>-core VM" (a hypervisor
           below) or "<nproc>-core host"
  date     env BENCH_DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]Z), else now, UTC
  command  --command (the make target that ran), else null
  commit   the repository's HEAD (12 hex digits; "-dirty" with changes to tracked
           files), else null
  exit_status  --exit-status when not 0: the benchmark failed (a goal missed, or worse)

A malformed RESULT line (no tag, no key=value, a word that is not key=value or has no
key or value, an unclosed note) is an error naming its line: exit 2, and nothing is
appended. The file is rewritten whole through a temporary file and a rename, under a
lock on its folder, so a reader never sees half a record and two runs recording at
once both land.

Usage: bench_record.py [--command CMD] [--exit-status N] [LOG|-]
"""
import argparse
import datetime
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RESULTS = os.path.join(ROOT, "docs", "bench_results.jsonl")

RESULT_LINE = re.compile(r"^RESULT(?:\s|$)")
TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
INTEGER = re.compile(r"^[+-]?[0-9]+$")
DECIMAL = re.compile(r"^[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2})?Z)?$")


class Malformed(ValueError):
    """A RESULT line that is not TAG key=value ... [(note)]."""


def is_result_line(line):
    return RESULT_LINE.match(line) is not None


def number_or_text(text):
    """The value as an int or a float where it is one; otherwise the text."""
    if INTEGER.match(text):
        return int(text)
    if DECIMAL.match(text):
        return float(text)
    return text


def parse_result_texts(line):
    """(tag, texts, note, text) of a RESULT line: texts maps each key to its value as printed,
    note is None when there is none, text is the line; None for a `RESULT TAG skipped ...`
    line. Raises Malformed with the reason."""
    text = line.rstrip("\r\n").rstrip()
    words = text[len("RESULT"):].split(None, 1)
    if not words:
        raise Malformed("no tag after RESULT")
    tag = words[0]
    if not TAG.match(tag):
        raise Malformed(f"tag '{tag}' is not letters, digits, '_', '.' or '-'")
    rest = words[1].strip() if len(words) > 1 else ""
    if rest.split(None, 1)[:1] == ["skipped"]:
        return None
    texts = {}
    note = None
    pos = 0
    while pos < len(rest):
        if rest[pos].isspace():
            pos += 1
            continue
        if rest[pos] == "(":
            if not rest.endswith(")"):
                raise Malformed("a note '(' that does not end the line with ')'")
            note = rest[pos + 1:-1].strip()
            break
        end = pos
        while end < len(rest) and not rest[end].isspace():
            end += 1
        word = rest[pos:end]
        pos = end
        key, eq, value = word.partition("=")
        if not eq:
            raise Malformed(f"'{word}' is not key=value")
        if not KEY.match(key):
            raise Malformed(f"'{word}': the key is not a name")
        if not value:
            raise Malformed(f"'{word}': no value")
        if key in texts:  # bench_gpu prints goal= after each of its two ratios: goal, goal_2
            n = 2
            while f"{key}_{n}" in texts:
                n += 1
            key = f"{key}_{n}"
        texts[key] = value
    if not texts:
        raise Malformed("no key=value fields")
    return tag, texts, note, text


def parse_result_line(line):
    """(tag, fields, note, text) of a RESULT line, each value a number where it is one; None for
    a `RESULT TAG skipped ...` line. Raises Malformed with the reason."""
    parsed = parse_result_texts(line)
    if parsed is None:
        return None
    tag, texts, note, text = parsed
    return tag, {k: number_or_text(v) for k, v in texts.items()}, note, text


def read_results(lines, where):
    """[(tag, fields, note, text)] of the log's RESULT lines; exits 2 naming every malformed one."""
    results, errors = [], []
    for n, line in enumerate(lines, 1):
        if not is_result_line(line):
            continue
        try:
            parsed = parse_result_line(line)
        except Malformed as e:
            errors.append(f"{where}:{n}: malformed RESULT line ({e}): {line.rstrip()}")
            continue
        if parsed is not None:
            results.append(parsed)
    if errors:
        for e in errors:
            print(f"bench_record.py: {e}", file=sys.stderr)
        print("bench_record.py: nothing recorded", file=sys.stderr)
        sys.exit(2)
    return results


def gpu_name(full):
    """'NVIDIA H100 80GB HBM3' -> 'H100'; 'Tesla V100-SXM2-16GB' -> 'Tesla V100'."""
    words = full.replace("NVIDIA", "").split()
    kept = []
    for w in words:
        if any(c.isdigit() for c in w):
            kept.append(w.split("-")[0])
            break
        kept.append(w)
    return " ".join(kept) or full.strip()


def machine():
    named = os.environ.get("BENCH_MACHINE", "").strip()
    if named:
        return named
    cores = len(os.sched_getaffinity(0))
    gpus = []
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                 text=True, timeout=30, check=False)
            if out.returncode == 0:
                gpus = [gpu_name(n) for n in out.stdout.splitlines() if n.strip()]
        except (OSError, subprocess.SubprocessError):
            gpus = []
    if gpus:
        kinds = []
        for g in gpus:
            if g not in kinds:
                kinds.append(g)
        named_gpus = " + ".join((f"{gpus.count(k)}x {k}" if gpus.count(k) > 1 else k) for k in kinds)
        return f"{cores}-core {named_gpus} host"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            virtual = any(line.startswith("flags") and " hypervisor" in line for line in f)
    except OSError:
        virtual = False
    return f"{cores}-core {'VM' if virtual else 'host'}"


def run_date():
    named = os.environ.get("BENCH_DATE", "").strip()
    if named:
        if not DATE.match(named):
            print(f"bench_record.py: BENCH_DATE='{named}' is not YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]Z", file=sys.stderr)
            sys.exit(2)
        return named
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def commit():
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")  # a look only: no index refresh written
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                              timeout=30, check=False, env=env)
        if head.returncode != 0:
            return None
        status = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=60, check=False, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = status.returncode != 0 or status.stdout.strip() != ""
    return head.stdout.strip() + ("-dirty" if dirty else "")


def record(tag, fields, note, text, context):
    r = {"tag": tag, "fields": fields, "raw": text}
    if note is not None:
        r["note"] = note
    r.update(machine=context["machine"], date=context["date"], command=context["command"], commit=context["commit"])
    if context["exit_status"]:
        r["exit_status"] = context["exit_status"]
    return r


def append_atomically(path, records):
    """The file with the records added, written to a temporary file and renamed over it."""
    folder = os.path.dirname(os.path.abspath(path))
    lock = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path, "rb") as f:
                before = f.read()
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            before = b""
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        if before and not before.endswith(b"\n"):
            before += b"\n"
        added = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".bench_results.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(before + added)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    finally:
        os.close(lock)


def main():
    ap = argparse.ArgumentParser(description="Append a benchmark log's RESULT lines to docs/bench_results.jsonl.")
    ap.add_argument("log", nargs="?", default="-", help="the benchmark's log (default: stdin)")
    ap.add_argument("--command", default=None, help="what produced the log, e.g. 'make bench-sim'")
    ap.add_argument("--exit-status", type=int, default=0, help="the benchmark's exit status (kept when not 0)")
    args = ap.parse_args()
    path = os.environ.get("BENCH_RESULTS_FILE") or DEFAULT_RESULTS
    if args.log == "-":
        where, lines = "<stdin>", sys.stdin.read().splitlines(keepends=True)
    else:
        where = args.log
        try:
            with open(args.log, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines(keepends=True)
        except OSError as e:
            print(f"bench_record.py: {args.log}: {e.strerror}", file=sys.stderr)
            sys.exit(2)
    results = read_results(lines, where)
    if not results:
        print(f"bench_record.py: no RESULT lines in {where}: nothing recorded", file=sys.stderr)
        return
    context = {"machine": machine(), "date": run_date(), "command": args.command, "commit": commit(),
               "exit_status": args.exit_status}
    records = [record(*r, context) for r in results]
    try:
        append_atomically(path, records)
    except OSError as e:
        print(f"bench_record.py: {path}: {e.strerror}: nothing recorded", file=sys.stderr)
        sys.exit(2)
    tags = " ".join(r["tag"] for r in records)
    print(f"bench_record.py: {len(records)} record(s) ({tags}) on {context['machine']} appended to {path}")


if __name__ == "__main__":
    main()
