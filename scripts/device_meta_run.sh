#!/usr/bin/env bash
# make bench-meta (P7, issue 20) on the GPU machine's host (16 cores), where
# its goals are set: the metadata RPC path beside sockperf and a null RPC.
#
#   scripts/device_meta_run.sh --pack   (here)
#       packs bench_meta (built in $BUILD, default build/) and sockperf, each
#       with the shared libraries it links (the GPU machine has no sockperf),
#       into .carry/bench_meta and .carry/sockperf (scripts/carry_lib.sh).
#   scripts/device_meta_run.sh          (there: device tool, carry
#                                        [".carry/bench_meta", ".carry/sockperf"])
#       runs bench_meta with META_REPEATS (default 3) repeats; its output in
#       $OUT/bench_meta.txt (default ./out/device_meta).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# shellcheck source=scripts/carry_lib.sh
source "$ROOT/scripts/carry_lib.sh"
if [ "${1:-}" = "--pack" ]; then
  carry_binary "${BUILD:-$ROOT/build}/tests/bench_meta" "$ROOT/.carry/bench_meta" || exit 1
  carry_binary "$(command -v sockperf)" "$ROOT/.carry/sockperf" || exit 1
  exit 0
fi

OUT=${OUT:-$ROOT/out/device_meta}
mkdir -p "$OUT"
use_carried "$ROOT" bench_meta sockperf || exit 2
{
  echo "== host: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(uname -sr);" \
    "$(date -u +%Y-%m-%dT%H:%MZ)"
  SLUICE_BENCH_DIR=/var/tmp timeout 540 bench_meta "${META_REPEATS:-3}"
  echo "bench_meta exit $?"
} 2>&1 | tee "$OUT/bench_meta.txt"
rm -rf "$CARRIED_TMP"
