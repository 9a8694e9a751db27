#!/usr/bin/env bash
# Issue 23: pjdfstest (POSIX conformance, written for FreeBSD/ZFS and used by
# Linux file systems) against `sluice mount`. The groups below run, their
# test files in parallel; pjdfstest_report.py prints the pass count per group
# and fails on any failure that pjdfstest_expected_failures.txt does not list
# with its reason (each a deliberate design choice: paths of PATH_MAX below
# the mount's root).
# Usage: mount_pjdfstest_test.sh SLUICE BUILD_DIR (77: cannot mount or build here).
set -u
sluice=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mount_lib.sh"
begin_mount_test pjd python3
tree=$("$here/../../scripts/build_pjdfstest.sh" "$build")
case $? in
  0) ;;
  3) echo "SKIP: no pjdfstest sources (PJDFSTEST_SRC)"; exit 77 ;;
  *) echo "FAIL: cannot build pjdfstest"; exit 1 ;;
esac
tree=$(cd "$tree" && pwd)  # the test files run from inside the mount
groups="chmod ftruncate link mkdir open rename rmdir symlink truncate unlink utimensat"

start_mount "$tmp/mnt" || exit 1
mkdir -p "$mnt/pjd" "$tmp/tap"
for g in $groups; do ls "$tree/tests/$g"/*.t; done >"$tmp/files"
# Each test file in the mount's directory (pjdfstest names its files at random), 8 at a time, 120 s each at most.
xargs -P 8 -I{} sh -c 'f={}; g=$(basename $(dirname $f)); cd "$0" && timeout 120 sh "$f" >"$1/${g}__$(basename $f).tap" 2>&1' \
  "$mnt/pjd" "$tmp/tap" <"$tmp/files"
if [ -n "${PJD_TAP_OUT:-}" ]; then rm -rf "$PJD_TAP_OUT"; cp -r "$tmp/tap" "$PJD_TAP_OUT"; fi  # for a look at the TAP
python3 "$here/pjdfstest_report.py" "$tmp/tap" "$here/pjdfstest_expected_failures.txt" || fail=1
stop_mount
exit $fail
