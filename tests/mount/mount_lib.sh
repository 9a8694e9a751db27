# Shell helpers of the mount tests (sourced after setting $sluice).
# Every wait is bounded; a test that fails leaves no mount and no process.

# begin_mount_test NAME [COMMAND...]: $tmp (removed at exit, with any mount
# left), fail=0; exits 77 (skipped, saying why) when a mount cannot be made
# here or a COMMAND the test runs is missing.
begin_mount_test() {
  local name=$1 cmd why
  shift
  tmp=$(mktemp -d "/tmp/sluice-mount-$name.XXXXXX")
  fail=0
  trap 'cleanup_mount; rm -rf "$tmp"' EXIT
  why=$(mount_skip_reason)
  if [ -n "$why" ]; then echo "SKIP: $why"; exit 77; fi
  for cmd in "$@"; do
    if ! command -v "$cmd" >/dev/null; then echo "SKIP: no $cmd"; exit 77; fi
  done
}

# Why a mount cannot be tested here ("" when it can): root, /dev/fuse, ip netns, fusermount3-free umount.
mount_skip_reason() {
  if [ "$(id -u)" != 0 ]; then echo "not root"; return; fi
  if [ ! -c /dev/fuse ]; then echo "no /dev/fuse"; return; fi
  if ! ip netns list >/dev/null 2>&1; then echo "no ip netns"; return; fi
  if ! "$sluice" backends 2>/dev/null | grep -q "^  FUSE  *found"; then echo "this build has no FUSE (libfuse3-dev)"; return; fi
}

# start_mount MNT [sluice mount args...]: a 3-node netns deployment mounted at
# MNT; returns once `sluice mount` says it is ready (at most 120 s).
start_mount() {
  mnt=$1; shift
  mkdir -p "$mnt"
  : >"$tmp/mount.out"  # not an earlier mount's "is ready"
  "$sluice" mount "$mnt" --nodes 3 --insecure "$@" >"$tmp/mount.out" 2>"$tmp/mount.err" &
  mount_pid=$!
  local i
  for i in $(seq 1 240); do
    if grep -q "is ready" "$tmp/mount.out"; then return 0; fi
    if ! kill -0 "$mount_pid" 2>/dev/null; then break; fi
    sleep 0.5
  done
  echo "FAIL: the mount at $mnt did not come up"
  cat "$tmp/mount.out" "$tmp/mount.err"
  return 1
}

# wait_exit PID SECONDS: the exit code of a child, or 124 when it outlives the bound (then killed).
wait_exit() {
  local pid=$1 bound=$2 i
  for i in $(seq 1 $((bound * 4))); do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      return $?
    fi
    sleep 0.25
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 124
}

# stop_mount: `sluice umount`, then the launcher must stop the deployment
# cleanly (exit 0) within 60 s; sets fail=1 otherwise.
stop_mount() {
  if ! "$sluice" umount "$mnt"; then
    echo "FAIL: sluice umount $mnt"
    fail=1
    "$sluice" umount --lazy "$mnt" 2>/dev/null
  fi
  wait_exit "$mount_pid" 60
  local code=$?
  mount_pid=
  if [ "$code" != 0 ]; then
    echo "FAIL: sluice mount exited $code after the unmount"
    cat "$tmp/mount.out" "$tmp/mount.err" | tail -20
    fail=1
  else
    echo "ok: unmounted; the deployment stopped cleanly"
  fi
}

# For a trap: whatever is left goes (lazy unmount, the launcher signalled).
cleanup_mount() {
  if [ -n "${mnt:-}" ] && grep -q " $mnt fuse.sluice" /proc/self/mounts 2>/dev/null; then
    "$sluice" umount --lazy "$mnt" 2>/dev/null
  fi
  if [ -n "${mount_pid:-}" ]; then
    kill -TERM "$mount_pid" 2>/dev/null
    wait_exit "$mount_pid" 30 >/dev/null
  fi
}
