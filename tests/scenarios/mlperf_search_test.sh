#!/bin/bash
# Issue 52 item 2 (ctest mlperf.search): sl.mlperf finds the most accelerators
# a storage keeps at the AU threshold. tests/scenarios/scripts/mlperf_search_bound.lua
# is built to bind at a count computed by hand (8 accelerators: its header
# derives it); the search must land on it for one client node (8 per client)
# and for two (4 per client), and the study lua_scripts/mlperf_unet3d.lua on
# its own (4), and write the answers to results.json's mlperf
# (valid against the schema) and mlperf.csv, and keep every probe as a point.
# Bad input (a threshold outside (0, 1], an empty clients list, a maximum
# below 1, more client nodes than the workload has, a workload without
# accelerators, too few samples) is exit 2 naming the field.
# Usage: mlperf_search_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
script=$here/tests/scenarios/scripts/mlperf_search_bound.lua
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/scenarios/test_lib.sh"

expect 0 "the search runs on the simulator" -- "$sluice" run "$script" --out "$tmp/run"
for want in "answer: clients=1 accelerators=8 per_client=8 " "answer: clients=2 accelerators=8 per_client=4 "; do
  grep -q "^$want" "$tmp/out" && echo "ok: $want" || { echo "FAIL: no line '$want'"; grep '^answer' "$tmp/out"; fail=1; }
done
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 "$here/tests/scenarios/runner/validate_results.py" "$here/analysis/results.schema.json" \
    "$tmp/run/results.json" || { echo "FAIL: results.json does not validate"; fail=1; }
fi
python3 - "$tmp/run/results.json" "$tmp/run/mlperf.csv" <<'PY' || fail=1
import csv, json, sys
doc = json.load(open(sys.argv[1]))
rows = doc.get("mlperf", [])
got = [(r["clients"], r["accelerators"], r["accelerators_per_client"]) for r in rows]
ok = got == [(1, 8, 8), (2, 8, 4)] and all(r["au"] >= r["au_threshold"] == 0.9 for r in rows)
ok = ok and all(r["throughput_mib_per_s"] > 0 and r["samples_per_s"] > 0 for r in rows)
# Every probe is a run with its clients and accelerators; the answers' probes add up to them.
probes = [r for r in doc["runs"] if "accelerators" in r["params"] and "clients" in r["params"]]
ok = ok and len(probes) == len(doc["runs"]) == sum(r["probes"] for r in rows)
table = list(csv.DictReader(open(sys.argv[2])))
ok = ok and [(int(t["clients"]), int(t["accelerators"])) for t in table] == [(1, 8), (2, 8)]
print(("ok" if ok else "FAIL") + ": results.json's mlperf and mlperf.csv hold the answers " + str(got))
# MLPerf's dataset rule, by hand: a client node has 1 socket of 256 GiB (generic's default);
# a file is one 4 MiB sample; 5 x 256 GiB / 4 MiB = 327,680 files for one client, 655,360 for
# two; 500 steps x 8 accelerators x 2 samples = 8,000 files is less. The dataset's 384 files
# meet neither.
gib = 1 << 30
want = [(384, 384 * 4 * (1 << 20), 256 * gib, 327680, False), (384, 384 * 4 * (1 << 20), 512 * gib, 655360, False)]
have = [(r["dataset_files"], r["dataset_bytes"], r["client_memory_bytes"], r["datasize_min_files"],
         r["meets_datasize"]) for r in rows]
size_ok = have == want and [t["datasize_min_files"] for t in table] == ["327680", "655360"]
print(("ok" if size_ok else "FAIL") + ": the datasize rule per row " + str(have))
sys.exit(0 if ok and size_ok else 1)
PY
grep -q "^  clients=1: the dataset (384 files, 1.61 GB) is below MLPerf's closed rule .*: 327680 files" "$tmp/out" &&
  echo "ok: the table warns of the dataset rule" || { echo "FAIL: no datasize warning"; grep -i dataset "$tmp/out"; fail=1; }
[ -s "$tmp/run/au.dat" ] && echo "ok: search:plot wrote au.dat" || { echo "FAIL: no au.dat"; fail=1; }

# The study at its defaults: unet3d H100 (2.86 GB/s an accelerator at AU 0.9,
# lua_scripts/mlperf_unet3d.lua's header) from one 100 Gb/s server NIC
# (12.5 GB/s): 12.5 / 2.86 = 4.37, so 4 accelerators on one client node and on two.
expect 0 "lua_scripts/mlperf_unet3d.lua runs at its defaults" -- \
  "$sluice" run "$here/lua_scripts/mlperf_unet3d.lua" --out "$tmp/study"
want=$'bound_1_4\nbound_2_4'
got=$(awk -F, 'NR > 1 { print "bound_" $2 "_" $3 }' "$tmp/study/mlperf.csv" 2>/dev/null)
[ "$got" = "$want" ] && echo "ok: unet3d: 4 accelerators on 1 and on 2 clients" ||
  { echo "FAIL: unet3d answers '$got', wanted '$want'"; fail=1; }

# bad FIELDS MESSAGE [WORKLOAD]: sl.mlperf with FIELDS (and a tiny valid rest, the
# workload train unless given) is exit 2 saying MESSAGE.
bad() {
  cat >"$tmp/bad.lua" <<LUA
local sl = require "sluice"
local m = sl.machines.generic{ sockets = 1, gpus = 2, nics = 1, nvmes = 1, nic_gbps = 100 }
local cluster = sl.cluster{ machines = {m, m}, fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1} }
local train = sl.workload.train_epoch{ samples = 64, batch_samples = 2 }
local sweep = sl.workload.file_sweep{ files_per_rank = 1, file_bytes = "1MiB", block_bytes = "1MiB" }
sl.mlperf{ cluster = cluster, fs = fs, workload = ${3:-train}, $1 }
LUA
  expect 2 "$2" -- "$sluice" run "$tmp/bad.lua" --out "$tmp/bad"
  grep -qF "bad.lua:7: sl.mlperf: $2" "$tmp/err" || { echo "FAIL: no 'bad.lua:7: sl.mlperf: $2'"; cat "$tmp/err"; fail=1; }
}
bad "clients = {1}, max_accelerators = 2, au = 0" "au: 0 is not in (0, 1]"
bad "clients = {1}, max_accelerators = 2, au = 1.5" "au: 1.5 is out of range (0 .. 1)"
bad "clients = {}, max_accelerators = 2, au = 0.9" "clients: the list is empty"
bad "clients = {1}, max_accelerators = 0, au = 0.9" "max_accelerators: 0 is out of range (1 .. 4096)"
bad "clients = {1, 2}, max_accelerators = 2, au = 0.9" "clients[2]: 2 client nodes, but the workload has 1"
bad "clients = {1}, max_accelerators = 2" "au: missing: the workload is no DLIO config with metric.au"
bad "clients = {1}, max_accelerators = 64, au = 0.9" "max_accelerators: 64 accelerators reading 2 samples a step need 256 samples"
bad "clients = {1}, max_accelerators = 2, au = 0.9" "workload: a file_sweep has no accelerators" sweep
# 8 files of 8 x 256 KiB; 5 x 256 GiB / 2 MiB = 655,360 files.
bad "clients = {1}, max_accelerators = 2, au = 0.9, datasize = \"require\"" \
  "datasize: \"require\": at clients[1] = 1 the dataset has 8 files; MLPerf's rule (5x the 274877906944 bytes of the clients' memory, 500 steps of 2 accelerators) needs 655360"
bad "clients = {1}, max_accelerators = 2, au = 0.9, datasize = \"strict\"" "datasize:"

# datasize = "require" met: a client of 1 MiB memory (5 MiB: 20 files of 256 KiB) and one
# accelerator reading 1 sample a step (500 steps: 500 files); the dataset has 512.
cat >"$tmp/met.lua" <<LUA
local sl = require "sluice"
local m = sl.machines.generic{ sockets = 1, gpus = 1, nics = 1, nvmes = 1, nic_gbps = 100, memory_bytes_per_socket = "1MiB" }
local cluster = sl.cluster{ machines = {m, m}, fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1} }
local train = sl.workload.train_epoch{ samples = 512, batch_samples = 1, samples_per_file = 1, sample_bytes = "256KiB",
                                       compute_ns_per_step = "1ms", setup_dataset = true }
local s = sl.mlperf{ cluster = cluster, fs = fs, workload = train, clients = {1}, max_accelerators = 1, au = 0.5,
                     datasize = "require" }
print("met: " .. tostring(s.rows[1].meets_datasize) .. " min_files=" .. s.rows[1].datasize_min_files)
LUA
expect 0 "datasize = \"require\" runs where the dataset meets the rule" -- "$sluice" run "$tmp/met.lua" --out "$tmp/met"
grep -q "^met: true min_files=500$" "$tmp/out" && echo "ok: the rule met (500 files)" ||
  { echo "FAIL: no 'met: true min_files=500'"; grep '^met' "$tmp/out"; fail=1; }
exit $fail
