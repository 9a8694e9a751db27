#!/usr/bin/env bash
# make bench-mount (P9, issue 23): what the FUSE mount costs and what the
# whole stack costs, for sequential reads in 1 MiB blocks (BENCH_MOUNT_THREADS
# files of BENCH_MOUNT_FILE_SIZE, one reader each, O_DIRECT, queue depth 1):
#   sweep  sluice's own file_sweep of that pattern (lua_scripts/file_sweep.lua
#          on `sluice run --backend emulate`: 3 netns nodes on a BENCH_MOUNT_LINK
#          link, the client on node 0);
#   mount  fio through `sluice mount` of the same deployment shape (same
#          nodes, link, chunk size and striping), the files first written by fio;
#   local  fio on this machine's disk directory where the storage servers keep
#          their chunk files (/tmp), no network, no sluice.
# Each side runs BENCH_MOUNT_RUNS times, alternating; ratios are of the medians:
#   RESULT P9 fio_vs_sweep=<mount/sweep> fio_vs_local=<mount/local>
# Goal (issue 23): fio_vs_sweep >= 0.7. Then P16 (issue 54), the path most
# users' tools take: 4 KiB random reads (BENCH_MOUNT_THREADS jobs, O_DIRECT,
# queue depth 1, BENCH_MOUNT_RAND_S seconds) through the mount against the
# same fio on the local directory, and the 1 MiB sequential reads above:
#   RESULT P16 rand4k_iops_vs_local=<mount/local> seq_vs_local=<mount/local>
#     rand4k_iops_mount=<IOPS> rand4k_iops_local=<IOPS>
# Needs root (netns, /dev/fuse).
set -euo pipefail
cd "$(dirname "$0")/.."
SLUICE=${SLUICE:-build/sluice}
# BENCH_SMOKE=1 (make bench-mount BENCH_SMOKE=1, tests/bench/smoke.hpp): one run of one small point.
if [ "${SLUICE_BENCH_SMOKE:-0}" != 0 ]; then
  : "${BENCH_MOUNT_RUNS:=1}" "${BENCH_MOUNT_THREADS:=1}" "${BENCH_MOUNT_FILE_SIZE:=16MiB}" "${BENCH_MOUNT_RAND_S:=2}"
fi
RUNS=${BENCH_MOUNT_RUNS:-3}
RAND_S=${BENCH_MOUNT_RAND_S:-10}
THREADS=${BENCH_MOUNT_THREADS:-4}
FILE_SIZE=${BENCH_MOUNT_FILE_SIZE:-256MiB}
LINK=${BENCH_MOUNT_LINK:-10gbit}
TIMEOUT_S=600

command -v fio >/dev/null || { echo "bench-mount: fio is not installed (make deps)" >&2; exit 2; }
[ -x "$SLUICE" ] || { echo "bench-mount: $SLUICE is not built (make)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-mount: needs root (network namespaces, /dev/fuse)" >&2; exit 2; }
MOUNT_WHO=bench-mount
source scripts/mount_deployment.sh
work=$(mktemp -d /tmp/sluice-bench-mount.XXXXXX)
cleanup() {
  mount_cleanup "$work/mnt"
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/mnt" "$work/local"
size_bytes=$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+)(KiB|MiB|GiB)?', sys.argv[1]) or sys.exit('bench-mount: bad size ' + sys.argv[1]); print(int(m[1]) * {None: 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30}[m[2]])" "$FILE_SIZE")
echo "bench-mount: $(hostname), $(nproc) cores, $(uname -sr); 3 nodes, link $LINK, $THREADS files x $FILE_SIZE," \
  "1 MiB sequential reads, $RUNS runs per side"

# bytes/s of fio's read phase (all jobs together) in directory $1; the files are laid out first.
fio_read() {
  local dir=$1 out=$work/fio.json
  local common=(--directory="$dir" --bs=1048576 --size="$size_bytes" --numjobs="$THREADS" --iodepth=1
    --ioengine=psync --direct=1 --group_reporting --output-format=json --output="$out")
  timeout "$TIMEOUT_S" fio --name=p9 --rw=write "${common[@]}" >"$work/fio.log" 2>&1 || {
    echo "bench-mount: fio write in $dir failed" >&2; tail -5 "$work/fio.log" >&2; return 1; }
  timeout "$TIMEOUT_S" fio --name=p9 --rw=read "${common[@]}" >"$work/fio.log" 2>&1 || {
    echo "bench-mount: fio read in $dir failed" >&2; tail -5 "$work/fio.log" >&2; return 1; }
  python3 -c "import json; print(json.load(open('$out'))['jobs'][0]['read']['bw_bytes'])"
}

# IOPS of 4 KiB random reads (all jobs together, RAND_S seconds) of the files fio_read laid out in $1.
fio_rand4k() {
  local dir=$1 out=$work/fio4k.json
  timeout "$TIMEOUT_S" fio --name=p9 --directory="$dir" --rw=randread --bs=4096 --size="$size_bytes" \
    --numjobs="$THREADS" --iodepth=1 --ioengine=psync --direct=1 --time_based --runtime="$RAND_S" \
    --group_reporting --output-format=json --output="$out" >"$work/fio4k.log" 2>&1 || {
    echo "bench-mount: fio 4 KiB random reads in $dir failed" >&2; tail -5 "$work/fio4k.log" >&2; return 1; }
  python3 -c "import json; print(json.load(open('$out'))['jobs'][0]['read']['iops'])"
}

# BENCH_MOUNT_LINK (as `sluice mount --link` reads it: 10gbit, 500mbit) in Gb/s, the study's link_gbps.
link_gbps=$(link_gbps "$LINK")

sweep_read() {
  rm -rf "$work/sweep"
  timeout "$TIMEOUT_S" "$SLUICE" run lua_scripts/file_sweep.lua --backend emulate --set nodes=3 \
    --set link_gbps="$link_gbps" --insecure --set files="$THREADS" --set threads="$THREADS" \
    --set file_size="$FILE_SIZE" --set block=1MiB --out "$work/sweep" >"$work/sweep.log" 2>&1 || {
    echo "bench-mount: the file sweep (sluice run --backend emulate) failed" >&2; tail -5 "$work/sweep.log" >&2; return 1; }
  python3 -c "
import json
run = json.load(open('$work/sweep/results.json'))['runs'][0]
print({p['phase']: p['last_bytes_per_s'] for p in run['phases']}['read'])"
}

mount_read() {
  mount_start "$work/mnt" "$work/mount" --nodes 3 --link "$LINK" --insecure || return 1
  local rate iops
  rate=$(fio_read "$work/mnt") || return 1
  iops=$(fio_rand4k "$work/mnt") || return 1
  mount_stop "$work/mnt" || return 1
  echo "$rate $iops"
}

sweep=() mount=() local_=() mount4k=() local4k=()
for run in $(seq 1 "$RUNS"); do
  s=$(sweep_read)
  read -r m m4k <<<"$(mount_read)"
  rm -rf "$work/local"/*
  l=$(fio_read "$work/local")
  l4k=$(fio_rand4k "$work/local")
  sweep+=("$s") mount+=("$m") local_+=("$l") mount4k+=("$m4k") local4k+=("$l4k")
  awk -v r="$run" -v s="$s" -v m="$m" -v l="$l" -v m4="$m4k" -v l4="$l4k" 'BEGIN {
    printf "bench-mount: run %d: sweep %.1f MB/s, fio through the mount %.1f MB/s, fio local %.1f MB/s;", r, s / 1e6, m / 1e6, l / 1e6
    printf " 4 KiB random reads: mount %.0f IOPS, local %.0f IOPS\n", m4, l4 }'
done
python3 - "${sweep[*]}" "${mount[*]}" "${local_[*]}" "${mount4k[*]}" "${local4k[*]}" <<'PY'
import statistics, sys
sweep, mount, local, mount4k, local4k = ([float(x) for x in a.split()] for a in sys.argv[1:6])
s, m, l = statistics.median(sweep), statistics.median(mount), statistics.median(local)
m4, l4 = statistics.median(mount4k), statistics.median(local4k)
print(f"bench-mount: medians: sweep {s / 1e6:.1f} MB/s, fio through the mount {m / 1e6:.1f} MB/s, fio local {l / 1e6:.1f} MB/s")
print(f"bench-mount: medians of 4 KiB random reads: mount {m4:.0f} IOPS, local {l4:.0f} IOPS")
print(f"RESULT P9 fio_vs_sweep={m / s:.3f} fio_vs_local={m / l:.3f}")
print(f"RESULT P16 rand4k_iops_vs_local={m4 / l4:.3f} seq_vs_local={m / l:.3f} rand4k_iops_mount={m4:.0f} rand4k_iops_local={l4:.0f}")
PY
