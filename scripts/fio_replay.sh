#!/bin/bash
# Stands in for fio in `sluice calibrate --backend fio --fio scripts/fio_replay.sh`:
# answers each fio job with the output an earlier run of the same job wrote, so
# a changed drive model is fitted to the very measurements an earlier
# `make bench-f4` took (the disk drifts from one run to the next; comparing
# two models on two runs compares two disks).
#   FIO_REPLAY_DIR=/tmp/f4run/f4/fio scripts/f4_calibrate.sh --fio scripts/fio_replay.sh --out /tmp/refit
#   (make bench-f4's command; scripts/f4_stripes.sh does this for several stripes)
# FIO_REPLAY_DIR: the earlier run's OUT/f4/fio (one folder per point and repeat,
# each with job.fio and fio.json). A job that differs from the one stored
# there (other points, sizes or directory) is refused.
set -euo pipefail
dir=${FIO_REPLAY_DIR:?"set FIO_REPLAY_DIR to an earlier run's OUT/f4/fio"}
out="" job=""
for arg in "$@"; do
  case "$arg" in
    --version) exec fio --version ;;
    --output=*) out=${arg#--output=} ;;
    --*) ;;
    *) job=$arg ;;
  esac
done
[ -n "$out" ] && [ -n "$job" ] || { echo "fio_replay: expected --output=FILE and a job file" >&2; exit 2; }
stored="$dir/$(basename "$(dirname "$job")")"
if ! cmp -s "$job" "$stored/job.fio"; then
  echo "fio_replay: $job is not the job stored in $stored/job.fio" >&2
  exit 1
fi
cp "$stored/fio.json" "$out"
