#!/usr/bin/env bash
# Issue 24 item 5, found with issue 22's F4 bench: `sluice calibrate` outside
# emulate mode ends at once on SIGTERM and SIGINT, and its children (here a
# stand-in fio that would run for a minute) die with it. It used to catch both
# for the emulator's clean-up and run on until its work was done.
# Usage: calibrate_sigterm_test.sh SLUICE
set -u
# Job control: a background command of a non-interactive shell would start with SIGINT ignored.
set -m
sluice=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
# Limits: how long the command may take to end after the signal, and to start its first fio.
end_wait_s=10
start_wait_s=60
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  [ -f "$tmp/fio.pid" ] && kill -9 "$(cat "$tmp/fio.pid")" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
cat > "$tmp/fake-fio" <<FIO
#!/bin/sh
echo \$\$ > "$tmp/fio.pid"
exec sleep 60
FIO
chmod +x "$tmp/fake-fio"

for sig in TERM INT; do
  "$sluice" calibrate "$here/lua_scripts/calibrate_disk.lua" --backend fio --fio "$tmp/fake-fio" \
    --fio-dir "$tmp/data" --out "$tmp/out" --set fit_bs=64KiB --set fit_qd=1 --set access=sequential \
    --repeats 1 --profile-dir "$here/sim/profiles" > "$tmp/log" 2>&1 &
  pid=$!
  rm -f "$tmp/fio.pid"
  started=
  for _ in $(seq 1 $((start_wait_s * 10))); do
    if [ -s "$tmp/fio.pid" ]; then started=1; break; fi
    kill -0 "$pid" 2>/dev/null || fail "SIG$sig: sluice calibrate ended before its fio started: $(tail -5 "$tmp/log")"
    sleep 0.1
  done
  [ -n "$started" ] || fail "SIG$sig: the stand-in fio never started: $(tail -5 "$tmp/log")"
  kill -"$sig" "$pid"
  ended=
  for _ in $(seq 1 $((end_wait_s * 10))); do
    if ! kill -0 "$pid" 2>/dev/null; then ended=1; break; fi
    sleep 0.1
  done
  [ -n "$ended" ] || fail "SIG$sig: sluice calibrate still runs ${end_wait_s} s after the signal"
  wait "$pid" 2>/dev/null
  pid=
  fio_pid=$(cat "$tmp/fio.pid")
  for _ in $(seq 1 $((end_wait_s * 10))); do
    kill -0 "$fio_pid" 2>/dev/null || break
    sleep 0.1
  done
  ! kill -0 "$fio_pid" 2>/dev/null || fail "SIG$sig: the stand-in fio outlived sluice calibrate"
  echo "SIG$sig: sluice calibrate and its fio ended"
done
