#!/usr/bin/env bash
# The storage benchmarks on the GPU machine's host (16 cores, its own disk),
# in one script: make bench-hw (P10, issue 20) and the F4 drive fit (issue 22,
# lua_scripts/calibrate_disk.lua), there.
#
#   scripts/device_storage_run.sh --pack   (here)
#       packs the sluice CLI (built in $BUILD, default build/) and fio, each
#       with the shared libraries it links (the GPU machine has no fio), into
#       .carry/sluice_hw and .carry/fio (ignored by git; scripts/carry_lib.sh).
#   scripts/device_storage_run.sh          (there: device tool, carry
#                                           [".carry/sluice_hw", ".carry/fio"])
#       runs scripts/bench_hw.sh (STORAGE_P10=0 skips it), then the F4
#       calibration (STORAGE_F4=0 skips it; the fields of scripts/f4_fit_params.txt,
#       as make bench-f4),
#       with fio from .carry/fio; logs and results in $OUT (default
#       ./out/device_storage).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# shellcheck source=scripts/carry_lib.sh
source "$ROOT/scripts/carry_lib.sh"
if [ "${1:-}" = "--pack" ]; then
  carry_binary "${BUILD:-$ROOT/build}/sluice" "$ROOT/.carry/sluice_hw" || exit 1
  carry_binary "$(command -v fio)" "$ROOT/.carry/fio" || exit 1
  exit 0
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
  timeout "${STORAGE_F4_TIMEOUT_S:-420}" "$ROOT/.carry/sluice_hw/sluice" calibrate lua_scripts/calibrate_disk.lua \
    --backend fio --fio-dir /var/tmp/sluice-f4 --result F4 --repeats "${F4_REPEATS:-3}" --out "$OUT/f4" \
    --base-profile disk_fit_start --profile-dir sim/profiles \
    $(grep -v '^#' scripts/f4_fit_params.txt | sed 's/^/--fit-param /') \
    > "$OUT/f4.log" 2> "$OUT/f4.err"
  r=$?
  sed -n '/^fit:/,$p' "$OUT/f4.log" | head -70
  echo "F4 exit $r"; [ $r -eq 0 ] || { tail -5 "$OUT/f4.err"; rc=1; }
fi
rm -rf "$CARRIED_TMP" /var/tmp/sluice-f4
exit $rc
