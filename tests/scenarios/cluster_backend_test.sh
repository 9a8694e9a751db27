#!/usr/bin/env bash
# Issue 18: a study on the real-cluster path, `sluice run --backend cluster`
# under mpirun, one rank per node of the study's cluster.
# 1. Without a launcher the backend is refused (exit 2) saying how to launch it.
# 2. mpirun -np 3 on this machine's loopback: Study 2 reduced; every run is
#    backend cluster, ok, with bytes in its write and read phases and its
#    deployment recorded; results.json is valid; `sluice compare` of the sim
#    run and this one prints per-point differences; only rank 0 printed.
#    Study 3 reduced (md_bench, then an ls -l storm: two workloads per point)
#    and the storage failover study (mirroring, SIGKILL of
#    the process hosting a storage server, with and without its restart from
#    the storage root) on the same path; a metadata server's process killed
#    and started again on its RocksDB store (cluster_meta_kill.lua); with
#    --transport tcp+shm every peer of this host goes through shared memory;
#    --transport ucx runs it through UCX; a transport this host cannot run
#    (UCX with no usable transport) fails every point saying why.
# 3. A rank count that is not the node count fails every point saying
#    "mpirun -np 3", and ends (no hang).
# 4. As root: 4 network-namespace hosts (sluice netns-hosts) and Open MPI's
#    rsh launcher with `sluice netns-exec` as its agent; the same study on 4
#    distinct addresses, compared with sim; nothing left behind (namespaces,
#    the hostfile's directory, the ranks' storage directories).
# 5. As root: SIGINT to netns-hosts mid-run leaves nothing behind either.
# Exit 77: skipped (no mpirun). Usage: cluster_backend_test.sh SLUICE
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
study="$here/../../lua_scripts/beeond_azure_sweep.lua"
study_failover="$here/../../lua_scripts/storage_failover.lua"
schema="$here/../../analysis/results.schema.json"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed (openmpi-bin)"; exit 77; }
[ -x "$(dirname "$sluice")/sluice-node" ] || { echo "SKIP: no sluice-node next to $sluice"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run_limit_s=240
tmp=$(mktemp -d)
storage="$tmp/storage"
mkdir -p "$storage"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.txt; do [ -f "$f" ] && { echo "--- $f"; tail -30 "$f"; }; done
  exit 1
}
cd "$tmp" || exit 1

# The runs of a results file: backend, ok, bytes of write and read, deployment keys.
check_runs() {  # FILE EXPECTED_RUNS EXPECTED_DISTINCT_HOSTS
  python3 - "$@" <<'PY' || return 1
import json, sys
path, want, hosts_wanted = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = json.load(open(path))["runs"]
assert len(runs) == want, f"{len(runs)} runs, wanted {want}"
for r in runs:
    assert r["backend"] == "cluster", r["backend"]
    assert r["ok"], r.get("error")
    by = {p["phase"]: p for p in r["phases"]}
    for ph in ("write", "read"):
        assert by[ph]["bytes"] > 0, f"{ph} moved no bytes"
    d = r["deployment"]
    for k in ("launcher", "transport", "storage_backend", "storage_root", "meta_store", "hosts", "authentication",
              "authenticated"):
        assert k in d, f"deployment has no {k}"
    hosts = d["hosts"].split(",")
    assert len(set(hosts)) == hosts_wanted, f"hosts {hosts}, wanted {hosts_wanted} distinct"
print(f"{len(runs)} runs ok")
PY
}
sets=(--set files=24 --set sizes=1MiB --set threads=1,2 --set more_meta=2)
# The metadata servers keep the namespace in memory here: this test is about
# the launch path. With RocksDB (fsync per mutation) 1 run in 10 of step 2 on
# the 2-core VM saw the metadata server answer nothing for 14 s (every
# client's retries spent), a stall not yet explained; the RocksDB store's
# durability is tested in the hw_backends and node-runner suites.
meta=(--meta-store memory)

# 1. No launcher.
"$sluice" run "$study" --backend cluster "${sets[@]}" --out alone >alone.txt 2>&1
rc=$?
[ "$rc" = 2 ] || fail "--backend cluster without a launcher exited $rc, wanted 2"
grep -q "mpirun -np N sluice run SCRIPT --backend cluster" alone.txt || fail "no launch hint: $(cat alone.txt)"
echo "ok: refused without a launcher"

# 2. Three ranks on loopback.
timeout "$run_limit_s" "$sluice" run "$study" --backend sim --set nodes=3 "${sets[@]}" --out sim3 >sim3.txt 2>&1 ||
  fail "the sim run failed"
timeout "$run_limit_s" mpirun -np 3 "$sluice" run "$study" --backend cluster --set nodes=3 "${sets[@]}" "${meta[@]}" \
  --storage-root "$storage" --out cluster3 >cluster3.txt 2>&1 || fail "mpirun -np 3 --backend cluster failed"
check_runs cluster3/results.json 4 1 || fail "cluster3/results.json"
if python3 -c "import jsonschema" 2>/dev/null; then
  python3 "$here/runner/validate_results.py" "$schema" cluster3/results.json || fail "results.json is not valid"
fi
summaries=$(grep -c "^scenario beeond_azure_sweep: seed" cluster3.txt)
[ "$summaries" = 1 ] || fail "$summaries ranks printed a summary, wanted rank 0 alone"
"$sluice" compare sim3/results.json cluster3/results.json >compare3.txt 2>&1 || fail "compare failed"
grep -q "file_sweep/read .*bytes_per_s" compare3.txt || fail "compare printed no read rows"
grep -q "median_err=" compare3.txt || fail "compare printed no summary"
[ -z "$(ls -A "$storage")" ] || fail "storage directories left: $(ls -A "$storage")"
echo "ok: 3 ranks on loopback, compared with sim: $(tail -1 compare3.txt)"

# 2a. --transport tcp+shm: the 3 ranks share this host, so every node reaches
# every other through shared memory (the log says so for each peer); the
# rows are the simulated run's, as with tcp. --transport shm alone is refused
# (exit 2) naming tcp+shm.
timeout "$run_limit_s" mpirun -np 3 "$sluice" run "$study" --backend cluster --transport tcp+shm --set nodes=3 \
  "${sets[@]}" "${meta[@]}" --storage-root "$storage" --out shm3 >shm3.txt 2>&1 || fail "--transport tcp+shm failed"
check_runs shm3/results.json 4 1 || fail "shm3/results.json"
python3 "$here/scripts/rows_as_sim.py" shm3/results.json sim3/results.json cluster || fail "shm3: rows"
python3 -c "import json, sys; rs = json.load(open(sys.argv[1]))['runs']; \
assert all(r['deployment']['transport'] == 'tcp+shm' for r in rs), [r['deployment'] for r in rs]" shm3/results.json ||
  fail "shm3: the deployment does not say tcp+shm"
grep -q "via shm: the same host, namespace and user" shm3.txt || fail "no peer went through shm"
! grep -q ") via tcp" shm3.txt || fail "a peer of this host went through tcp: $(grep ') via tcp' shm3.txt | head -3)"
"$sluice" run "$study" --backend cluster --transport shm --out shm_alone >shm_alone.txt 2>&1
rc=$?
[ "$rc" = 2 ] || fail "--backend cluster --transport shm exited $rc, wanted 2"
grep -q "use tcp, tcp+shm" shm_alone.txt || fail "no hint for --transport shm: $(cat shm_alone.txt)"
echo "ok: tcp+shm on 3 ranks of one host, every peer through shared memory, rows as in sim"
# 2b. --transport ucx (issue 51): the same 3 ranks through UCX; each peer's
# log line names the lanes UCX chose (ucx_info's transport/device names).
if "$sluice" backends 2>/dev/null | grep -q "^ *ucx *host"; then
  timeout "$run_limit_s" mpirun -np 3 "$sluice" run "$study" --backend cluster --transport ucx --set nodes=3 \
    "${sets[@]}" "${meta[@]}" --storage-root "$storage" --out ucx3 >ucx3.txt 2>&1 || fail "--transport ucx failed"
  check_runs ucx3/results.json 4 1 || fail "ucx3/results.json"
  python3 "$here/scripts/rows_as_sim.py" ucx3/results.json sim3/results.json cluster || fail "ucx3: rows"
  python3 -c "import json, sys; rs = json.load(open(sys.argv[1]))['runs']; \
assert all(r['deployment']['transport'] == 'ucx' for r in rs), [r['deployment'] for r in rs]" ucx3/results.json ||
    fail "ucx3: the deployment does not say ucx"
  grep -q "ucx transport: ucx peer .* up; rail 0: .*/.* (.*am" ucx3.txt || fail "no peer came up over UCX with its lanes"
  echo "ok: ucx on 3 ranks of one host, rows as in sim; $(grep -m1 -o 'rail 0: [^.]*' ucx3.txt)"
else
  echo "skip: ucx: $("$sluice" backends 2>/dev/null | grep '^ *ucx')"
fi
# A transport this host cannot run (ucx with no transport UCX can use here):
# every point fails at once, naming why, and nothing hangs.
if "$sluice" backends 2>/dev/null | grep -q "^ *ucx *host"; then
  UCX_TLS=no_such_transport timeout "$run_limit_s" mpirun -x UCX_TLS -np 3 "$sluice" run "$study" --backend cluster \
    --transport ucx --set nodes=3 "${sets[@]}" --storage-root "$storage" --out unavailable >unavailable.txt 2>&1
  rc=$?
  [ "$rc" != 124 ] || fail "--transport ucx that cannot run here hung"
  python3 -c "import json, sys; rs = json.load(open(sys.argv[1]))['runs']; \
assert rs and all(not r['ok'] and 'transport ucx is unavailable here' in r['error'] for r in rs), \
[r.get('error') for r in rs]" unavailable/results.json || fail "--transport ucx unavailable: $(tail -3 unavailable.txt)"
  echo "ok: a transport unavailable here (UCX_TLS=no_such_transport) fails every point saying why"
fi

# 2b. Study 3 reduced (dne_metadata_sharding): mdtest creates and stats in one
# shared directory, then the `ls -l` storm, two workloads in each point (the
# second on a node of its own, once every rank of the first finished); 1 and 2
# metadata shards on 4 ranks. Each row's op count is the simulated run's.
study3="$here/../../lua_scripts/dne_metadata_sharding.lua"
sets3=(--set shards=1,2 --set servers=2 --set clients=2 --set entries=600 --set storm_clients=1 --set threads=8)
timeout "$run_limit_s" "$sluice" run "$study3" --backend sim "${sets3[@]}" --out md_sim >md_sim.txt 2>&1 ||
  fail "the sim run of study 3 failed"
timeout "$run_limit_s" mpirun -np 4 "$sluice" run "$study3" --backend cluster "${sets3[@]}" "${meta[@]}" \
  --storage-root "$storage" --out md >md.txt 2>&1 || fail "study 3 on --backend cluster failed"
python3 "$here/scripts/rows_as_sim.py" md/results.json md_sim/results.json cluster || fail "md/results.json"
"$sluice" compare md_sim/results.json md/results.json >compare_md.txt 2>&1 || fail "compare of study 3 failed"
grep -q "ls_storm/ls_storm" compare_md.txt || fail "compare printed no ls_storm rows"
echo "ok: study 3 (mdtest, then the ls -l storm) on 4 ranks, rows as in sim"

# 2c. The mirrored failover study: storage kills with a restart (plain) and for good
# (buddy-mirrored) run on this path, and metadata buddy mirroring with its primary killed.
# The kill comes 40 ms into the writes, well inside them: at the study's 0.2 s
# it fell after this small workload on a fast host (writes took 0.10-0.17 s,
# reads 0.07 s) and the plain run saw no kill.
timeout "$run_limit_s" mpirun -np 6 "$sluice" run "$study_failover" --backend cluster --set files=24 \
  --set file_size=2MiB --set kill_at_s=0.04 "${meta[@]}" --storage-root "$storage" --out failover >failover.txt 2>&1
python3 - failover/results.json <<'PY' || fail "failover/results.json"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert len(runs) == 6, len(runs)
# Every point ok, meta:0's too (it failed in some runs with "no reply from 5:8 to
# SetAttr after 3 attempts in 14000 ms" until a client refreshed its maps after
# each unanswered attempt to a mirrored primary).
for r in runs:
    assert r["ok"] and r["backend"] == "cluster", (r["label"], r.get("error"))
lost = [c for c in d["claims"] if c["text"].startswith("mirrored, a server dead for good")]
assert lost and lost[0]["holds"], lost
# storage:0 is node 1, which hosts storage only: its kill is a SIGKILL of the
# process that hosts it; plain: started again from its storage root; mirrored: for good.
for r, restarts in ((runs[1], 1), (runs[3], 0)):
    kills = r["deployment"].get("storage_kills", "")
    assert kills.startswith("SIGKILL of the node process") and "nodes 1)" in kills, (r["label"], kills)
    assert r["counters"].get("faults.storage_process_kills") == 1, (r["label"], r["counters"])
    assert r["counters"].get("faults.storage_process_restarts") == restarts, (r["label"], r["counters"])
for r in (runs[0], runs[2]):
    assert "storage_kills" not in r["deployment"], r["deployment"]
PY
grep -q "node 1 process: fault: killing pid [0-9]*, which hosts the storage server, with SIGKILL" failover.txt ||
  fail "no process kill in the log: $(grep 'node 1 process' failover.txt | head -5)"
grep -q "node 1 process: started again, pid [0-9]* (its chunk files and metadata store come back" failover.txt ||
  fail "no restart in the log: $(grep 'node 1 process' failover.txt | head -5)"
echo "ok: storage processes killed with SIGKILL and started again, buddy mirroring with no byte lost, on 6 ranks"

# 2d. A metadata server killed mid-workload (SIGKILL of the process hosting
# it alone on node 4) and started again after 1 s on its RocksDB store: every
# acknowledged create, size and byte is there (the sweep reads back every byte
# verified, mdtest stats every entry), and requests resent across the restart
# are answered with the replies the store kept, not executed twice. Rows as
# in sim, where the server keeps its namespace on a MetaDisk.
meta_kill="$here/scripts/cluster_meta_kill.lua"
timeout "$run_limit_s" "$sluice" run "$meta_kill" --backend sim --set kill_at_ms=40 --out mk_sim >mk_sim.txt 2>&1 ||
  fail "the sim run of the metadata kill failed"
timeout "$run_limit_s" mpirun -np 5 "$sluice" run "$meta_kill" --backend cluster --set kill_at_ms=40 \
  --meta-store rocksdb --storage-root "$storage" --out mk >mk.txt 2>&1 || fail "the metadata kill on --backend cluster failed"
python3 "$here/scripts/rows_as_sim.py" mk/results.json mk_sim/results.json cluster || fail "mk/results.json"
python3 - mk/results.json <<'PY' || fail "mk/results.json: the kill"
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
c = r["counters"]
assert c.get("faults.meta_process_kills") == 1 and c.get("faults.meta_process_restarts") == 1, c
kills = r["deployment"].get("meta_kills", "")
assert kills.startswith("SIGKILL of the node process") and "metadata store reopened (nodes 4)" in kills, kills
assert c["file_sweep.read.verified_bytes"] == [p for p in r["phases"] if p["phase"] == "read"][0]["bytes"] > 0, c
PY
grep -q "node 4 process: fault: killing pid [0-9]*, which hosts the meta server, with SIGKILL" mk.txt ||
  fail "no process kill in the log: $(grep 'node 4 process' mk.txt | head -5)"
grep -q "meta:0: [0-9]* replies kept from before the start answer resent requests" mk.txt ||
  fail "the restarted server kept no replies: $(grep 'meta:0' mk.txt | head -5)"
echo "ok: a metadata server process killed with SIGKILL and started again on its RocksDB store, nothing lost"

# 3. Two ranks for three nodes.
timeout "$run_limit_s" mpirun -np 2 "$sluice" run "$study" --backend cluster --set nodes=3 "${sets[@]}" \
  --out wrong >wrong.txt 2>&1
rc=$?
[ "$rc" != 124 ] || fail "mpirun -np 2 for 3 nodes hung"
[ "$rc" != 0 ] || fail "mpirun -np 2 for 3 nodes succeeded"
grep -q "one rank per node (mpirun -np 3)" wrong.txt || fail "no rank-count reason: $(tail -5 wrong.txt)"
echo "ok: a rank count that is not the node count fails with the reason"

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP (4, 5): network-namespace hosts need root and iproute2"
  exit 0
fi

# Namespaces and directories of one netns-hosts process (its pid is in their names).
leftovers() {  # PID
  { ip netns list | grep -- "-$1-" ; ls -d /tmp/sluice-emu-"$1"-* 2>/dev/null; ls -A "$storage"; } | head -5
}

# 4. Four netns hosts through Open MPI's rsh launcher.
timeout "$run_limit_s" "$sluice" run "$study" --backend sim "${sets[@]}" --out sim4 >sim4.txt 2>&1 ||
  fail "the 4-node sim run failed"
timeout "$run_limit_s" "$sluice" netns-hosts --nodes 4 --link 1gbit -- \
  mpirun -np 4 --hostfile {hostfile} --mca plm_rsh_agent '{agent}' \
  "$sluice" run "$study" --backend cluster "${sets[@]}" "${meta[@]}" --storage-root "$storage" --out cluster4 \
  >cluster4.txt 2>&1 &
hosts_pid=$!
wait "$hosts_pid" || fail "netns-hosts + mpirun --backend cluster failed"
check_runs cluster4/results.json 4 4 || fail "cluster4/results.json"
"$sluice" compare sim4/results.json cluster4/results.json >compare4.txt 2>&1 || fail "compare (4 hosts) failed"
grep -q "median_err=" compare4.txt || fail "compare (4 hosts) printed no summary"
left=$(leftovers "$hosts_pid")
[ -z "$left" ] || fail "left behind after a run: $left"
echo "ok: 4 netns hosts under mpirun, compared with sim: $(tail -1 compare4.txt)"

# 5. SIGINT mid-run.
"$sluice" netns-hosts --nodes 4 --link 1gbit -- \
  mpirun -np 4 --hostfile {hostfile} --mca plm_rsh_agent '{agent}' \
  "$sluice" run "$study" --backend cluster --set files=4000 --set sizes=1MiB --set threads=1 --set more_meta=1 \
  --storage-root "$storage" --out stopped >stopped.txt 2>&1 &
hosts_pid=$!
for _ in $(seq 1 100); do grep -q "sluice-hw-run-" <(ls "$storage") && break; sleep 0.2; done
kill -INT "$hosts_pid"
# netns-hosts ends within its grace (k_netns_hosts_grace_s = 30 s) twice over: the command's, then what is left in the hosts.
for _ in $(seq 1 400); do kill -0 "$hosts_pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$hosts_pid" 2>/dev/null && { kill -9 "$hosts_pid"; fail "netns-hosts did not end within 80 s of SIGINT"; }
wait "$hosts_pid"
echo "netns-hosts after SIGINT: exit $?"
# The namespaces and the hostfile's directory are netns-hosts' to remove at once.
left=$( { ip netns list | grep -- "-$hosts_pid-"; ls -d /tmp/sluice-emu-"$hosts_pid"-* 2>/dev/null; } | head -5)
[ -z "$left" ] || fail "left behind after SIGINT: $left"
# A rank's storage directory: removed by the rank as soon as the stop reaches
# it (StopSweeper in cluster_point_run.cpp), before mpirun's SIGKILL 1 s after
# its SIGTERM; before that, one rank's directory stayed in about a third of the
# runs. A rank may still be removing it when netns-hosts returns: wait (30 s at
# most) until the directories are gone or their owners (.sluice-owner) are.
for _ in $(seq 1 150); do
  alive=0
  for d in "$storage"/sluice-hw-run-*; do
    [ -d "$d" ] && kill -0 "$(cut -d' ' -f1 "$d/.sluice-owner" 2>/dev/null)" 2>/dev/null && alive=1
  done
  [ "$alive" = 0 ] && [ -z "$(ls -A "$storage")" ] && break
  sleep 0.2
done
[ -z "$(ls -A "$storage")" ] || fail "after SIGINT a rank left $(ls -A "$storage" | tr '\n' ' ')"
echo "ok: SIGINT mid-run leaves nothing behind"
