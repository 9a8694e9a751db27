#!/usr/bin/env bash
# make bench-sim, P8 (issue 20 item 3): metadata sharding scale-out in
# simulation. Study 3 (lua_scripts/dne_metadata_sharding.lua) with its
# directory striped over 1, 4, 16 and 64 metadata shards, each on its own
# server (64 servers), creates then stats, no ls -l storm.
#
# Clients: the study's 64 nodes x 16 operations in flight (P8_CLIENTS,
# P8_THREADS). With 128 x 32 the one-shard baseline itself falls (66 k
# creates/s with 4,096 requests queued at one server, against 100 k, measured
# 2026-11-28), so its efficiencies are not comparable. The study hashes its
# directory with fnv_1a_64 (its seed's); under crush the busiest of 64 shards
# holds 1.31x the mean and the efficiency is ~0.76 (docs/sim.md, "bench-sim P8").
#
# Steady state: a run of N entries lasts T(N) = start + N / rate + drain; at
# 64 shards 100,000 entries last 22 ms of simulated time, and start and drain
# weigh on N / T(N). Each shard count therefore runs at two sizes, N1 and
# N2 = P8_SIZE_FACTOR x N1, and its rate is the marginal one,
#   rate(n) = (N2 - N1) / (T(N2) - T(N1)),
# in which start and drain cancel. N1 = P8_ENTRIES_PER_SHARD x n (every shard
# holds as many entries at every n). Efficiency = rate(n) / (n x rate(1)).
# Prints a line per shard count and phase, then
#   RESULT P8 efficiency_64=<min over create and stat> create_efficiency_64=.. stat_efficiency_64=..
# Goal (issue 20): >= 0.9 at 64 shards, where servers are not shared.
set -euo pipefail
cd "$(dirname "$0")/.."
SLUICE=${SLUICE:-build/sluice}
# BENCH_SMOKE=1 (make bench-sim BENCH_SMOKE=1, tests/bench/smoke.hpp): 1 and 4 shards, few entries.
if [ "${SLUICE_BENCH_SMOKE:-0}" != 0 ]; then
  : "${P8_SHARDS:=1 4}" "${P8_ENTRIES_PER_SHARD:=200}" "${P8_CLIENTS:=8}" "${P8_THREADS:=4}"
fi
OUT=${P8_OUT:-out/p8}
SHARDS=${P8_SHARDS:-"1 4 16 64"}
PER_SHARD=${P8_ENTRIES_PER_SHARD:-2000}
FACTOR=${P8_SIZE_FACTOR:-3}
CLIENTS=${P8_CLIENTS:-64}
THREADS=${P8_THREADS:-16}
JOBS=${JOBS:-$(nproc)}
POINT_TIMEOUT_S=1800

[ -x "$SLUICE" ] || { echo "bench-sim P8: $SLUICE is not built (make)" >&2; exit 2; }
rm -rf "$OUT" && mkdir -p "$OUT"
echo "bench-sim P8: $(hostname), $(nproc) cores; shards $SHARDS; $CLIENTS clients x $THREADS in flight;" \
  "$PER_SHARD entries per shard and x$FACTOR"
start=$(date +%s)
pids=()
for n in $SHARDS; do
  for size in 1 "$FACTOR"; do
    entries=$((n * PER_SHARD * size))
    "$SLUICE" run lua_scripts/dne_metadata_sharding.lua --set shards="$n" --set servers=64 --set clients="$CLIENTS" \
      --set threads="$THREADS" --set entries="$entries" --set storm_clients=0 --jobs 1 --point-timeout "$POINT_TIMEOUT_S" \
      --out "$OUT/n${n}_e${entries}" > "$OUT/n${n}_e${entries}.log" 2>&1 &
    pids+=($!)
    # At most JOBS simulations at once.
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 0.5; done
  done
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ $failed = 0 ] || { echo "bench-sim P8: a run failed; logs in $OUT" >&2; tail -5 "$OUT"/*.log >&2; exit 1; }
echo "bench-sim P8: the simulations took $(( $(date +%s) - start )) s"
python3 - "$OUT" "$PER_SHARD" "$FACTOR" $SHARDS <<'PY'
import json, os, sys
out, per_shard, factor, shards = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(x) for x in sys.argv[4:]]

def phase_time(n, entries, phase):
    """The phase's simulated duration (slowest rank, s) and ops of one run."""
    run = json.load(open(os.path.join(out, f"n{n}_e{entries}", "results.json")))["runs"][0]
    if not run["ok"]:
        sys.exit(f"bench-sim P8: {n} shards, {entries} entries failed: {run['error']}")
    for p in run["phases"]:
        if p["phase"] == phase and p.get("workload", "mdtest") == "mdtest":
            return p["last_done_s"], p["ops"]
    sys.exit(f"bench-sim P8: no {phase} phase in {n} shards, {entries} entries")

rates = {}
print(f"{'shards':>6} {'phase':<6} {'N1':>9} {'T(N1) s':>10} {'N2':>9} {'T(N2) s':>10} {'rate/s':>12} {'N2/T(N2)':>12}")
for n in shards:
    n1, n2 = n * per_shard, n * per_shard * factor
    for phase in ("create", "stat"):
        t1, ops1 = phase_time(n, n1, phase)
        t2, ops2 = phase_time(n, n2, phase)
        if t2 <= t1:
            sys.exit(f"bench-sim P8: {n} shards {phase}: T(N2) {t2} s is not above T(N1) {t1} s")
        rates[(n, phase)] = (ops2 - ops1) / (t2 - t1)
        print(f"{n:>6} {phase:<6} {n1:>9} {t1:>10.4f} {n2:>9} {t2:>10.4f} {rates[(n, phase)]:>12.0f} {ops2 / t2:>12.0f}")
base = min(shards)
eff = {}
for n in shards:
    for phase in ("create", "stat"):
        eff[(n, phase)] = rates[(n, phase)] / (n / base * rates[(base, phase)])
    print(f"efficiency at {n} shards: create {eff[(n, 'create')]:.3f}, stat {eff[(n, 'stat')]:.3f}")
top = max(shards)
print(f"RESULT P8 efficiency_{top}={min(eff[(top, 'create')], eff[(top, 'stat')]):.3f} "
      f"create_efficiency_{top}={eff[(top, 'create')]:.3f} stat_efficiency_{top}={eff[(top, 'stat')]:.3f} goal=0.9")
PY
