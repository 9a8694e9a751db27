#!/usr/bin/env bash
# make bench-hw (P10, issue 20 item 4): a file sweep through the whole
# hardware stack (tests/bench/hw_stack.lua: `sluice run --backend hw
# --storage-backend uring --storage-root DIR`, i.e. client, TCP transport,
# storage server, io_uring backend with O_DIRECT) against fio with the same
# pattern in the same directory (numjobs = threads, one file each, bs =
# block, iodepth 1, io_uring, O_DIRECT), write then read, for 1 MiB and
# 16 MiB blocks. Each side runs BENCH_HW_RUNS times, alternating; a case's
# ratio is of the medians. Prints one line per case and phase, then
#   RESULT P10 read_vs_fio=<smallest read ratio> write_vs_fio=<smallest write ratio>
# Goal (issue 20): >= 0.8 on the 16-core GPU host; this script names the
# machine it ran on. BENCH_HW_DIR must be on a disk (O_DIRECT; not tmpfs).
set -euo pipefail
cd "$(dirname "$0")/.."
SLUICE=${SLUICE:-build/sluice}
# BENCH_SMOKE=1 (make bench-hw BENCH_SMOKE=1, tests/bench/smoke.hpp): one run of one small point.
if [ "${SLUICE_BENCH_SMOKE:-0}" != 0 ]; then
  : "${BENCH_HW_RUNS:=1}" "${BENCH_HW_THREADS:=1}" "${BENCH_HW_FILE_SIZE:=16MiB}" "${BENCH_HW_BLOCKS:=1MiB}"
fi
DIR=${BENCH_HW_DIR:-/var/tmp/sluice-bench-hw}
RUNS=${BENCH_HW_RUNS:-3}
THREADS=${BENCH_HW_THREADS:-4}
FILE_SIZE=${BENCH_HW_FILE_SIZE:-256MiB}
BLOCKS=${BENCH_HW_BLOCKS:-"1MiB 16MiB"}
TRANSPORT=${BENCH_HW_TRANSPORT:-tcp}  # the services' transport (sluice backends lists them)
FIO_TIMEOUT_S=300

command -v fio >/dev/null || { echo "bench-hw: fio is not installed (make deps)" >&2; exit 2; }
[ -x "$SLUICE" ] || { echo "bench-hw: $SLUICE is not built (make)" >&2; exit 2; }
mkdir -p "$DIR"
work=$(mktemp -d "$DIR/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/fio" "$work/sluice"
echo "bench-hw: $(hostname), $(nproc) cores, $(uname -sr); $DIR on $(df --output=source "$DIR" | tail -1)," \
  "$THREADS threads x $FILE_SIZE, $RUNS runs per side, transport $TRANSPORT"

# "<write bytes/s> <read bytes/s>" of one sluice run's results.json.
sluice_rates() {
  python3 - "$1" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
if not run["ok"]:
    sys.exit("bench-hw: the sluice run failed: " + run["error"])
rate = {p["phase"]: p["last_bytes_per_s"] for p in run["phases"]}
print(rate["write"], rate["read"])
PY
}

# A size as bytes ("1MiB" -> 1048576): fio reads "MiB" as 10^6 under its default kb_base.
bytes_of() {
  python3 -c "import re,sys; m=re.fullmatch(r'(\d+)(KiB|MiB|GiB)?', sys.argv[1]) or sys.exit('bench-hw: bad size ' + sys.argv[1]); print(int(m[1]) * {None: 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30}[m[2]])" "$1"
}

# bytes/s of one fio run (one phase, all jobs together).
fio_rate() {  # rw bs phase
  local out=$work/fio.json
  if ! timeout "$FIO_TIMEOUT_S" fio --name=p10 --directory="$work/fio" --rw="$1" --bs="$(bytes_of "$2")" \
    --size="$(bytes_of "$FILE_SIZE")" --numjobs="$THREADS" --iodepth=1 --ioengine=io_uring --direct=1 \
    --group_reporting --output-format=json --output="$out" >"$work/fio.log" 2>&1; then
    echo "bench-hw: fio failed:" >&2
    tail -5 "$work/fio.log" >&2
    return 1
  fi
  python3 -c "import json,sys; j=json.load(open('$out'))['jobs'][0]; print(j['$3']['bw_bytes'])"
}

median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

read_min=""
write_min=""
for bs in $BLOCKS; do
  sw=(); sr=(); fw=(); fr=()
  for run in $(seq 1 "$RUNS"); do
    out=$work/sluice/$bs.$run
    "$SLUICE" run tests/bench/hw_stack.lua --backend hw --storage-backend uring --storage-root "$work/sluice" \
      --transport "$TRANSPORT" \
      --set block="$bs" --set threads="$THREADS" --set file_size="$FILE_SIZE" --out "$out" >"$out.log" 2>&1 ||
      { echo "bench-hw: sluice run failed; see below" >&2; tail -20 "$out.log" >&2; exit 1; }
    read -r w r < <(sluice_rates "$out/results.json")
    sw+=("$w"); sr+=("$r")
    f=$(fio_rate write "$bs" write) || exit 1
    fw+=("$f")
    f=$(fio_rate read "$bs" read) || exit 1
    fr+=("$f")
    rm -f "$work"/fio/p10.*
  done
  for phase in write read; do
    if [ $phase = write ]; then s=$(median "${sw[@]}"); f=$(median "${fw[@]}"); else s=$(median "${sr[@]}"); f=$(median "${fr[@]}"); fi
    ratio=$(python3 -c "print(f'{$s / $f:.3f}')")
    printf 'P10 %-6s %-5s sluice %7.3f GB/s  fio %7.3f GB/s  ratio %s  (medians of %d)\n' "$bs" "$phase" \
      "$(python3 -c "print($s/1e9)")" "$(python3 -c "print($f/1e9)")" "$ratio" "$RUNS"
    if [ $phase = write ]; then
      write_min=$(python3 -c "print(min(x for x in [$ratio, ${write_min:-$ratio}]))")
    else
      read_min=$(python3 -c "print(min(x for x in [$ratio, ${read_min:-$ratio}]))")
    fi
  done
done
echo "RESULT P10 read_vs_fio=$read_min write_vs_fio=$write_min"
