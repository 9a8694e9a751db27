#!/usr/bin/env bash
# Issue 47 item 3: what a run killed with SIGKILL leaves (its network
# namespaces, its /tmp/sluice-emu-* and sluice-hw-run-* directories) is swept
# by the next command of any kind that makes such things
# (scenarios/netns/dead_runs.hpp), and a run that fails at its bootstrap
# removes its own work directory.
#  1. kill -9 of `sluice run --backend emulate` while its nodes run a file sweep; the next
#     `sluice run --backend emulate` sweeps.
#  2. kill -9 of `sluice run --backend emulate`; the next `sluice run --backend hw` sweeps.
#  3. kill -9 of `sluice run --backend hw`; the next `sluice run --backend emulate` sweeps.
#  4. `sluice run --backend emulate` with a bad secret file: refused, no sluice-emu-* directory of its own
#     (nodes that fail their bootstrap: EmulateNetns.ABootstrapFailureRemovesItsWorkDirAndNamespaces).
# Needs root and ip netns (exit 77 otherwise).
# Usage: dead_runs_test.sh SLUICE
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
hw_script="$here/scripts/hw_long_point.lua"
sweep_script="$here/../../lua_scripts/file_sweep.lua"
# shellcheck source=tests/scenarios/test_lib.sh
source "$here/test_lib.sh"
skip_unless_netns "$sluice"
start_limit_s=60  # until the killed run has made what it leaves
run_limit_s=120   # each sweeping command
tmp=$(mktemp -d)
pids=
cleanup() {
  local p
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.txt; do echo "--- $f"; tail -15 "$f"; done; exit 1; }

# $1 and its descendants.
family() {
  local c
  echo "$1"
  for c in $(children_of "$1"); do family "$c"; done
}
# What the processes $@ made and left: namespaces named after them, and the
# /tmp/sluice-* run directories whose owner mark names them.
left_by() {
  local p d
  for p in "$@"; do
    ip netns list | awk '{print $1}' | grep -- "^sluice-emu-$p-"
    for d in /tmp/sluice-emu-"$p"-* /tmp/sluice-hw-run-*; do
      [ -f "$d/.sluice-owner" ] && [ "$(cut -d' ' -f1 "$d/.sluice-owner")" = "$p" ] && echo "$d"
    done
  done
  return 0
}
# kill_when NAME PATTERN FILE: once FILE (the run's output) has PATTERN (an
# empty one: at once), SIGKILL the run ($run_pid); sets $killed to the run's processes.
kill_when() {
  local deadline=$((SECONDS + start_limit_s))
  until [ -z "$2" ] || grep -qs -- "$2" "$3"; do
    kill -0 "$run_pid" 2>/dev/null || fail "$1: the run ended before it was killed"
    [ $SECONDS -lt $deadline ] || fail "$1: no '$2' after ${start_limit_s} s"
    sleep 0.2
  done
  killed=$(family "$run_pid")
  kill -9 "$run_pid"
  wait "$run_pid" 2>/dev/null
  local p deadline2=$((SECONDS + 30))
  for p in $killed; do
    while kill -0 "$p" 2>/dev/null; do
      [ $SECONDS -lt $deadline2 ] || fail "$1: process $p outlived the killed run"
      sleep 0.1
    done
  done
  present=1
  # shellcheck disable=SC2086
  if [ -z "$(left_by $killed)" ]; then
    present=0
    echo "note: $1: what the killed run left is gone already (another command on this machine swept it)"
  fi
}
# swept NAME: nothing of the killed run is left (else says so, sets failed=1
# and removes it, so that the next step starts clean).
failed=0
swept() {
  local left
  # shellcheck disable=SC2086
  left=$(left_by $killed)
  if [ -n "$left" ]; then
    echo "FAIL: $1: left behind after the next command: $(echo "$left" | tr '\n' ' ')"
    tail -5 "$tmp/next.txt"
    failed=1
    "$sluice" emulate --cleanup-stale >/dev/null 2>&1
  else
    echo "ok: $1"
  fi
}
# A small file sweep on 2 netns hosts (`sluice run --backend emulate`) with extra arguments.
emulate_small() {
  timeout "$run_limit_s" "$sluice" run "$sweep_script" --backend emulate --set nodes=2 --set link_gbps=1 \
    --set files=2 --set file_size=1MiB "$@"
}

# 1. `run --backend emulate`, killed while its nodes run a long sweep; the next one sweeps.
"$sluice" run "$sweep_script" --backend emulate --set nodes=2 --set link_gbps=0.1 --set files=400 \
  --set file_size=1MiB --out "$tmp/long" >"$tmp/run.txt" 2>&1 &
run_pid=$! pids="$pids $!"
kill_when "run --backend emulate (file sweep)" "hw world started" "$tmp/run.txt"
emulate_small --out "$tmp/next" >"$tmp/next.txt" 2>&1 || fail "the next run --backend emulate failed"
# (The namespaces are named after the process that runs the point, a child of the run.)
if [ "$present" = 1 ] && ! grep -qE "dead run: removed namespace sluice-emu-($(printf '%s\n' "$killed" | paste -sd'|'))-" "$tmp/next.txt"; then
  echo "FAIL: the next run --backend emulate did not say what it swept"
  failed=1
fi
swept "a killed run --backend emulate is swept by the next run --backend emulate"

# 2. `sluice run --backend emulate`, killed mid-point; the next hardware run sweeps.
"$sluice" run "$hw_script" --backend emulate --out "$tmp/emu" >"$tmp/run.txt" 2>&1 &
run_pid=$! pids="$pids $!"
kill_when "run --backend emulate" "work dir" "$tmp/run.txt"
timeout "$run_limit_s" "$sluice" run "$hw_script" --backend hw --set files=1 --out "$tmp/hw" >"$tmp/next.txt" 2>&1 ||
  fail "the next hardware run failed"
swept "a killed run --backend emulate is swept by the next run --backend hw"

# 3. `sluice run --backend hw`, killed mid-point; the next run --backend emulate sweeps.
"$sluice" run "$hw_script" --backend hw --out "$tmp/hw2" >"$tmp/run.txt" 2>&1 &
run_pid=$! pids="$pids $!"
deadline=$((SECONDS + start_limit_s))
# shellcheck disable=SC2046
until [ -n "$(left_by $(family "$run_pid"))" ]; do
  [ $SECONDS -lt $deadline ] || fail "run --backend hw: no run directory after ${start_limit_s} s"
  sleep 0.2
done
kill_when "run --backend hw" "" /dev/null
emulate_small --out "$tmp/next3" >"$tmp/next.txt" 2>&1 || fail "the next run --backend emulate failed"
swept "a killed run --backend hw is swept by the next run --backend emulate"

# 4. A bad secret file (readable by others): the run fails and leaves no directory of its own.
printf 'a secret that others can read\n' >"$tmp/secret"
chmod 0644 "$tmp/secret"
"$sluice" run "$sweep_script" --backend emulate --set nodes=2 --shared-secret-file "$tmp/secret" --out "$tmp/bad" \
  >"$tmp/run.txt" 2>&1 &
run_pid=$! pids="$pids $!"
wait "$run_pid"
rc=$?
[ "$rc" != 0 ] || fail "bad secret: exit 0"
left=$(ip netns list | grep -- "^sluice-emu-$run_pid-"; ls -d /tmp/sluice-emu-"$run_pid"-* 2>/dev/null)
if [ -n "$left" ]; then
  echo "FAIL: bad secret: left behind: $(echo "$left" | tr '\n' ' ')"
  failed=1
else
  echo "ok: a run refused for its secret file leaves no directory"
fi
exit $failed
