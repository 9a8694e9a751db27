#!/usr/bin/env bash
# Issue 23: fio with verify=crc32c through `sluice mount` of a 3-node netns
# deployment: sequential and random, several jobs, 4 KiB to 4 MiB blocks,
# O_DIRECT and through the page cache. Every byte fio wrote is read back and
# checked by fio; then the mount is unmounted and the deployment must stop
# cleanly. Usage: mount_fio_test.sh SLUICE (exit 77: cannot mount here).
set -u
sluice=$1
. "$(dirname "$0")/mount_lib.sh"
begin_mount_test fio fio

start_mount "$tmp/mnt" || exit 1

# run_fio NAME ARGS...: fio must exit 0 with no verify error.
run_fio() {
  local name=$1; shift
  if timeout 240 fio --name="$name" --directory="$mnt" --ioengine=psync --verify=crc32c --do_verify=1 --verify_state_save=0 \
      --verify_fatal=1 --output-format=normal "$@" >"$tmp/fio.$name" 2>&1 &&
      ! grep -qi "verify: bad\|crc32c: verify failed\|err=[ ]*[1-9]" "$tmp/fio.$name"; then
    echo "ok: fio $name $*"
  else
    echo "FAIL: fio $name $*"
    tail -30 "$tmp/fio.$name"
    fail=1
  fi
}
run_fio seq_1m_direct --rw=write --bs=1M --size=16M --numjobs=4 --direct=1
run_fio rand_4k_direct --rw=randwrite --bs=4k --size=4M --numjobs=2 --direct=1
run_fio randrw_64k_cached --rw=randrw --bs=64k --size=16M --numjobs=3
run_fio seq_4m_direct --rw=write --bs=4M --size=32M --numjobs=2 --direct=1
run_fio rand_128k_unaligned --rw=randwrite --bs=128k --size=8M --offset=4k --numjobs=2 --direct=1

stop_mount
exit $fail
