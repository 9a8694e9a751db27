#!/usr/bin/env bash
# make bench-meta (P7, issue 20) on the GPU machine's host (16 cores), where
# its goals are set: the metadata RPC path beside sockperf and a null RPC.
#
#   scripts/gpu_machine/device_meta_run.sh --pack   (here)
#       packs bench_meta (built in $BUILD, default build/) and sockperf, each
#       with the shared libraries it links (the GPU machine has no sockperf),
#       into .carry/bench_meta and .carry/sockperf (scripts/gpu_machine/carry_lib.sh).
#   scripts/gpu_machine/device_meta_run.sh          (there: device tool, carry
#                                        [".carry/bench_meta", ".carry/sockperf"])
#       runs bench_meta with META_REPEATS (default 3) repeats; its output in
#       $OUT/bench_meta.txt (default ./out/device_meta).
#   META_BASE=PATH with --pack: also packs PATH (a bench_meta built from
#       another commit, the baseline) into .carry/bench_meta_base; there,
#       when it is carried, the baseline and this build run in turn, one
#       repeat-set each, META_ROUNDS times (default 2), into $OUT/bench_meta.txt,
#       so their RESULT lines come from the same machine at the same time.
#   META_PERF=1 (carry also ".carry/perf"): bench_meta runs under perf record
#       (perf carried from here by --pack, bench_meta with its symbols), and
#       $OUT/p7_perf.txt says where the CPU went: by thread, then the
#       metadata server thread's symbols (the P7 profile, issue 20).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

# shellcheck source=scripts/gpu_machine/carry_lib.sh
source "$ROOT/scripts/gpu_machine/carry_lib.sh"
if [ "${1:-}" = "--pack" ]; then
  CARRY_SYMBOLS=1 carry_binary "${BUILD:-$ROOT/build}/tests/bench_meta" "$ROOT/.carry/bench_meta" || exit 1
  carry_binary "$(command -v sockperf)" "$ROOT/.carry/sockperf" || exit 1
  if [ -n "${META_BASE:-}" ]; then
    mkdir -p "$ROOT/.carry/bench_meta_base" && cp "$META_BASE" "$ROOT/.carry/bench_meta_base/bench_meta_base" &&
      strip "$ROOT/.carry/bench_meta_base/bench_meta_base" || exit 1
  fi
  if command -v perf > /dev/null; then carry_binary "$(command -v perf)" "$ROOT/.carry/perf" || exit 1; fi
  exit 0
fi

OUT=${OUT:-$ROOT/out/device_meta}
mkdir -p "$OUT"
perf_cmd=()
if [ "${META_PERF:-0}" = 1 ]; then
  use_carried "$ROOT" bench_meta sockperf perf || exit 2
  perf_cmd=(perf record -F 499 -g -o "$OUT/p7.perf" --)
else
  use_carried "$ROOT" bench_meta sockperf || exit 2
fi
{
  echo "== host: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(uname -sr);" \
    "$(date -u +%Y-%m-%dT%H:%MZ)"
  if [ -x "$ROOT/.carry/bench_meta_base/bench_meta_base" ] && [ "${META_PERF:-0}" != 1 ]; then
    # The baseline links the same libraries as this build (use_carried above).
    for round in $(seq "${META_ROUNDS:-2}"); do
      for which in base new; do
        binary=bench_meta
        [ "$which" = base ] && binary=$ROOT/.carry/bench_meta_base/bench_meta_base
        echo "== round $round: $which"
        SLUICE_BENCH_DIR=/var/tmp timeout 270 "$binary" "${META_REPEATS:-3}" | grep -E "^RESULT|^median"
      done
    done
  else
    SLUICE_BENCH_DIR=/var/tmp timeout 540 "${perf_cmd[@]}" bench_meta "${META_REPEATS:-3}"
    echo "bench_meta exit $?"
  fi
} 2>&1 | tee "$OUT/bench_meta.txt"
if [ "${META_PERF:-0}" = 1 ]; then
  {
    echo "# perf record -F 499 -g of bench_meta ${META_REPEATS:-3} on this host; CPU by thread (share of all samples):"
    perf report -i "$OUT/p7.perf" --no-children --sort comm -g none --stdio 2>/dev/null | grep "%" | head -25
    echo "# the metadata server thread (svc:meta:0) by symbol, share of its samples (all phases, both stores):"
    perf report -i "$OUT/p7.perf" --no-children --comm svc:meta:0 --sort dso,sym -g none --percentage relative \
      --stdio 2>/dev/null | grep "%" | head -50 | cut -c1-170
  } > "$OUT/p7_perf.txt"
  rm -f "$OUT/p7.perf"
fi
rm -rf "$CARRIED_TMP"
