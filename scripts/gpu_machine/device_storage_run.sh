#!/usr/bin/env bash
# The storage benchmarks on the GPU machine's host (16 cores, its own disk),
# in one script: make bench-hw (P10, issue 20) and the F4 drive fit (issue 22,
# lua_scripts/calibrate_disk.lua), there.
#
#   scripts/gpu_machine/device_storage_run.sh --pack   (here)
#       packs the sluice CLI (built in $BUILD, default build/) and fio, each
#       with the shared libraries it links (the GPU machine has no fio), into
#       .carry/sluice_hw and .carry/fio (ignored by git; scripts/gpu_machine/carry_lib.sh).
#   scripts/gpu_machine/device_storage_run.sh          (there: device tool, carry
#                                           [".carry/sluice_hw", ".carry/fio"])
#       runs scripts/bench_hw.sh (STORAGE_P10=0 skips it), then the F4
#       calibration (STORAGE_F4=0 skips it; the drive's channels from its fit
#       points, then the fields of scripts/f4_fit_params.txt, as make bench-f4),
#       with fio from .carry/fio; logs and results in $OUT (default
#       ./out/device_storage).
#   STORAGE_PERF=1 scripts/gpu_machine/device_storage_run.sh   (there: carry
#                                           [".carry/sluice_hw", ".carry/perf"])
#       instead: the sluice side of P10 with 16 MiB blocks (bench_hw.sh's
#       command, 3 runs) under perf record (perf carried from here by
#       --pack, the sluice CLI with its symbols); $OUT/p10_perf.txt says where
#       the CPU went, by thread and by symbol (the P10 profile, issue 20).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

# shellcheck source=scripts/gpu_machine/carry_lib.sh
source "$ROOT/scripts/gpu_machine/carry_lib.sh"
if [ "${1:-}" = "--pack" ]; then
  CARRY_SYMBOLS=1 carry_binary "${BUILD:-$ROOT/build}/sluice" "$ROOT/.carry/sluice_hw" || exit 1
  carry_binary "$(command -v fio)" "$ROOT/.carry/fio" || exit 1
  if command -v perf > /dev/null; then carry_binary "$(command -v perf)" "$ROOT/.carry/perf" || exit 1; fi
  exit 0
fi

if [ "${STORAGE_PERF:-0}" = 1 ]; then
  OUT=${OUT:-$ROOT/out/device_storage}
  mkdir -p "$OUT"
  use_carried "$ROOT" sluice_hw/sluice perf || exit 2
  echo "== host: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(uname -sr)"
  root=/var/tmp/sluice-p10-perf
  rm -rf "$root" && mkdir -p "$root"
  perf record -F 499 -g -o "$OUT/p10.perf" -- bash -c '
    for run in 1 2 3; do
      sluice run tests/bench/hw_stack.lua --backend hw --storage-backend uring --storage-root "$1" \
        --set block=16MiB --set threads=4 --set file_size=256MiB --out "$2/p10_run$run" > "$2/p10_run$run.log" 2>&1 || exit 1
    done' _ "$root" "$OUT"
  rc=$?
  for run in 1 2 3; do
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; print('run', sys.argv[2], {p['phase']: round(p['last_bytes_per_s']/1e9, 3) for p in r['phases'] if p['phase'] in ('write', 'read')}, 'GB/s')" \
      "$OUT/p10_run$run/results.json" "$run"
  done
  {
    echo "# perf record -F 499 -g of the sluice side of P10 (16 MiB blocks, 4 threads x 256 MiB, uring, 3 runs) on this host"
    echo "# CPU by thread (share of all samples):"
    perf report -i "$OUT/p10.perf" --no-children --sort comm -g none --stdio 2>/dev/null | grep "%" | head -30
    echo "# by symbol (share of all samples):"
    perf report -i "$OUT/p10.perf" --no-children --sort dso,sym -g none --stdio 2>/dev/null | grep "%" | head -70 | cut -c1-170
  } > "$OUT/p10_perf.txt"
  rm -rf "$OUT/p10.perf" "$root" "$CARRIED_TMP"
  head -50 "$OUT/p10_perf.txt"
  exit $rc
fi

OUT=${OUT:-$ROOT/out/device_storage}
mkdir -p "$OUT"
use_carried "$ROOT" sluice_hw/sluice fio || exit 2
echo "== host: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(uname -sr)"
df -h /var/tmp | tail -1
lsblk -d -o NAME,MODEL,SIZE,ROTA,TYPE 2>/dev/null | head -8
fio --version
rc=0
if [ "${STORAGE_P10:-1}" = 1 ]; then
  echo "== make bench-hw (P10)"
  SLUICE=$ROOT/.carry/sluice_hw/sluice timeout 400 bash scripts/bench_hw.sh 2>&1 | tee "$OUT/bench_hw.log" | tail -8
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
fi
if [ "${STORAGE_F4:-1}" = 1 ]; then
  echo "== F4: the drive model fitted to fio on this host's disk"
  SLUICE="$ROOT/.carry/sluice_hw/sluice" F4_DIR=/var/tmp/sluice-f4 F4_TIMEOUT_S="${STORAGE_F4_TIMEOUT_S:-420}" \
    bash scripts/f4_calibrate.sh --out "$OUT/f4" > "$OUT/f4.log" 2> "$OUT/f4.err"
  r=$?
  sed -n "/^the drive's channels/,\$p" "$OUT/f4.log" | grep -v '^fitting' | head -90
  echo "F4 exit $r"; [ $r -eq 0 ] || { tail -5 "$OUT/f4.err"; rc=1; }
fi
rm -rf "$CARRIED_TMP" /var/tmp/sluice-f4
exit $rc
