#!/usr/bin/env bash
# make bench-sim, P12 and P12b (issue 50): simulation at data scale.
#   P12: issue 48's configuration (storage nodes of 2 sockets, 2 x 200 Gb/s
#   NICs and 16 NVMe drives; clients of one 200 Gb/s NIC; BeeGFS, 1 MiB
#   chunks striped 16 ways; tests/scenarios/scripts/nic_scaling.lua) at 18
#   servers + 50 clients, each client writing then reading 4 files of 1 GiB
#   with 4 in flight: 400 GiB moved. Per chunk once (its answer does not
#   depend on the machine; its wall is one sample of a long run) and in fluid
#   mode P12_RUNS times (median wall), then every phase of the fluid run
#   against per chunk: its rate (bytes/s, or ops/s for a phase without
#   bytes) and its finish time.
#     RESULT P12 fluid_wall_s=<median> chunk_wall_s=<s> speedup=<chunk/fluid> max_err=<pct> \
#       worst=<phase/measure> deviation=<pct> net_deviation=<pct>
#   (the fluid run's own sim.fluid_deviation_share and sim.fluid_net_deviation_share)
#   Goal: fluid under 10 s, max_err under 2% (one core of the GPU machine's host).
#   P12b: 200 servers + 600 clients, each client writing then reading 2
#   files of 1 GiB (2.3 TiB moved), fluid only.
#     RESULT P12b big_wall_s=<s> max_rss_gib=<peak resident memory of the run> simulated_s=<s>
#   Goal: under 60 s on one core, memory under 4 GiB.
# Every run is one process on one core (sluice run --jobs 1); P12_PARALLEL=1
# starts them all at once (a host with more cores than runs: the GPU
# machine's 16). BENCH_SMOKE=1: 4 + 11 nodes with 64 MiB files for P12,
# 20 + 60 with 2 x 64 MiB for P12b.
set -euo pipefail
cd "$(dirname "$0")/.."
SLUICE=${SLUICE:-build/sluice}
OUT=${P12_OUT:-out/bench_sim_p12}
RUNS=${P12_RUNS:-3}
script=tests/scenarios/scripts/nic_scaling.lua
if [ "${SLUICE_BENCH_SMOKE:-0}" != 0 ]; then
  p12=(--set servers=4 --set clients=11 --set files=4 --set threads=4 --set size=64MiB)
  p12b=(--set servers=20 --set clients=60 --set files=2 --set threads=2 --set size=64MiB)
  RUNS=1
else
  p12=(--set servers=18 --set clients=50 --set files=4 --set threads=4 --set size=1GiB)
  p12b=(--set servers=200 --set clients=600 --set files=2 --set threads=2 --set size=1GiB)
fi
[ -x "$SLUICE" ] || { echo "bench P12: $SLUICE is not built (make)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "RESULT P12 skipped (no /usr/bin/time: apt install time)"; exit 0; }
rm -rf "$OUT" && mkdir -p "$OUT"
echo "bench P12: $(hostname), $(nproc) cores; $(date -u +%FT%TZ)"

# run NAME MODE SETS...: one sluice run; its wall (s) and peak memory (KiB) in $OUT/NAME.time.
run() {
  local name=$1 mode=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$SLUICE" run "$script" "$@" --sim-mode "$mode" --jobs 1 \
    --out "$OUT/$name" >"$OUT/$name.log" 2>&1 || { tail -20 "$OUT/$name.log"; return 1; }
  echo "  $name ($mode): $(cut -d' ' -f1 "$OUT/$name.time") s"
}

if [ "${P12_PARALLEL:-0}" = 1 ]; then
  pids=()
  run chunk chunk "${p12[@]}" & pids+=($!)
  for i in $(seq 1 "$RUNS"); do run "fluid$i" fluid "${p12[@]}" & pids+=($!); done
  run big fluid "${p12b[@]}" & pids+=($!)
  for pid in "${pids[@]}"; do wait "$pid" || exit 1; done
else
  run chunk chunk "${p12[@]}" || exit 1
  for i in $(seq 1 "$RUNS"); do run "fluid$i" fluid "${p12[@]}" || exit 1; done
  run big fluid "${p12b[@]}" || exit 1
fi
python3 - "$OUT" "$RUNS" <<'EOF'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
def wall(name):
    return float(open(f"{out}/{name}.time").read().split()[0])
def phases(name):
    run = json.load(open(f"{out}/{name}/results.json"))["runs"][0]
    return {f"{p['workload']}/{p['phase']}": p for p in run["phases"]}, run["counters"]
chunk, _ = phases("chunk")
fluid, counters = phases("fluid1")
worst, worst_at = 0.0, ""
for name, c in chunk.items():
    f = fluid[name]
    rate = "last_bytes_per_s" if c.get("last_bytes_per_s") else "last_ops_per_s"
    for key in (rate, "last_done_s"):
        if not c.get(key):
            continue
        err = abs(f[key] / c[key] - 1) * 100
        print(f"  {name} {key}: chunk {c[key]:.6g}, fluid {f[key]:.6g} ({err:.2f}%)")
        if err > worst:
            worst, worst_at = err, f"{name}/{key}"
fluid_wall = statistics.median(wall(f"fluid{i}") for i in range(1, runs + 1))
chunk_wall = wall("chunk")
deviation = counters.get("sim.fluid_deviation_share", 0) * 100
net = counters.get("sim.fluid_net_deviation_share", 0) * 100
print(f"RESULT P12 fluid_wall_s={fluid_wall:.2f} chunk_wall_s={chunk_wall:.2f} speedup={chunk_wall / fluid_wall:.2f} "
      f"max_err={worst:.2f} worst={worst_at} deviation={deviation:.2f} net_deviation={net:.2f}")
EOF

python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
wall, rss_kib = open(f"{out}/big.time").read().split()[:2]
run = json.load(open(f"{out}/big/results.json"))["runs"][0]
print(f"RESULT P12b big_wall_s={float(wall):.2f} max_rss_gib={int(rss_kib) / 2**20:.2f} "
      f"simulated_s={run.get('simulated_s', 0):.3f}")
EOF
