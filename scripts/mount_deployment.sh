# scripts/mount_deployment.sh: a `sluice mount` deployment (netns nodes, the client node's FUSE
# mount on this host) for the benchmarks that run another program through it: bench_mount.sh
# (fio, P9 and P16) and bench_mlperf.sh (DLIO, P15). Sourced, not run; needs SLUICE (the binary)
# and MOUNT_WHO (the caller's name for messages, "bench-mount"). Needs root (netns, /dev/fuse).
#   mount_start MNT LOGS [sluice mount options]  start the deployment in the background and wait,
#                        at most MOUNT_READY_WAIT_S, until it serves MNT (LOGS.out, LOGS.err: its output)
#   mount_stop MNT       unmount; the deployment then stops cleanly (at most MOUNT_STOP_WAIT_S)
#   mount_cleanup MNT    for an EXIT trap: detach MNT where it is still mounted, stop what is left
#   link_gbps LINK       a `sluice mount --link` rate (10gbit, 500mbit) in Gb/s, a study's link_gbps
# mount_start and mount_stop return non-zero, saying why on stderr, when the mount does not come
# up or go away in time.

# Bounds on the waits (seconds): a 3-node deployment comes up in a few seconds on the 2-core VM.
MOUNT_READY_WAIT_S=${MOUNT_READY_WAIT_S:-120}
MOUNT_STOP_WAIT_S=${MOUNT_STOP_WAIT_S:-60}
mount_pid=

mount_start() {
  local mnt=$1 logs=$2
  shift 2
  "$SLUICE" mount "$mnt" "$@" >"$logs.out" 2>"$logs.err" &
  mount_pid=$!
  local deadline=$((SECONDS + MOUNT_READY_WAIT_S))
  while [ "$SECONDS" -lt "$deadline" ]; do
    grep -q "is ready" "$logs.out" && return 0
    kill -0 "$mount_pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "$MOUNT_WHO: the mount at $mnt did not come up (within ${MOUNT_READY_WAIT_S} s)" >&2
  tail -20 "$logs.err" >&2
  return 1
}

mount_stop() {
  local mnt=$1
  "$SLUICE" umount "$mnt" || return 1
  local deadline=$((SECONDS + MOUNT_STOP_WAIT_S))
  while kill -0 "$mount_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  if kill -0 "$mount_pid" 2>/dev/null; then
    echo "$MOUNT_WHO: the deployment of $mnt did not stop within ${MOUNT_STOP_WAIT_S} s of its unmount" >&2
    kill -TERM "$mount_pid" 2>/dev/null || true
    wait "$mount_pid" 2>/dev/null || true
    mount_pid=
    return 1
  fi
  local rc=0
  wait "$mount_pid" || rc=$?
  mount_pid=
  [ "$rc" = 0 ] || echo "$MOUNT_WHO: the deployment of $mnt exited $rc" >&2
  return "$rc"
}

mount_cleanup() {
  local mnt=$1
  if grep -q " $mnt fuse.sluice" /proc/self/mounts; then "$SLUICE" umount --lazy "$mnt" || true; fi
  if [ -n "$mount_pid" ]; then
    kill -TERM "$mount_pid" 2>/dev/null || true
    wait "$mount_pid" 2>/dev/null || true
    mount_pid=
  fi
}

link_gbps() {
  python3 -c "import re,sys; m=re.fullmatch(r'(\d+(?:\.\d+)?)(gbit|mbit)', sys.argv[1]) or sys.exit('$MOUNT_WHO: link ' + sys.argv[1] + ': give NNgbit or NNmbit'); print(float(m[1]) / (1 if m[2] == 'gbit' else 1000))" "$1"
}
