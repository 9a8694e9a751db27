#!/bin/bash
# The F4 fit of make bench-f4 with the drive's channel stripe
# (disk.channel_stripe_bytes of sim/profiles/disk_fit_start.json) set to each
# of several sizes, each fitted to the very same fio measurements of an
# earlier run (scripts/fio_replay.sh answers fio's jobs from them), so the
# sizes are compared on one disk. Prints one line a size:
#   stripe_bytes=16384 channels=4 median_err=6.03 p90_err=21.19
#
#   scripts/f4_stripes.sh RUN_F4_DIR [STRIPE_BYTES ...]
# RUN_F4_DIR: an earlier make bench-f4's OUT/f4 (or scripts/gpu_machine/device_storage_run.sh's
# OUT/f4), whose fio/ holds each point's job and output. Sizes default to
# 4, 8, 16, 32, 64 and 256 KiB. SLUICE: the sluice binary (build/sluice);
# WORK: where the profiles, fits and logs go (a new temporary directory);
# F4_DIR: the stored run's fio directory, if not make bench-f4's default
# (scripts/f4_calibrate.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
run=${1:?"usage: scripts/f4_stripes.sh RUN_F4_DIR [STRIPE_BYTES ...]"}
shift
[ -d "$run/fio" ] || { echo "f4_stripes: $run/fio is not a directory (give an earlier run's OUT/f4)" >&2; exit 2; }
stripes=("$@")
[ ${#stripes[@]} -gt 0 ] || stripes=(4096 8192 16384 32768 65536 262144)
for s in "${stripes[@]}"; do
  [[ "$s" =~ ^[1-9][0-9]*$ ]] || { echo "f4_stripes: stripe \"$s\" is not a positive integer (bytes)" >&2; exit 2; }
done
sluice=${SLUICE:-build/sluice}
[ -x "$sluice" ] || { echo "f4_stripes: no sluice at $sluice (set SLUICE)" >&2; exit 2; }
work=${WORK:-$(mktemp -d /tmp/f4-stripes.XXXXXX)}
rc=0
for s in "${stripes[@]}"; do
  dir="$work/stripe$s"
  mkdir -p "$dir"
  cp -r sim/profiles "$dir/profiles"
  python3 - "$dir/profiles/disk_fit_start.json" "$s" <<'PY' || exit 1
import json, sys
path, stripe = sys.argv[1], int(sys.argv[2])
profile = json.load(open(path))
profile["disk"]["channel_stripe_bytes"] = stripe
json.dump(profile, open(path, "w"), indent=2)
PY
  # make bench-f4's command, with fio answered from the stored run.
  FIO_REPLAY_DIR="$(cd "$run/fio" && pwd)" SLUICE="$sluice" F4_PROFILE_DIR="$dir/profiles" \
    F4_TIMEOUT_S="${F4_TIMEOUT_S:-1800}" bash scripts/f4_calibrate.sh --fio scripts/fio_replay.sh --out "$dir/out" \
    > "$dir/log.txt" 2>&1
  r=$?
  result=$(grep -o 'median_err=[0-9.]* p90_err=[0-9.]*' "$dir/log.txt")
  channels=$(grep -o 'estimate: disk.channels = [0-9]*' "$dir/log.txt" | grep -o '[0-9]*$')
  if [ $r -ne 0 ] || [ -z "$result" ]; then
    echo "stripe_bytes=$s failed (exit $r): $(tail -3 "$dir/log.txt")"
    rc=1
    continue
  fi
  echo "stripe_bytes=$s channels=$channels $result"
done
echo "f4_stripes: fits and logs in $work" >&2
exit $rc
