#!/usr/bin/env bash
# Issue 24 item 4: the README's MPI line, run as written (build/sluice replaced
# by the binary under test): a study's file sweep on real node processes under
# mpirun (`sluice run lua_scripts/file_sweep.lua --backend cluster`, one rank a
# node). As root, Open MPI needs its run-as-root consent, and a 2-core machine
# needs oversubscription for 4 ranks: both are given through Open MPI's
# environment, not by changing the line. Its results: one run on 4 nodes,
# backend cluster, ok, one address per rank, every byte written read back and
# checked, served by the storage nodes. Exit 77: skipped.
set -u
sluice="$1"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
readme="$repo/README.md"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed (openmpi-bin)"; exit 77; }
line=$(grep -E '^mpirun .*build/sluice run .*--backend cluster' "$readme" | head -1 | sed 's/ *#.*$//')
[ -n "$line" ] || { echo "FAIL: README.md has no 'mpirun ... build/sluice run ... --backend cluster' line"; exit 1; }
echo "README: $line"
cmd=${line//build\/sluice/$sluice}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
ln -s "$repo/lua_scripts" lua_scripts
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  timeout 300 sh -c "$cmd" >out.txt 2>&1
rc=$?
tail -20 out.txt
[ "$rc" = 0 ] || { echo "FAIL: the README's MPI line exited $rc"; exit 1; }
grep -q "smpi\|not properly initialized" out.txt && { echo "FAIL: SimGrid's MPI answered"; exit 1; }
out=$(sed -nE 's/.*--out ([^ ]+).*/\1/p' <<<"$line")
python3 - "$out/results.json" <<'PY' || { echo "FAIL: $out/results.json"; exit 1; }
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 1, f"{len(runs)} runs, wanted 1"
r = runs[0]
assert r["backend"] == "cluster" and r["ok"], (r["backend"], r.get("error"))
assert r["config"]["cluster_nodes"] == 4, r["config"]["cluster_nodes"]
hosts = r["deployment"]["hosts"].split(",")
assert len(hosts) == 4, f"hosts {hosts}: wanted one per rank"
by = {p["phase"]: p["bytes"] for p in r["phases"]}
c = r["counters"]
assert by["read"] == by["write"] > 0, by
assert c["file_sweep.read.verified_bytes"] == by["read"], ("read but not checked", c)
assert c["storage.read_bytes"] == by["read"] and c["client.crc_mismatches"] == 0, c
print(f"ok: 1 run on 4 ranks, {by['read']} bytes written, read back and checked")
PY
echo "ok: the README's MPI line runs"
