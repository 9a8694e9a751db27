#!/usr/bin/env bash
# Issue 47 item 1: a documented `make soak*` target, run as the README runs it
# (make in the source folder, BUILD relative to it as `build` is) at a few
# runs, so that a target that no longer works fails CI. Its RESULT lines are
# printed; the target's own verdict (exit status) is the test's.
# Usage: soak_make_smoke_test.sh SOURCE_DIR BUILD TARGET [VAR=value ...]
# Exit 77 (skipped): a precondition of the target is missing (said why).
set -u
src=$1 build=$2 target=$3
shift 3
case "$target" in
  soak-cluster)
    command -v mpirun >/dev/null || { echo "SKIP: make $target needs mpirun (openmpi-bin)"; exit 77; } ;;
  soak-cluster-netns)
    [ "$(id -u)" = 0 ] || { echo "SKIP: make $target needs root (network namespaces)"; exit 77; }
    command -v nft >/dev/null || { echo "SKIP: make $target needs nft (nftables)"; exit 77; } ;;
esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A make of its own: not a sub-make of the `make test` that runs ctest.
start=$(date +%s)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$src" "$target" BUILD="$build" "$@" \
  >"$log" 2>&1
rc=$?
grep -E '^(seed [0-9]+:|RESULT )' "$log"
echo "make -C $src $target BUILD=$build $*: exit $rc in $(($(date +%s) - start)) s"
if [ "$rc" != 0 ]; then
  tail -40 "$log"
  echo "FAIL: make $target exited $rc"
  exit 1
fi
grep -q '^RESULT ' "$log" || { tail -40 "$log"; echo "FAIL: make $target printed no RESULT line"; exit 1; }
echo "ok: make $target"
