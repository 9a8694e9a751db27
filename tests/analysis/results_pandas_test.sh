#!/usr/bin/env bash
# docs/results.md's pandas example (issue 22 item 4), run as the doc shows it:
# the doc's python block must be tests/analysis/results_pandas_example.py,
# which then reads the results.csv of a small sim sweep
# (tests/scenarios/scripts/size_sweep.lua) with Debian's python3 and pandas.
# Exit 77 (skipped) where /usr/bin/python3 cannot import pandas.
set -u
sluice="$1"
root=$(cd "$(dirname "$0")/../.." && pwd)
example="$root/tests/analysis/results_pandas_example.py"
# Debian's interpreter, where python3-pandas installs (not a pyenv or venv python3 on PATH).
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk '/^```python$/ { inside = 1; next } /^```$/ { if (inside) exit } inside' "$root/docs/results.md" >"$tmp/doc.py"
if ! diff -u "$tmp/doc.py" "$example" >"$tmp/diff.txt"; then
  echo "FAIL: docs/results.md's python block differs from tests/analysis/results_pandas_example.py"
  head -40 "$tmp/diff.txt"
  exit 1
fi
echo "ok: docs/results.md shows tests/analysis/results_pandas_example.py verbatim"

if ! "$python" -c 'import pandas' 2>"$tmp/import.txt"; then
  echo "SKIP: $python cannot import pandas (Debian package python3-pandas; make deps installs it):"
  tail -1 "$tmp/import.txt"
  exit 77
fi

"$sluice" run "$root/tests/scenarios/scripts/size_sweep.lua" --out "$tmp/out" >"$tmp/run.txt" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
  echo "FAIL: sluice run size_sweep.lua exited $rc"
  tail -20 "$tmp/run.txt"
  exit 1
fi
if ! "$python" "$example" "$tmp/out/results.csv"; then
  echo "FAIL: the pandas example failed on this results.csv:"
  head -3 "$tmp/out/results.csv"
  exit 1
fi
echo "ok: the pandas example reads results.csv"
