#!/usr/bin/env bash
# Issue 24 item 5, nothing left behind: `sluice run --backend hw` stopped by
# SIGINT, by SIGTERM and killed with SIGKILL while its point runs. INT and TERM
# exit 130/143 and remove the point's /tmp/sluice-hw-run-* directory; after
# SIGKILL the point's process dies with its parent (PR_SET_PDEATHSIG) and the
# next hardware run sweeps the dead run's directory.
# Usage: hw_interrupt_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../scripts/hw_long_point.lua"
start_limit_s=60   # until the point's directory exists
stop_limit_s=30    # until sluice and its point are gone after the signal
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/scenarios/test_lib.sh
source "$here/../test_lib.sh"
fail() { echo "FAIL: $*"; echo "--- stderr"; tail -20 "$tmp/err.txt"; exit 1; }

# The /tmp/sluice-hw-run-* directory whose owner (base/run_marker.hpp) is $1.
dir_of() {
  local d
  for d in /tmp/sluice-hw-run-*; do
    [ -f "$d/.sluice-owner" ] || continue
    if [ "$(cut -d' ' -f1 "$d/.sluice-owner")" = "$1" ]; then echo "$d"; return; fi
  done
}
gone_within() {  # gone_within PID SECONDS
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.1
  done
}

for sig in INT TERM KILL; do
  "$sluice" run "$script" --backend hw --out "$tmp/out-$sig" >"$tmp/out.txt" 2>"$tmp/err.txt" &
  pid=$!
  deadline=$((SECONDS + start_limit_s))
  child= dir=
  while [ -z "$dir" ]; do
    kill -0 "$pid" 2>/dev/null || fail "$sig: sluice ended before its point started"
    [ $SECONDS -lt $deadline ] || fail "$sig: no point directory after ${start_limit_s} s"
    sleep 0.2
    for c in $(children_of "$pid"); do
      child=$c
      dir=$(dir_of "$c")
      [ -n "$dir" ] && break
    done
  done
  kill "-$sig" "$pid"
  gone_within "$pid" "$stop_limit_s" || fail "$sig: sluice still runs ${stop_limit_s} s after the signal"
  wait "$pid"
  rc=$?
  pid=
  gone_within "$child" "$stop_limit_s" || fail "$sig: the point's process $child outlived sluice"
  case $sig in
    INT) [ "$rc" = 130 ] || fail "INT: exit $rc, wanted 130" ;;
    TERM) [ "$rc" = 143 ] || fail "TERM: exit $rc, wanted 143" ;;
    KILL)
      [ -d "$dir" ] || fail "KILL: the directory went already (nothing to sweep)"
      # The next hardware run sweeps it (a run that fails at once is enough).
      "$sluice" run "$script" --backend hw --set files=1 --out "$tmp/next" >/dev/null 2>"$tmp/err.txt" ||
        fail "KILL: the next hardware run failed"
      grep -q "dead run: removed $dir" "$tmp/err.txt" || fail "KILL: the next run did not say it swept $dir"
      ;;
  esac
  [ ! -e "$dir" ] || fail "$sig: $dir is left behind"
  echo "ok: SIGTERM/SIGINT/SIGKILL ($sig): sluice and its point gone, $dir removed"
done
