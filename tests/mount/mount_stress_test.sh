#!/usr/bin/env bash
# Issue 23: stress-ng's file-system stressors against `sluice mount` for a
# bounded time: directories, dentries, renames and file writes read back with
# verification (--verify). Usage: mount_stress_test.sh SLUICE (77: cannot mount here).
set -u
sluice=$1
. "$(dirname "$0")/mount_lib.sh"
begin_mount_test stress stress-ng

start_mount "$tmp/mnt" || exit 1
mkdir -p "$mnt/stress"
if timeout 180 stress-ng --temp-path "$mnt/stress" --dir 2 --dentry 2 --rename 2 --hdd 2 --hdd-bytes 32M \
    --hdd-opts wr-seq,rd-seq --verify --timeout 10s --metrics-brief >"$tmp/stress" 2>&1 &&
    grep -q "successful run completed" "$tmp/stress"; then
  echo "ok: stress-ng dir, dentry, rename, hdd (verify) for 10 s"
  grep "metrc:" "$tmp/stress" | sed -n 3,6p
else
  echo "FAIL: stress-ng"
  tail -30 "$tmp/stress"
  fail=1
fi
stop_mount
exit $fail
