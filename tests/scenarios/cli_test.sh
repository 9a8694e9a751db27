#!/usr/bin/env bash
# CLI behaviour: output, files written, exit codes (0 ok, 2 usage/bad input).
set -u
sluice="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect CODE DESCRIPTION -- command...
  local want=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, wanted $want"; cat "$tmp/out" "$tmp/err" | head -20; fail=1
  else
    echo "ok: $what"
  fi
}
expect 0 "topo show dgx_a100 writes files" -- "$sluice" topo show dgx_a100 --out "$tmp/o"
grep -q "gpu0.*mlx5_0(PXB)" "$tmp/out" || { echo "FAIL: GPU 0 ranking not shown"; fail=1; }
grep -q '"chosen_nic": "mlx5_0"' "$tmp/o/topology.json" || { echo "FAIL: topology.json lacks GPU 0's NIC"; fail=1; }
expect 2 "unknown machine" -- "$sluice" topo show no_such_machine
grep -q "neither a machine" "$tmp/err" || { echo "FAIL: unclear message"; cat "$tmp/err"; fail=1; }
printf 'this is not a topology\n' >"$tmp/bad.txt"
expect 2 "malformed nvidia-smi capture" -- "$sluice" topo import "$tmp/bad.txt"
printf '<?xml version="1.0"?><topology><object type="Machine">' >"$tmp/bad.xml"
expect 2 "truncated hwloc xml" -- "$sluice" topo import "$tmp/bad.xml"
expect 2 "missing argument" -- "$sluice" topo show
expect 2 "node out of range" -- "$sluice" topo show dgx_a100 --node 7
expect 0 "backends" -- "$sluice" backends
grep -q "SIMGRID" "$tmp/out" || { echo "FAIL: backends lacks SIMGRID"; fail=1; }
grep -qE "^  tcp +host" "$tmp/out" || { echo "FAIL: backends lacks the tcp transport"; cat "$tmp/out"; fail=1; }
grep -qE "^  posix " "$tmp/out" || { echo "FAIL: backends lacks the posix backend"; fail=1; }
expect 0 "help" -- "$sluice" --help
exit $fail
