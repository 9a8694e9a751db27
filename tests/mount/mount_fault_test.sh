#!/usr/bin/env bash
# Issue 23: a fault plan while fio verifies through the mount. Storage is
# buddy-mirrored (targets 1 and 2 on nodes 1 and 2); 6 s after the servers are
# up the storage service of node 1 crashes, and 4 s later it restarts. fio
# writes at a bounded rate through that time, then reads everything back and
# checks it (verify=crc32c): no verify error is allowed, mgmt must have
# switched the group over, and the deployment must stop cleanly.
# Usage: mount_fault_test.sh SLUICE (77: cannot mount here).
set -u
sluice=$1
. "$(dirname "$0")/mount_lib.sh"
begin_mount_test fault fio

cat >"$tmp/cluster.json" <<'JSON'
{"max_wait_s": 60,
 "nodes": [{"id": 0, "roles": ["mgmt", "meta", "client"]},
           {"id": 1, "roles": ["storage"], "targets": [1]},
           {"id": 2, "roles": ["storage"], "targets": [2]}],
 "mirror": {"storage": true, "heartbeat_ms": 500, "probably_offline_ms": 1000, "offline_ms": 2000},
 "faults": [{"at_ms": 6000, "kill_storage_node": 1, "restart_after_ms": 4000}]}
JSON
start_mount "$tmp/mnt" --config "$tmp/cluster.json" --work-dir "$tmp/work" --keep || exit 1
# 2 jobs x 96 MiB at 8 MiB/s each: 12 s of writes, across the crash and the restart.
if (cd "$tmp" && timeout 120 fio --name=fault --directory="$mnt" --rw=write --bs=1M --size=96M --numjobs=2 \
    --rate=8m --direct=1 --ioengine=psync --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
    >"$tmp/fio" 2>&1) && ! grep -qi "verify: bad\|crc32c: verify failed\|err=[ ]*[1-9]" "$tmp/fio"; then
  echo "ok: fio wrote 192 MiB across the storage crash and restart, and verified every byte"
else
  echo "FAIL: fio across the storage crash"
  tail -30 "$tmp/fio"
  fail=1
fi
stop_mount
logs=$(cat "$tmp/work"/node*.log 2>/dev/null)
for want in "fault: the storage service is killed" "fault: the storage service restarts: ok" \
    "switchover, target 2 is now primary"; do
  if grep -qF "$want" <<<"$logs"; then
    echo "ok: the logs say \"$want\""
  else
    echo "FAIL: the logs do not say \"$want\""
    fail=1
  fi
done
exit $fail
