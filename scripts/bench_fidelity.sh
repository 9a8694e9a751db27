#!/usr/bin/env bash
# make bench-fidelity, F3 (issue 19 item 2): the seed studies of lua_scripts/
# in simulation at the sizes of their seeds (docs/seeds.md), not the CI
# sizes, then `sluice fidelity` over their results: one table of the figures
# the seeds publish (study, figure, published, simulated, error, holds), the
# shape claims apart, and
#   RESULT F3 median_err=<pct> within_tolerance=<n>/<m>
# It also writes $OUT/fidelity.md with the studies' plots, and times the
# whole library at these sizes (issue 20, P11: every study one after the
# other, each with --jobs JOBS, default the cores):
#   RESULT P11 library_wall_s=<sum of the studies' walls> cores=<n> jobs=<n> studies=<ran>/<asked>
# A study that failed or ran past its timeout counts with the time it took,
# and is not among those that ran.
#
# Sizes: each study's defaults are its seed's setup, except where a --set
# below says otherwise, with the reason next to it. FIDELITY_STUDIES picks
# some studies (names without .lua). FIDELITY_PUBLISH=DIR copies the report
# and its plots there (docs/fidelity, the copy the README links).
set -euo pipefail
cd "$(dirname "$0")/.."
SLUICE=${SLUICE:-build/sluice}
# BENCH_SMOKE=1 (make bench-fidelity or bench-sim BENCH_SMOKE=1, tests/bench/smoke.hpp): one quick study.
if [ "${SLUICE_BENCH_SMOKE:-0}" != 0 ]; then : "${FIDELITY_STUDIES:=gpu_rdma_recorder}"; fi
OUT=${FIDELITY_OUT:-out/fidelity}
JOBS=${JOBS:-$(nproc)}
STUDY_TIMEOUT_S=${FIDELITY_STUDY_TIMEOUT_S:-3600}  # one study's wall-clock limit

# name|--set arguments (with the reason for each that departs from the defaults)
studies=(
  # 256 files of 64 MiB per test instead of 1,024: every GPU still reads
  # 8 files or more at 8 GPUs per DGX, and the rates are steady long before
  # (the 1,024-file run takes over 40 minutes here).
  "beegfs_gds_vs_bounce|--set files=256"
  # 3,200 files per test instead of 12,800: 6 or more per thread at 128
  # threads per node, so every point is past its start; the 12,800-file
  # sweep (4 sizes x 4 thread counts, twice) takes hours on a 2-core machine.
  "beeond_azure_sweep|--set files=3200"
  # No ls -l storm: the seed gives no figure for it, and it is the slowest part.
  "dne_metadata_sharding|--set storm_clients=0"
  "gpu_rdma_recorder|"
  # 256 files of 64 MiB instead of 1,024: 16 per GPU at 16 GPUs; the small-read
  # congestion runs (64 KiB reads of every file) take over 20 minutes each
  # at 1,024 files here, and the seed gives no figure for them.
  "nvmesh_bandwidth_sharing|--set files=256"
  "beeond_stage_in|"
  # The seed's measurement: 4 ND40rs_v2 nodes (10 GB/s for 4 nodes); 32 steps
  # instead of 8, so that the first fetch and the last step's compute (the
  # prefetch depth is 2) are a small part of the epoch's time.
  "cosmoflow_epoch|--set nodes=4 --set steps=32"
  "checkpoint_burst|"
  # Its defaults: three MLPerf Storage v1.0 results at their published client
  # counts, each sample and step shrunk 64x at the same bytes per second per
  # accelerator (the script's header says why that keeps the counts).
  "mlperf_published|"
)

[ -x "$SLUICE" ] || { echo "bench-fidelity: $SLUICE is not built (make)" >&2; exit 2; }
rm -rf "$OUT" && mkdir -p "$OUT"
echo "bench-fidelity: $(hostname), $(nproc) cores, $JOBS jobs; $(date -u +%FT%TZ)"
files=()
library_s=0 asked=0 ran=0
for entry in "${studies[@]}"; do
  name=${entry%%|*}
  sets=${entry#*|}
  if [ -n "${FIDELITY_STUDIES:-}" ] && [[ " $FIDELITY_STUDIES " != *" $name "* ]]; then continue; fi
  start=$(date +%s)
  asked=$((asked + 1))
  # shellcheck disable=SC2086 # the --set words split on purpose
  if timeout "$STUDY_TIMEOUT_S" "$SLUICE" run "lua_scripts/$name.lua" --out "$OUT/$name" --jobs "$JOBS" $sets \
      >"$OUT/$name.log" 2>&1; then
    echo "  $name: $(( $(date +%s) - start )) s"
    ran=$((ran + 1))
  else
    echo "  $name: FAILED ($(( $(date +%s) - start )) s); its log: $OUT/$name.log" >&2
    tail -5 "$OUT/$name.log" >&2
  fi
  library_s=$((library_s + $(date +%s) - start))
  [ -f "$OUT/$name/results.json" ] && files+=("$OUT/$name/results.json")
done
echo "RESULT P11 library_wall_s=$library_s cores=$(nproc) jobs=$JOBS studies=$ran/$asked"
[ ${#files[@]} -gt 0 ] || { echo "bench-fidelity: no study wrote results" >&2; exit 1; }
"$SLUICE" fidelity "${files[@]}" --markdown "$OUT/fidelity.md"
if [ -n "${FIDELITY_PUBLISH:-}" ]; then
  mkdir -p "$FIDELITY_PUBLISH"
  cp "$OUT/fidelity.md" "$FIDELITY_PUBLISH/"
  for f in "${files[@]}"; do
    d=$(basename "$(dirname "$f")")
    mkdir -p "$FIDELITY_PUBLISH/$d"
    cp "$(dirname "$f")"/*.svg "$FIDELITY_PUBLISH/$d/" 2>/dev/null || true
  done
  echo "published: $FIDELITY_PUBLISH/fidelity.md"
fi
