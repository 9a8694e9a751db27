#!/usr/bin/env bash
# Issue 27: `mpirun -np N sluice run SCRIPT --backend sim` spreads one
# sl.run's points over the ranks.
# 1. The results.json runs equal a one-process run's (wall-clock times aside),
#    and only rank 0 writes files and prints.
# 2. Ranks whose point lists differ (an MPMD launch with other --set values)
#    fail on the digest check, saying so.
# 3. A rank killed mid-sweep fails the point it ran, naming the rank; the
#    other points finish on the other ranks and rank 0 writes them all.
# As root, Open MPI needs its run-as-root consent, and a 2-core machine
# oversubscription: both through Open MPI's environment. Exit 77: skipped.
# Usage: sweep_ranks_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")" && pwd)
script="$here/scripts/rank_sweep.lua"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed (openmpi-bin)"; exit 77; }
[ -x "$(dirname "$sluice")/sluice-node" ] || { echo "SKIP: no sluice-node next to $sluice"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Limits: a whole sweep takes well under a minute here (longer under sanitizers).
run_limit_s=400
kill_wait_s=120
tmp=$(mktemp -d)
mpi_pid=
cleanup() {
  if [ -n "$mpi_pid" ] && kill -0 "$mpi_pid" 2>/dev/null; then kill -9 "$mpi_pid"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.txt; do echo "--- $f"; tail -30 "$f"; done
  exit 1
}

# The runs of a results.json, wall-clock times removed, one JSON text per run.
runs_of() {
  python3 - "$1" <<'PY'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "wall_s"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
for run in json.load(open(sys.argv[1]))["runs"]:
    print(json.dumps(strip(run), sort_keys=True))
PY
}

# 1. Same runs as one process.
cd "$tmp" || exit 1
timeout "$run_limit_s" "$sluice" run "$script" --backend sim --jobs 1 --out one >one.txt 2>&1 ||
  fail "the one-process run failed"
mkdir many && cd many || exit 1
timeout "$run_limit_s" mpirun -np 3 "$sluice" run "$script" --backend sim --jobs 1 --out ../many_out \
  >../many.txt 2>&1 || fail "mpirun -np 3 sluice run failed"
cd "$tmp" || exit 1
[ -z "$(ls many)" ] || fail "a rank wrote into the working directory: $(ls many)"
runs_of one/results.json >one_runs.json
runs_of many_out/results.json >many_runs.json
[ "$(wc -l <one_runs.json)" = 6 ] || fail "the one-process run has $(wc -l <one_runs.json) runs, wanted 6"
cmp -s one_runs.json many_runs.json || { diff one_runs.json many_runs.json | head -5; fail "the runs differ"; }
[ -s many_out/results.csv ] && [ -s many_out/progress.csv ] || fail "rank 0 wrote no results.csv/progress.csv"
summaries=$(grep -c "^scenario rank_sweep: seed" many.txt)
[ "$summaries" = 1 ] || fail "$summaries ranks printed a summary, wanted rank 0 alone"
echo "ok: 3 ranks give the one-process run's 6 runs"

# 1b. The acceptance line's study (issue 27): one process vs 4 ranks, same runs, wall times printed.
dne="$here/../../lua_scripts/dne_metadata_sharding.lua"
dne_sets=(--set shards=1,4 --set entries=512 --set clients=8 --set storm_clients=2)
start=$EPOCHREALTIME
timeout "$run_limit_s" "$sluice" run "$dne" --backend sim "${dne_sets[@]}" --jobs 1 --out dne_one >dne_one.txt 2>&1 ||
  fail "dne_metadata_sharding, one process, failed"
one_s=$(python3 -c "print(round($EPOCHREALTIME - $start, 1))")
start=$EPOCHREALTIME
timeout "$run_limit_s" mpirun -np 4 "$sluice" run "$dne" --backend sim "${dne_sets[@]}" --jobs 1 --out dne_four \
  >dne_four.txt 2>&1 || fail "dne_metadata_sharding under mpirun -np 4 failed"
four_s=$(python3 -c "print(round($EPOCHREALTIME - $start, 1))")
runs_of dne_one/results.json >dne_one_runs.json
runs_of dne_four/results.json >dne_four_runs.json
[ "$(wc -l <dne_one_runs.json)" = 2 ] || fail "dne: $(wc -l <dne_one_runs.json) runs, wanted 2"
cmp -s dne_one_runs.json dne_four_runs.json || fail "dne: the runs of 4 ranks differ from one process's"
echo "ok: dne_metadata_sharding: same runs; wall ${one_s} s one process --jobs 1, ${four_s} s mpirun -np 4 --jobs 1"

# 2. Different point lists: the digest check fails the call on every rank.
timeout "$run_limit_s" mpirun -np 1 "$sluice" run "$script" --backend sim --jobs 1 --out differ : \
  -np 1 "$sluice" run "$script" --backend sim --jobs 1 --out differ --set size=3MiB >differ.txt 2>&1 &&
  fail "ranks with different point lists succeeded"
grep -q "rank 1's point list differs from rank 0's" differ.txt || fail "no digest message"
echo "ok: different point lists are refused, naming the rank"

# 3. Rank 2 killed while it runs a point.
mkdir killed && cd killed || exit 1
# 8 MiB files: ~6 s a point. At the script's 2 MiB a point took 0.4 s, and on
# the loaded CI machine a rank's two points ended before one scan of /proc
# found it (CI, 2026-11-29: "rank 2's sluice run did not start").
mpirun -np 3 "$sluice" run "$script" --backend sim --jobs 1 --set size=8MiB --out ../killed_out >../killed.txt 2>&1 &
mpi_pid=$!
cd "$tmp" || exit 1
rank2=
deadline=$((SECONDS + kill_wait_s))
while [ -z "$rank2" ]; do
  [ $SECONDS -lt $deadline ] || fail "rank 2's sluice run did not start"
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}; pid=${pid%/environ}
    # Rank 2's `sluice run` is the child of a relay (sluice-node) that this
    # mpirun started (its points' processes are its own children).
    ppid=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    if tr '\0' '\n' 2>/dev/null <"$environ" | grep -qx "SLUICE_SWEEP_RANK=2" &&
      [ "$(cat "/proc/$ppid/comm" 2>/dev/null)" = sluice-node ] &&
      [ "$(awk '/^PPid:/ {print $2}' "/proc/$ppid/status" 2>/dev/null)" = "$mpi_pid" ]; then
      rank2=$pid
      break
    fi
  done
  sleep 0.2
done
# Once a point's process runs under it, it holds a point (which takes seconds);
# /proc/PID/task/*/children is read at once (children_of scans all of /proc,
# seconds on a loaded machine: long enough for the point to end).
# Seeing the child and killing rank 2 are two steps: on the loaded CI machine
# the point ended between them and rank 2 had sent its result (CI, 2026-11-29:
# "0 failed runs"). So rank 2 is stopped first and its children read again: a
# rank reaps a point's process before it sends the point's result
# (PoolRun::end_finished), so a child still listed under a stopped rank is a
# point rank 0 has no result for.
while :; do
  [ $SECONDS -lt $deadline ] || fail "rank 2 never ran a point"
  if [ -n "$(cat /proc/"$rank2"/task/*/children 2>/dev/null)" ]; then
    kill -STOP "$rank2"
    while [ "$(awk '{print $3}' /proc/"$rank2"/stat 2>/dev/null)" != T ]; do
      [ $SECONDS -lt $deadline ] || fail "rank 2 did not stop"
      sleep 0.01
    done
    [ -n "$(cat /proc/"$rank2"/task/*/children 2>/dev/null)" ] && break
    kill -CONT "$rank2"
  fi
  sleep 0.05
done
kill -9 "$rank2"
deadline=$((SECONDS + run_limit_s))
while kill -0 "$mpi_pid" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "mpirun still runs ${run_limit_s} s after rank 2 was killed"
  sleep 0.5
done
wait "$mpi_pid"
mpi_pid=
python3 - killed_out/results.json <<'PY' || fail "results.json after the kill"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 6, f"{len(runs)} runs, wanted 6"
failed = [r for r in runs if not r["ok"]]
assert len(failed) == 1, f"{len(failed)} failed runs, wanted the one rank 2 ran: {[r.get('error') for r in failed]}"
assert "rank 2" in failed[0]["error"], failed[0]["error"]
print("killed rank's point:", failed[0]["error"])
PY
echo "ok: a rank killed mid-sweep fails its point, naming the rank; the others finish"
