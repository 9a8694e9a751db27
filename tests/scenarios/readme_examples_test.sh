#!/usr/bin/env bash
# Issue 49: every CLI example of README.md runs (ctest cli.readme_examples).
# The examples are read from README.md itself: every line of its ```sh blocks
# (continuation lines joined, comments dropped) and its ```lua blocks. Each
# line whose command is `build/sluice ...`, `mpirun ...`, `srun ...` or
# `fio ...` is run, build/sluice replaced by SLUICE and /mnt/sluice by a
# temporary folder, or is skipped for a reason this script states: a line
# that is neither (a new kind of example) fails the test, and so does a skip
# entry below that no README line matches any more.
#
# Every example runs in one work folder, in README order, with a timeout:
# lua_scripts links to the repository's, sim/profiles is a copy of the
# repository's (`sluice calibrate` reads default.json and writes mine.json
# there), and the README's placeholders are made first:
#   x.lua                          a small study written below
#   sim/results.json hw/results.json   x.lua run with --backend sim / hw
#   fio.json elbencho.csv          fixtures of tests/import/fixtures
#   machine.xml                    tests/fuzz/corpus/hwloc_xml/sample0.xml
#   out/*/results.json             each run's out/results.json, also kept as
#                                  out/<its scenario>/results.json
#   mine/                          made by the README's own `sluice import`
# Examples run at their README size except (measured on the 2-core VM):
#   calibrate_links.lua: + --set files=2 --repeats 1 (63 s as written, 3
#     measurements of 4 files per point; 11 s so)
#   netns-hosts ... beeond_azure_sweep.lua --backend cluster: + --set
#     files=24 --set sizes=1MiB --set threads=1,2 --set more_meta=2 (as
#     written 12,800 files of up to 64 MiB at up to 128 threads per node
#     through 4 netns hosts: hours; cluster.study's size, 5 s)
# The tour's `sluice run lua_scripts/beeond_azure_sweep.lua ...` runs as
# written (52 s on the idle 2-core VM, 84 s of CPU); the whole test takes
# about 3 minutes there.
# A ```lua block runs as `sluice run` (after the sh blocks above it, so mine/
# exists): it must be a whole study.
# Lines that need root and network namespaces (--backend emulate,
# netns-hosts, mount, fio against the mount, umount), mpirun or SimGrid are
# skipped, saying why, where those are missing. Exit 0: every example that
# could run passed; 1: one failed (or the README has a line this script does
# not know); 77: none could run here.
# Usage: readme_examples_test.sh SLUICE (README=PATH reads another README).
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
readme=${README:-$repo/README.md}
[ -f "$readme" ] || { echo "FAIL: no $readme"; exit 1; }
readme=$(cd "$(dirname "$readme")" && pwd)/$(basename "$readme")
tmp=$(mktemp -d /tmp/sluice-readme.XXXXXX)
work="$tmp/work"
mnt=
mount_pid=
# shellcheck source=tests/mount/mount_lib.sh
source "$repo/tests/mount/mount_lib.sh"
trap 'cleanup_mount; rm -rf "$tmp"' EXIT
# As root, Open MPI needs its run-as-root consent, and a 2-core machine needs
# oversubscription for 4 ranks: given through Open MPI's environment, not by
# changing the lines (as readme_mpi_test.sh does).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
limit_s=240  # per example

# Lines not run here, each with its reason (an extended regex over the joined
# line, build/sluice as written). An entry no line matches fails the test.
skip_re=(
  '^make test$'
  '^make run$'
  '^srun .*build/sluice '
  '^mpirun .*build/sluice run lua_scripts/file_sweep\.lua --backend cluster'
)
skip_why=(
  "CI's own command (.ci/run runs make test, which runs this test)"
  "builds build/ (make deps, configure, cmake --build) and runs study 2 (study 2 runs here as the tour's first line)"
  "needs a Slurm allocation of 4 nodes with ib0 and /local/nvme"
  "run as written by ctest cli.readme_mpi (tests/scenarios/readme_mpi_test.sh)"
)
skip_used=()
# Arguments appended to a line (regex over the line as written, arguments, why).
more_re=(
  'build/sluice calibrate lua_scripts/calibrate_links\.lua'
  '^build/sluice netns-hosts .*beeond_azure_sweep\.lua --backend cluster'
)
more_args=(
  "--set files=2 --repeats 1"
  "--set files=24 --set sizes=1MiB --set threads=1,2 --set more_meta=2"
)
more_why=(
  "63 s as written on 2 cores"
  "the full study through 4 netns hosts would take hours"
)

# Why a kind of example cannot run here ("" when it can).
netns_why=$(
  if [ "$(id -u)" != 0 ]; then echo "needs root (network namespaces)"; exit; fi
  command -v ip >/dev/null || { echo "needs ip (iproute2)"; exit; }
  probe="sluice-readme-probe-$$"
  ip netns add "$probe" 2>/dev/null || { echo "ip netns add is not permitted here"; exit; }
  ip netns delete "$probe"
  [ -x "$(dirname "$sluice")/sluice-node" ] || echo "no sluice-node next to $sluice"
)
mpirun_why=$(command -v mpirun >/dev/null || echo "needs mpirun (openmpi-bin)")
fio_why=$(command -v fio >/dev/null || echo "needs fio")
sim_why=$("$sluice" --version | grep -q "SIMGRID yes" || echo "this build has no SimGrid (--backend sim)")
fuse_why=$(mount_skip_reason)

# The examples: "LINE<TAB>sh<TAB>COMMAND LINE" or "LINE<TAB>lua<TAB>FILE".
mkdir -p "$work"
awk -v dir="$tmp" '
  /^```sh[[:space:]]*$/ { insh = 1; next }
  /^```lua[[:space:]]*$/ { inlua = 1; n++; file = dir "/readme_lua_" n ".lua"; printf "" > file; start = NR + 1; next }
  /^```/ {
    if (inlua) { close(file); print start "\tlua\t" file }
    if (insh && cont != "") print first "\tsh\t" cont
    insh = 0; inlua = 0; cont = ""; next
  }
  inlua { print > file; next }
  insh {
    line = $0
    if (cont == "") {
      if (line ~ /^[[:space:]]*(#|$)/) next
      first = NR
    } else {
      sub(/^[[:space:]]+/, "", line)
    }
    if (line ~ /\\[[:space:]]*$/) { sub(/[[:space:]]*\\[[:space:]]*$/, "", line); cont = cont line " "; next }
    print first "\tsh\t" cont line
    cont = ""
  }
' "$readme" >"$tmp/examples"
mapfile -t examples <"$tmp/examples"
[ "${#examples[@]}" -gt 0 ] || { echo "FAIL: no examples found in $readme"; exit 1; }

# The placeholders.
cd "$work" || exit 1
ln -s "$repo/lua_scripts" lua_scripts
mkdir -p sim mnt
cp -r "$repo/sim/profiles" sim/profiles
cp "$repo/tests/import/fixtures/fio_randread_psync_2jobs.json" fio.json || exit 1
cp "$repo/tests/import/fixtures/elbencho_dir_2runs.csv" elbencho.csv || exit 1
cp "$repo/tests/fuzz/corpus/hwloc_xml/sample0.xml" machine.xml || exit 1
cat >x.lua <<'LUA'
-- readme_examples_test.sh: the README's x.lua, a small study that runs on every backend.
local sl = require "sluice"
local P = sl.params{ files = {"files, all nodes together", 16}, size = {"file size", "256KiB"} }
local cluster = sl.cluster{ nodes = 2, node = sl.machines.generic{ gpus = 0, nics = 1, nvmes = 1 },
                            fabric = sl.fabric.ethernet{ gbps = 10 } }
local fs = sl.fs.beeond{ meta_servers = 1, stripe = { chunk = "128KiB", count = 2 } }
local res = sl.run{ cluster = cluster, fs = fs, seed = 1,
                    workload = sl.workload.file_sweep{ op = {"write", "read"}, files = P.files, size = P.size },
                    sweep = { threads = {1, 2} } }
sl.report{ res, title = "x.lua" }
LUA
fail=0
if [ -z "$sim_why" ]; then
  timeout -k 10 "$limit_s" "$sluice" run x.lua --backend sim --out sim/ >"$tmp/setup_sim.log" 2>&1 </dev/null ||
    { echo "FAIL: setup: sluice run x.lua --backend sim --out sim/"; tail -20 "$tmp/setup_sim.log"; fail=1; }
fi
timeout -k 10 "$limit_s" "$sluice" run x.lua --backend hw --out hw/ >"$tmp/setup_hw.log" 2>&1 </dev/null ||
  { echo "FAIL: setup: sluice run x.lua --backend hw --out hw/"; tail -20 "$tmp/setup_hw.log"; fail=1; }

# out/results.json, as the runs leave it, also as out/<its scenario>/results.json (for out/*/results.json).
collect_out() {
  [ -f out/results.json ] || return 0
  local scenario
  scenario=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["scenario"])' out/results.json) || return 0
  mkdir -p "out/$scenario" && cp out/results.json "out/$scenario/results.json"
}

ran=0 skipped=0 failed=0
mount_ready=  # 1 once the README's mount is up
say_skip() { echo "SKIP (README:$1): $2 -- $3"; skipped=$((skipped + 1)); }
say_fail() { echo "FAIL (README:$1): $2 -- $3"; failed=$((failed + 1)); fail=1; }
# run_example LINE SHOWN LOG CMD: runs CMD (bash) in the work folder, bounded; 0 wanted.
run_example() {
  local lineno=$1 shown=$2 log=$3 cmd=$4 t0 rc
  t0=$(date +%s)
  timeout -k 10 "$limit_s" bash -c "$cmd" >"$log" 2>&1 </dev/null
  rc=$?
  ran=$((ran + 1))
  if [ "$rc" = 0 ]; then
    echo "ok (README:$lineno, $(($(date +%s) - t0)) s): $shown"
    collect_out
  else
    say_fail "$lineno" "$shown" "exit $rc$([ "$rc" = 124 ] && echo " (timed out after $limit_s s)")"
    grep -m5 -E '^(verify|fio): ' "$log"  # fio's first errors, above its long report
    # A multi-node run's node log lines (faults, warnings, errors) say why a
    # run failed where its last lines only say that it did.
    grep -E '^\[node [0-9]+\] .*( warn | error |fault: )' "$log" | tail -40
    tail -15 "$log"
  fi
  return "$rc"
}

n=0
for example in "${examples[@]}"; do
  n=$((n + 1))
  IFS=$'\t' read -r lineno kind text <<<"$example"
  log="$tmp/example_$n.log"
  if [ "$kind" = lua ]; then
    shown="the \`\`\`lua study at README:$lineno"
    if [ -n "$sim_why" ]; then say_skip "$lineno" "$shown" "$sim_why"; continue; fi
    cp "$text" "readme_lua_$n.lua"
    run_example "$lineno" "$shown" "$log" "$(printf '%q run readme_lua_%s.lua --out lua_%s' "$sluice" "$n" "$n")"
    continue
  fi
  # A comment naming a further command (`topo import machine.xml`): run it as well.
  comment=$(sed -nE 's/^.*[[:space:]]#[[:space:]].*(topo import [^ ;]+).*$/\1/p' <<<"$text")
  line=$(sed -E 's/[[:space:]]+#[[:space:]].*$//; s/[[:space:]]+$//' <<<"$text")
  todo=("$line")
  [ -n "$comment" ] && todo+=("build/sluice $comment")
  for line in "${todo[@]}"; do
    i=-1 why=
    for j in "${!skip_re[@]}"; do
      if grep -qE -- "${skip_re[$j]}" <<<"$line"; then i=$j; break; fi
    done
    if [ "$i" -ge 0 ]; then
      skip_used[i]=1
      say_skip "$lineno" "$line" "${skip_why[$i]}"
      continue
    fi
    background=
    if [[ $line =~ [[:space:]]\&$ ]]; then background=1; fi
    read -r w1 w2 _ <<<"$line"
    case "$w1" in
      build/sluice | mpirun | fio) ;;
      *)
        say_fail "$lineno" "$line" "a command this test neither runs nor skips (add it to skip_re or run it)"
        continue
        ;;
    esac
    # What the line needs.
    if [[ $line == *"--backend emulate"* || $line == *netns-hosts* ]]; then why=$netns_why; fi
    if [ -z "$why" ] && [[ $line == *mpirun* ]]; then why=$mpirun_why; fi
    if [ -z "$why" ] && [ "$w1" = build/sluice ]; then
      case "$w2" in
        mount) why=$fuse_why ;;
        umount) [ -n "$mount_ready" ] || why="the mount above did not run" ;;
        calibrate) why=$sim_why ;;
        compare) [[ $line == *sim/results.json* ]] && why=$sim_why ;;
        run) [[ $line =~ --backend\ (hw|emulate|cluster) ]] || why=$sim_why ;;
      esac
    fi
    if [ -z "$why" ] && [ "$w1" = fio ]; then
      why=$fio_why
      if [ -z "$why" ] && [[ $line == */mnt/sluice* ]] && [ -z "$mount_ready" ]; then
        why="the mount above did not run"
      fi
    fi
    if [ -n "$why" ]; then say_skip "$lineno" "$line" "$why"; continue; fi
    # The command: build/sluice is SLUICE, /mnt/sluice a folder of the work folder.
    cmd=${line//build\/sluice/$(printf %q "$sluice")}
    cmd=${cmd//\/mnt\/sluice/$work/mnt}
    shown=$line
    for j in "${!more_re[@]}"; do
      if grep -qE -- "${more_re[$j]}" <<<"$line"; then
        cmd="$cmd ${more_args[$j]}"
        shown="$line [+ ${more_args[$j]}: ${more_why[$j]}]"
      fi
    done
    if [ -n "$background" ]; then
      # A mount: in the background until it says it is ready (120 s at most).
      cmd=${cmd%&}
      mnt="$work/mnt"
      mount_log=$log
      bash -c "exec $cmd" >"$log" 2>&1 </dev/null &
      mount_pid=$!
      ran=$((ran + 1))
      for _ in $(seq 1 240); do
        grep -qs "is ready" "$log" && break
        kill -0 "$mount_pid" 2>/dev/null || break
        sleep 0.5
      done
      if grep -qs "is ready" "$log"; then
        echo "ok (README:$lineno): $shown (ready in the background)"
        mount_ready=1
      else
        say_fail "$lineno" "$shown" "not ready in 120 s"
        tail -20 "$log"
        cleanup_mount
        mount_pid=
      fi
      continue
    fi
    run_example "$lineno" "$shown" "$log" "$cmd"
    if [ "$w1" = build/sluice ] && [ "$w2" = umount ] && [ -n "$mount_pid" ]; then
      # The mount in the background ends, cleanly, once unmounted.
      wait_exit "$mount_pid" 60
      rc=$?
      mount_pid=
      mount_ready=
      if [ "$rc" = 0 ]; then
        echo "ok: the mount in the background ended (exit 0) after the unmount"
      else
        say_fail "$lineno" "the mount in the background" "exit $rc after the unmount"
        tail -20 "$mount_log"
      fi
    fi
  done
done
for j in "${!skip_re[@]}"; do
  if [ -z "${skip_used[$j]:-}" ]; then
    echo "FAIL: skip entry '${skip_re[$j]}' matches no README line: remove it"
    fail=1
  fi
done
if [ -n "$mount_pid" ]; then
  echo "FAIL: the mount is still running at the end (no umount line ran)"
  fail=1
fi

echo "README examples: $ran run, $failed failed, $skipped skipped ($SECONDS s)"
[ "$fail" = 0 ] || exit 1
[ "$ran" -gt 0 ] || { echo "SKIP: no README example could run here"; exit 77; }
exit 0
