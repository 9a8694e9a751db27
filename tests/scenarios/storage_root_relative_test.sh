#!/usr/bin/env bash
# Issue 47 item 1: `sluice run --storage-root DIR` with a relative DIR (as
# make soak-cluster passed build/soak-cluster/storage) is taken from the
# current directory, so the nodes' cluster config (whose storage_root must be
# absolute) gets an absolute one: before, every point of --backend cluster
# and --backend emulate failed with "cluster config: storage_root: must be an
# absolute path". A small study (3 nodes, 4 files of 1 MiB a rank) on
#   1. --backend cluster under mpirun -np 3 (where mpirun is installed);
#   2. --backend emulate (as root: network namespaces);
# each must be ok, its deployment's storage_root under the absolute folder, and
# nothing left in it. Exit 77 (skipped): neither mpirun nor root.
# Usage: storage_root_relative_test.sh SLUICE
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
script="$(cd "$(dirname "$0")" && pwd)/scripts/cluster_ranks.lua"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
mkdir storage
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail=0 ran=0
check() {  # check NAME: NAME/results.json's run ok, storage_root absolute, storage/ empty
  local name=$1
  if ! python3 - "$name/results.json" "$tmp/storage" <<'PY'; then
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["ok"], run.get("error")
root = run["deployment"]["storage_root"]
assert root.startswith(sys.argv[2]), "deployment storage_root %r is not under %r" % (root, sys.argv[2])
PY
    tail -5 "$name.txt"
    echo "FAIL: $name: a relative --storage-root did not run"
    fail=1
    return
  fi
  [ -z "$(ls -A storage 2>/dev/null)" ] || { echo "FAIL: $name left $(ls -A storage) in the storage root"; fail=1; }
  mkdir -p storage
  echo "ok: $name with --storage-root storage"
}
args=(run "$script" --set ranks=1 --meta-store memory --storage-root storage)
if command -v mpirun >/dev/null && [ -x "$(dirname "$sluice")/sluice-node" ]; then
  ran=1
  timeout 120 mpirun -np 3 "$sluice" "${args[@]}" --backend cluster --out cluster >cluster.txt 2>&1
  check cluster
else
  echo "skipped: --backend cluster (no mpirun, or no sluice-node next to $sluice)"
fi
if [ "$(id -u)" = 0 ]; then
  ran=1
  timeout 120 "$sluice" "${args[@]}" --backend emulate --out emulate >emulate.txt 2>&1
  check emulate
else
  echo "skipped: --backend emulate (needs root)"
fi
[ "$ran" = 1 ] || { echo "SKIP: neither mpirun nor root"; exit 77; }
exit "$fail"
