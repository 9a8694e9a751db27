#!/usr/bin/env bash
# ctest bench.smoke.<name> and soak.smoke.<name> (issue 47): `make TARGET BENCH_SMOKE=1` (a
# benchmark's one-point form; the soaks take their run counts as VAR=VALUEs) from the source tree
# on this build directory, as a user runs it (CONTRIBUTING.md, "Benchmarks"), so that a documented
# target cannot rot unseen. BUILD_DIR may be relative to SOURCE_DIR, as `build` is. Passes when make exits 0 and the benchmark printed its own `RESULT TAG ...`
# line for every TAG given; no goal is checked. Skips (exit 77) with the reason where a
# precondition is missing (--needs root, a program such as fio, or a path such as /dev/fuse),
# where the benchmark cannot be built here, or where it printed `RESULT TAG skipped (why)`.
#   smoke.sh SOURCE_DIR BUILD_DIR TARGET "TAG..." [--needs WHAT]... [VAR=VALUE]...
# The VAR=VALUEs go to make. Its data go to a directory under BUILD_DIR, removed at the end.
set -uo pipefail
src=$1 build=$2 target=$3 tags=$4
shift 4
vars=()
while [ $# -gt 0 ]; do
  if [ "$1" != --needs ]; then
    vars+=("$1")
    shift
    continue
  fi
  what=$2
  shift 2
  case $what in
    root) [ "$(id -u)" = 0 ] || { echo "skip: make $target needs root"; exit 77; } ;;
    /*) [ -e "$what" ] || { echo "skip: make $target needs $what"; exit 77; } ;;
    *) command -v "$what" >/dev/null || { echo "skip: make $target needs $what (make deps installs it)"; exit 77; } ;;
  esac
done

abs_build=$(cd "$src" && cd "$build" && pwd) || exit 1
work=$(mktemp -d "$abs_build/bench-smoke-$target.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# The benchmarks' data directories (defaults under /var/tmp or the source tree).
export SLUICE_BENCH_DIR=$work BENCH_HW_DIR=$work F4_DIR=$work/f4
# A make that runs ctest (make test) passes its jobserver down; this make runs on its own.
unset MAKEFLAGS MFLAGS MAKELEVEL
start=$(date +%s)
make -C "$src" --no-print-directory "$target" BUILD="$build" OUT="$work/out" BENCH_SMOKE=1 "${vars[@]}" \
  >"$work/log" 2>&1
rc=$?
echo "make $target BENCH_SMOKE=1 ${vars[*]}: exit $rc after $(($(date +%s) - start)) s"

why=$(grep -m1 -E '^[^ ]+ cannot be built here:|^RESULT [^ ]+ skipped' "$work/log")
if [ -n "$why" ]; then
  echo "skip: $why"
  exit 77
fi
missing=()
for tag in $tags; do
  line=$(grep -m1 -E "^RESULT $tag( |$)" "$work/log") || { missing+=("$tag"); continue; }
  echo "$line"
done
if [ "$rc" != 0 ] || [ ${#missing[@]} != 0 ]; then
  [ ${#missing[@]} = 0 ] || echo "FAIL: no RESULT line for ${missing[*]}"
  [ "$rc" = 0 ] || echo "FAIL: make $target exited $rc"
  echo "--- the last lines of its output:"
  tail -40 "$work/log"
  exit 1
fi
echo "ok: make $target BENCH_SMOKE=1"
