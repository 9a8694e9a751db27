#!/usr/bin/env bash
# Issue 47 item 6: what results.json and the printout say of a run is what ran.
# One part per ctest test (label hardening):
#   storage_root   `run --backend emulate`'s deployment.storage_root is the directory its
#                  targets kept their chunk files in (the point's work directory under
#                  --storage-root), and `--backend hw`'s is the run's own directory under
#                  --storage-root, not the bare root.
#   authenticated  deployment.authenticated is "true" for a normal run and "false" with
#                  --insecure, on hw and `run --backend emulate`; sim runs carry the field too.
#   headlines      a `--backend hw` run prints no "simulated" headline: the heading names the
#                  backends the runs came from, and no study hard-codes "simulated".
#   secret_first   `run --backend emulate` and `sluice mount` with a secret file others can read exit 2
#                  naming the file before any namespace, work directory or node exists.
# The emulate parts need root and network namespaces (exit 77 otherwise).
# Usage: results_truth_test.sh SLUICE PART
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
part=$2
here=$(cd "$(dirname "$0")" && pwd)
scripts="$here/scripts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# shellcheck source=test_lib.sh
. "$here/test_lib.sh"

need_netns() {
  [ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
  local probe="sluice-emu-probe-$$"
  ip netns add "$probe" 2>/dev/null || { echo "SKIP: ip netns add is not permitted here"; exit 77; }
  ip netns delete "$probe"
}

# deployment KEY of every run of results file $1, one per line.
deployment_values() {
  python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["runs"]:
    print(r.get("deployment", {}).get(sys.argv[2], "<missing>"))' "$1" "$2"
}

# A small file sweep on 3 netns hosts (`run --backend emulate`: 4 files of 256 KiB) with extra arguments.
small_emulate() {
  timeout 120 "$sluice" run "$here/../../lua_scripts/file_sweep.lua" --backend emulate --set nodes=3 --set link_gbps=1 \
    --set files=4 --set file_size=256KiB --set block=128KiB --set chunk=128KiB --meta-store memory "$@"
}

case "$part" in
storage_root)
  need_netns
  mkdir -p "$tmp/work"
  expect 0 "run --backend emulate --keep --storage-root" -- small_emulate --keep --storage-root "$tmp/work" \
    --out "$tmp/emu"
  root=$(deployment_values "$tmp/emu/results.json" storage_root)
  echo "emulate: storage_root $root"
  case "$root" in
  "$tmp/work"/sluice-emu-*) ;;
  *) echo "FAIL: emulate's storage_root $root is not its work directory under $tmp/work"; fail=1 ;;
  esac
  # The nodes log where each target keeps its chunk files ("target 1 at DIR: posix ...").
  targets=$(sed -nE 's/.* target [0-9]+ at ([^:]+): .*/\1/p' "$tmp/err")
  [ -n "$targets" ] || { echo "FAIL: the node logs name no target directory"; cat "$tmp/err"; fail=1; }
  for t in $targets; do
    case "$t" in
    "$root"/*) ;;
    *) echo "FAIL: target directory $t is not under storage_root $root"; fail=1 ;;
    esac
  done
  mkdir -p "$tmp/root"
  expect 0 "run --backend hw --storage-root" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --set files=4 \
    --storage-root "$tmp/root" --out "$tmp/hw"
  for root in $(deployment_values "$tmp/hw/results.json" storage_root); do
    case "$root" in
    "$tmp/root"/sluice-hw-*) ;;
    *) echo "FAIL: hw's storage_root $root is not the run's directory under $tmp/root"; fail=1 ;;
    esac
  done
  ;;
authenticated)
  # want FILE VALUE WHAT: every run of FILE says authenticated VALUE.
  want() {
    local got
    got=$(deployment_values "$1" authenticated | sort -u | tr '\n' ' ')
    if [ "$got" = "$2 " ]; then echo "ok: $3: authenticated $2"; else
      echo "FAIL: $3: authenticated is '$got', wanted $2"
      fail=1
    fi
  }
  expect 0 "run --backend hw" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --set files=4 --out "$tmp/hw"
  want "$tmp/hw/results.json" true "hw"
  expect 0 "run --backend hw --insecure" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --set files=4 \
    --insecure --out "$tmp/hw_insecure"
  want "$tmp/hw_insecure/results.json" false "hw --insecure"
  if "$sluice" backends 2>/dev/null | grep -q "SIMGRID *found"; then
    expect 0 "run --backend sim" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend sim --set files=4 --out "$tmp/sim"
    want "$tmp/sim/results.json" false "sim (no authentication modelled)"
  fi
  need_netns
  # sluice run --backend emulate (the cluster path, one rank per namespace).
  for mode in secure insecure; do
    flags=(--meta-store memory --storage-root "$tmp")
    [ "$mode" = secure ] || flags+=(--insecure)
    expect 0 "run --backend emulate ($mode)" -- timeout 120 "$sluice" run "$scripts/tiny_sweep.lua" --backend emulate \
      --set files=4 "${flags[@]}" --out "$tmp/run_emu_$mode"
    want "$tmp/run_emu_$mode/results.json" "$([ "$mode" = secure ] && echo true || echo false)" "run --backend emulate, $mode"
  done
  ;;
headlines)
  # No study prints a heading that says "simulated" whatever the backend.
  if grep -n 'print("Headlines' "$here/../../lua_scripts/"*.lua; then
    echo "FAIL: studies print a fixed headline heading (use sl.headlines, which names the backends)"
    fail=1
  fi
  expect 0 "run --backend hw" -- "$sluice" run "$scripts/headline_sweep.lua" --backend hw --out "$tmp/hw"
  grep -q "^Headlines (hw, of a test):" "$tmp/out" || { echo "FAIL: no hw heading"; cat "$tmp/out"; fail=1; }
  if grep -qi "simulated" "$tmp/out"; then
    echo "FAIL: a hw run says simulated:"
    grep -i simulated "$tmp/out"
    fail=1
  fi
  if "$sluice" backends 2>/dev/null | grep -q "SIMGRID *found"; then
    expect 0 "run --backend sim" -- "$sluice" run "$scripts/headline_sweep.lua" --backend sim --out "$tmp/sim"
    grep -q "^Headlines (simulated, of a test):" "$tmp/out" ||
      { echo "FAIL: no simulated heading"; cat "$tmp/out"; fail=1; }
  fi
  ;;
secret_first)
  need_netns
  printf 'a-secret-of-more-than-sixteen-bytes\n' >"$tmp/secret"
  chmod 0644 "$tmp/secret"
  # refused WHAT COMMAND...: the command (run in the background, so that its pid names its
  # namespaces and directories: sluice-emu-<pid>-*) exits 2 naming the file, having made no
  # namespace, work directory (in $tmp/work: the mount's --work-dir, the run's --storage-root)
  # or node.
  refused() {
    local what=$1 pid code before=$fail
    shift
    rm -rf "$tmp/work"
    [ "$1" != run ] || mkdir "$tmp/work"  # --storage-root must exist
    "$sluice" "$@" --shared-secret-file "$tmp/secret" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    wait "$pid"
    code=$?
    [ "$code" = 2 ] || { echo "FAIL: $what: exit $code, wanted 2"; cat "$tmp/out" "$tmp/err" | head -20; fail=1; }
    grep -q "$tmp/secret" "$tmp/err" || { echo "FAIL: $what: the message does not name the file"; cat "$tmp/err"; fail=1; }
    if grep -q "work dir\|node processes started" "$tmp/err"; then
      echo "FAIL: $what: started the deployment before checking the secret:"
      cat "$tmp/err"
      fail=1
    fi
    if ip netns list | grep -q "^sluice-emu-$pid-"; then echo "FAIL: $what: left namespaces"; fail=1; fi
    [ -z "$(ls -A "$tmp/work" 2>/dev/null)" ] || { echo "FAIL: $what: made its work directory in $tmp/work"; fail=1; }
    [ "$1" = run ] || [ ! -e "$tmp/work" ] || { echo "FAIL: $what: made its work directory $tmp/work"; fail=1; }
    [ "$fail" != "$before" ] || echo "ok: $what refused: $(head -1 "$tmp/err")"
    # Whatever a failure left (namespaces go with the launcher; directories only here).
    rm -rf "$tmp/work" /tmp/sluice-emu-"$pid"-*
  }
  refused "run --backend emulate, secret mode 644" run "$here/../../lua_scripts/file_sweep.lua" --backend emulate \
    --set files=4 --set file_size=256KiB --storage-root "$tmp/work" --out "$tmp/refused"
  mkdir -p "$tmp/mnt"
  refused "mount, secret mode 644" mount "$tmp/mnt" --work-dir "$tmp/work"
  # The same file, readable by its owner only, is taken (the check is the secret's, not a blanket refusal).
  chmod 0600 "$tmp/secret"
  expect 0 "run --backend emulate --shared-secret-file (mode 600)" -- small_emulate --shared-secret-file "$tmp/secret" \
    --out "$tmp/emu"
  ;;
*)
  echo "usage: $0 SLUICE storage_root|authenticated|headlines|secret_first"
  exit 2
  ;;
esac
exit $fail
