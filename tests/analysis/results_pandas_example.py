"""A sluice results.csv read with pandas (docs/results.md shows this file verbatim).

Usage: /usr/bin/python3 tests/analysis/results_pandas_example.py OUT/results.csv

Prints the read phase's throughput (decimal GB/s, last done) by file size and
thread count, and checks what docs/results.md says of the columns. The ctest
results.pandas_example runs it on the results of
tests/scenarios/scripts/size_sweep.lua.
"""
import csv
import math
import sys

import pandas as pd

path = sys.argv[1]
df = pd.read_csv(path)

# The read phase of every point, throughput against the file size in bytes, one column per thread count.
reads = df[(df["phase"] == "read") & df["ok"]]
table = reads.pivot_table(index="param_size_bytes", columns="param_threads", values="throughput_GB_per_s")
print(table.to_string())

# Counts, sizes, rates, times and latencies are numbers, not text.
metrics = ["ranks", "bytes", "ops", "first_done_s", "elapsed_s", "throughput_GB_per_s",
           "first_throughput_GB_per_s", "ops_per_s", "first_ops_per_s", "latency_us_p50", "latency_us_p99"]
for name in metrics + [c for c in df.columns if c.endswith("_bytes")]:
    assert pd.api.types.is_numeric_dtype(df[name]), f"{name} is {df[name].dtype}, not a number"

# A size parameter keeps its text ("256KiB") and is followed by its value in bytes.
columns = list(df.columns)
assert columns.index("param_size_bytes") == columns.index("param_size") + 1, columns

# A parameter whose value is a list (the script's own axis, "{256KiB, 1MiB}") is no column.
for name in columns:
    if name.startswith("param_") and not pd.api.types.is_numeric_dtype(df[name]):
        assert not df[name].astype(str).str.startswith("{").any(), f"{name} holds a list"

# An empty cell is "not measured": pandas reads it as NaN; a latency is never written as 0.
with open(path, newline="") as f:
    cells = list(csv.DictReader(f))
for name in ["latency_us_p50", "latency_us_p99"]:
    for row, cell in enumerate(cells):
        value = df.at[row, name]
        if cell[name] == "":
            assert math.isnan(value), f"row {row}: empty {name} read as {value}"
        else:
            assert float(cell[name]) > 0 and math.isclose(value, float(cell[name])), (row, name, cell[name])

print(f"ok: {len(df)} rows, {len(reads)} read phases, {int(df.isna().sum().sum())} empty cells")
