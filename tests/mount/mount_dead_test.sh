#!/usr/bin/env bash
# Issue 47 item 3: `sluice mount` killed with SIGKILL leaves a dead mount
# ("Transport endpoint is not connected"), its namespaces and its work
# directory. A new `sluice mount` on the same place recognises the dead sluice
# mount and replaces it, and sweeps what the dead run left; the new mount works
# and stops cleanly.
# Usage: mount_dead_test.sh SLUICE (77: cannot mount here).
set -u
sluice=$1
. "$(dirname "$0")/mount_lib.sh"
begin_mount_test dead

# The namespaces and /tmp work directories of the launcher $1.
left_by() {
  ip netns list | awk '{print $1}' | grep -- "^sluice-emu-$1-"
  ls -d /tmp/sluice-emu-"$1"-* 2>/dev/null
  return 0
}

start_mount "$tmp/mnt" || exit 1
old=$mount_pid
[ -n "$(left_by "$old")" ] || { echo "FAIL: no namespaces of the mount's launcher $old"; exit 1; }
kill -9 "$old"
wait_exit "$old" 30 >/dev/null
mount_pid=
# Its node processes die with it (PR_SET_PDEATHSIG): the mount goes dead.
for _ in $(seq 1 100); do
  stat "$mnt" >/dev/null 2>&1 || break
  sleep 0.1
done
if stat "$mnt" 2>&1 | grep -q "not connected"; then
  echo "ok: the killed mount is dead"
else
  echo "FAIL: the killed mount is not dead: $(stat "$mnt" 2>&1 | head -1)"
  fail=1
fi

if start_mount "$mnt"; then
  echo "ok: a new sluice mount replaced the dead one"
  left=$(left_by "$old")
  if [ -z "$left" ]; then
    echo "ok: the dead mount's namespaces and work directory are gone"
  else
    echo "FAIL: the dead mount's leftovers are still there: $(echo "$left" | tr '\n' ' ')"
    fail=1
  fi
  if echo "after the dead mount" >"$mnt/f" && [ "$(cat "$mnt/f")" = "after the dead mount" ]; then
    echo "ok: the new mount reads back what it wrote"
  else
    echo "FAIL: the new mount does not work"
    fail=1
  fi
  stop_mount
else
  fail=1
fi
[ "$(grep -c " $mnt fuse.sluice" /proc/self/mounts)" = 0 ] || { echo "FAIL: a mount is left at $mnt"; fail=1; }
[ "$fail" = 0 ] || "$sluice" emulate --cleanup-stale >/dev/null 2>&1  # what a failed run left
exit $fail
