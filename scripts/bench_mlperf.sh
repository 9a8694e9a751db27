#!/usr/bin/env bash
# make bench-mlperf (P15, issue 52 item 4): DLIO itself (dlio-benchmark, the program MLPerf Storage
# runs) as the peer of sluice's own DLIO-like workload, on the same deployment and workload:
#   dlio        dlio_benchmark through `sluice mount` of a netns deployment (3 nodes, node 0 mgmt,
#               metadata and the mount, nodes 1-2 one storage target each, BENCH_MLPERF_LINK links,
#               1 MiB chunks over both targets; --direct-io: every read reaches the cluster, as
#               MLPerf's dataset of 5x the client's memory makes sure at full size). DLIO generates
#               its dataset there (workflow.generate_data), then trains;
#   train_epoch sluice's train_epoch (sl.workload.dlio) on a deployment of the same shape
#               (tests/bench/mlperf_peer.lua on `sluice run --backend emulate`; it writes its own
#               dataset first, untimed);
#   sim         the same study in simulation.
# All three run MLPerf Storage's unet3d config (lua_scripts/mlperf/unet3d_h100.yaml: batch 7,
# 0.323 s of compute a step, 4 read threads) with one list of overrides, given to DLIO as
# ++workload.KEY=VALUE and to the study as overrides (DLIO gets the file and the overrides with
# the sample-size keys renamed to those dlio-benchmark 2.0.0 reads: dlio_keys below):
# BENCH_MLPERF_FILES samples of SAMPLE_BYTES
# (2048^2: DLIO writes a sample of dimension^2 bytes with dimension = floor(sqrt(record_length)),
# so a square keeps both at the same bytes; no size spread, since each would draw its own),
# BENCH_MLPERF_EPOCHS epochs. The link binds, not the compute: a step's 7 x 4 MiB take 0.47 s at
# 500 Mbit/s against 0.323 s of compute, so the analytic bound is the link's 59.6 MiB/s and, in
# steady state, an AU of 0.323 / 0.47 = 0.69 (printed from the values in use). An epoch of few
# steps can show more: AU leaves step 1 out, and the batches read ahead while step 1 waited
# (DLIO's PyTorch loader: one batch per read thread, 4; train_epoch: prefetch 2) then cost no
# waiting. Each side runs BENCH_MLPERF_RUNS times,
# alternating (the simulation once: it is deterministic); ratios are of the medians:
#   RESULT P15 train_epoch_vs_dlio=<MiB/s ratio> sim_vs_dlio=<MiB/s ratio> au_dlio=.. au_train_epoch=.. au_sim=..
# AU as DLIO reports it (compute time over step time, step 1 left out), as a fraction; throughput
# as DLIO's train_io_mean_MB_per_second (samples/s x record length, MiB/s) and the epoch phase's
# bytes/s of train_epoch. Without DLIO (DLIO_VENV, default /var/cache/sluice/dlio-venv, holds no
# dlio_benchmark: scripts/dlio_install.sh installs it) the DLIO side is skipped, saying so, and P15
# carries the train_epoch and sim figures only. Needs root (netns, /dev/fuse).
set -euo pipefail
cd "$(dirname "$0")/.."
SLUICE=${SLUICE:-build/sluice}
DLIO_VENV=${DLIO_VENV:-/var/cache/sluice/dlio-venv}
# BENCH_SMOKE=1 (make bench-mlperf BENCH_SMOKE=1, tests/bench/smoke.sh): one run of two steps.
if [ "${SLUICE_BENCH_SMOKE:-0}" != 0 ]; then
  : "${BENCH_MLPERF_RUNS:=1}" "${BENCH_MLPERF_FILES:=14}" "${BENCH_MLPERF_EPOCHS:=1}"
fi
RUNS=${BENCH_MLPERF_RUNS:-3}
FILES=${BENCH_MLPERF_FILES:-70}
EPOCHS=${BENCH_MLPERF_EPOCHS:-2}
LINK=${BENCH_MLPERF_LINK:-500mbit}
SAMPLE_BYTES=4194304
CONFIG=lua_scripts/mlperf/unet3d_h100.yaml
# One command (a DLIO run, a study run) takes at most this long.
TIMEOUT_S=600

[ -x "$SLUICE" ] || { echo "bench-mlperf: $SLUICE is not built (make)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-mlperf: needs root (network namespaces, /dev/fuse)" >&2; exit 2; }
[ -f "$CONFIG" ] || { echo "bench-mlperf: $CONFIG is missing" >&2; exit 2; }
MOUNT_WHO=bench-mlperf
source scripts/mount_deployment.sh
work=$(mktemp -d /tmp/sluice-bench-mlperf.XXXXXX)
# BENCH_MLPERF_KEEP=1 keeps the work directory (the logs, DLIO's outputs, the results) and says where.
cleanup() {
  mount_cleanup "$work/mnt"
  if [ "${BENCH_MLPERF_KEEP:-0}" != 0 ]; then echo "bench-mlperf: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$work/mnt"
gbps=$(link_gbps "$LINK")
overrides=("dataset.num_files_train=$FILES" "dataset.record_length_bytes=$SAMPLE_BYTES"
  "dataset.record_length_bytes_stdev=0" "train.epochs=$EPOCHS")

dlio=
if [ -x "$DLIO_VENV/bin/dlio_benchmark" ]; then
  dlio=$DLIO_VENV/bin/dlio_benchmark
else
  echo "bench-mlperf: DLIO not installed (run scripts/dlio_install.sh): skipped (no $DLIO_VENV/bin/dlio_benchmark)"
fi
# batch, compute and the analytic bounds from the config and the values in use.
read -r batch compute_s bound_mib bound_au <<<"$(python3 - "$CONFIG" "$SAMPLE_BYTES" "$gbps" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def value(key):
    m = re.search(r"^\s+" + key + r":\s*([0-9.]+)\s*$", text, re.M)
    if not m:
        sys.exit(f"bench-mlperf: {sys.argv[1]}: no {key}")
    return float(m[1])
batch, compute = int(value("batch_size")), value("computation_time")
link = float(sys.argv[3]) * 1e9 / 8  # bytes/s
step_read_s = batch * int(sys.argv[2]) / link
print(batch, compute, link / 2**20, min(1.0, compute / step_read_s))
PY
)"
echo "bench-mlperf: $(hostname), $(nproc) cores, $(uname -sr); 3 nodes, link $LINK; unet3d ($CONFIG):" \
  "$FILES samples of $SAMPLE_BYTES bytes, batch $batch, ${compute_s} s compute a step, $EPOCHS epochs;" \
  "$RUNS runs per side"
printf 'bench-mlperf: analytic bound: the client link, %.1f MiB/s;' "$bound_mib"
printf ' AU %.3f in steady state (a step reads %d x %d bytes)\n' \
  "$bound_au" "$batch" "$SAMPLE_BYTES"

# "<AU fraction> <MiB/s>" of train_epoch's epoch phase in results.json $1.
study_figures() {
  python3 - "$1" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
if not run.get("ok", True):
    sys.exit(f"bench-mlperf: the study's run failed: {run.get('error')}")
rows = [p for p in run["phases"] if p["phase"] == "epoch"]
if len(rows) != 1 or "au_pct" not in rows[0].get("extra", {}):
    sys.exit(f"bench-mlperf: {sys.argv[1]}: no epoch phase with au_pct")
print(rows[0]["extra"]["au_pct"] / 100, rows[0]["last_bytes_per_s"] / 2**20)
PY
}

# tests/bench/mlperf_peer.lua with the overrides; $1 names the run, the rest go to sluice run.
study_run() {
  local name=$1
  shift
  local IFS=,
  timeout "$TIMEOUT_S" "$SLUICE" run tests/bench/mlperf_peer.lua "$@" --set link_gbps="$gbps" \
    --set overrides="${overrides[*]}" --out "$work/$name" >"$work/$name.log" 2>&1 || {
    echo "bench-mlperf: sluice run tests/bench/mlperf_peer.lua $* failed" >&2
    tail -15 "$work/$name.log" >&2
    return 1
  }
  study_figures "$work/$name/results.json"
}

# MLCommons' configs (and DLIO's main branch) name a sample's size dataset.record_length_bytes,
# _bytes_stdev and _bytes_resize; dlio-benchmark 2.0.0, PyPI's, reads record_length, _stdev and
# _resize (utils/config.py LoadConfig) and silently keeps its 64 KiB default for the others. The
# text on stdin with those keys renamed, and nothing else changed.
dlio_keys() {
  sed -E 's/(^|[[:space:].])record_length_bytes(_stdev|_resize)?([:=])/\1record_length\2\3/'
}

# DLIO through a fresh mount: generate, train; "<AU fraction> <MiB/s>" from its summary.json.
dlio_run() {
  local out=$work/dlio-$1
  mkdir -p "$out" "$work/dlio-conf/workload"
  # A name of its own, so that hydra cannot take DLIO's packaged unet3d_h100.yaml instead; the keys
  # renamed to those dlio-benchmark 2.0.0 reads (dlio_keys).
  dlio_keys <"$CONFIG" >"$work/dlio-conf/workload/sluice_unet3d.yaml"
  mount_start "$work/mnt" "$work/mount" --nodes 3 --link "$LINK" --insecure --direct-io || return 1
  local args=(--config-dir "$work/dlio-conf" workload=sluice_unet3d "hydra.run.dir=$out/hydra"
    ++workload.workflow.generate_data=True ++workload.workflow.train=True
    "++workload.dataset.data_folder=$work/mnt/unet3d" "++workload.output.folder=$out")
  local o
  for o in "${overrides[@]}"; do args+=("++workload.$(dlio_keys <<<"$o")"); done
  # A singleton MPI process as root (no mpirun); TensorFlow, imported and unused, kept quiet.
  if ! (cd "$out" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TF_CPP_MIN_LOG_LEVEL=3 \
    timeout "$TIMEOUT_S" "$dlio" "${args[@]}") >"$out/dlio.log" 2>&1; then
    echo "bench-mlperf: dlio_benchmark failed (its log: $out/dlio.log; BENCH_MLPERF_KEEP=1 keeps it)" >&2
    tail -15 "$out/dlio.log" >&2
    return 1
  fi
  mount_stop "$work/mnt" || return 1
  python3 - "$out/summary.json" <<'PY'
import json, sys
try:
    m = json.load(open(sys.argv[1]))["metric"]
    print(m["train_au_mean_percentage"] / 100, m["train_io_mean_MB_per_second"])
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"bench-mlperf: {sys.argv[1]}: no DLIO training metrics ({e})")
PY
}

read -r au_sim mib_sim <<<"$(study_run sim)"
printf 'bench-mlperf: simulation: AU %.3f, %.1f MiB/s\n' "$au_sim" "$mib_sim"
te_au=() te_mib=() dlio_au=() dlio_mib=()
for run in $(seq 1 "$RUNS"); do
  read -r a m <<<"$(study_run "train_epoch-$run" --backend emulate --insecure)"
  te_au+=("$a") te_mib+=("$m")
  line=$(printf 'bench-mlperf: run %d: train_epoch AU %.3f, %.1f MiB/s' "$run" "$a" "$m")
  if [ -n "$dlio" ]; then
    # Not in a $(...): the mount's process must stay this shell's child, for mount_stop and the trap.
    dlio_run "$run" >"$work/dlio-$run.figures"
    read -r a m <"$work/dlio-$run.figures"
    dlio_au+=("$a") dlio_mib+=("$m")
    line+=$(printf '; DLIO through the mount AU %.3f, %.1f MiB/s' "$a" "$m")
  fi
  echo "$line"
done

python3 - "$RUNS" "$au_sim" "$mib_sim" "$bound_au" "$bound_mib" "${te_au[*]}" "${te_mib[*]}" \
  "${dlio_au[*]:-}" "${dlio_mib[*]:-}" <<'PY'
import statistics, sys
runs, au_sim, mib_sim, bound_au, bound_mib = int(sys.argv[1]), *map(float, sys.argv[2:6])
te_au, te_mib, dlio_au, dlio_mib = ([float(x) for x in a.split()] for a in sys.argv[6:10])
med = statistics.median
rows = [("analytic bound (the client link)", bound_au, bound_mib), ("simulation (sluice run, sim)", au_sim, mib_sim),
        ("train_epoch on the netns deployment", med(te_au), med(te_mib))]
if dlio_au:
    rows.append(("DLIO through sluice mount", med(dlio_au), med(dlio_mib)))
print(f"bench-mlperf: medians of {runs} run(s) (the simulation: one run)")
print(f"  {'':38} {'AU':>6} {'MiB/s':>8}")
for name, au, mib in rows:
    print(f"  {name:38} {au:6.3f} {mib:8.1f}")
te, sim = med(te_mib), mib_sim
if dlio_au:
    d = med(dlio_mib)
    print(f"RESULT P15 train_epoch_vs_dlio={te / d:.3f} sim_vs_dlio={sim / d:.3f} au_dlio={med(dlio_au):.3f}"
          f" au_train_epoch={med(te_au):.3f} au_sim={au_sim:.3f}")
else:
    print(f"RESULT P15 au_train_epoch={med(te_au):.3f} au_sim={au_sim:.3f} sim_vs_train_epoch={sim / te:.3f}"
          " (DLIO not installed: scripts/dlio_install.sh; no DLIO figures)")
PY
