#!/usr/bin/env bash
# Issue 47 item 1: scripts/soak_cluster.sh (make soak-cluster) given a
# relative SOAK_DIR, as the Makefile passes it (build/soak-cluster), and a
# run that never started. A fake sluice stands in for the real one (and a
# fake mpirun for Open MPI's: one process, not 7), so the test needs neither
# mpirun nor root and takes a second:
#   1. the fake refuses a relative --storage-root as the ranks' cluster
#      config did (a results.json whose run failed with "cluster config:
#      storage_root: must be an absolute path", exit 1) and else writes a
#      good results.json: the soak must hand it an absolute folder and pass;
#   2. the fake refuses every run so (FAKE_REFUSE=config), then
#   3. with a usage error up front (FAKE_REFUSE=usage: exit 2, no results):
#      the soak must count each as failed_to_start (not lost), print it in
#      the RESULT line and fail.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work"
cat >"$tmp/bin/mpirun" <<'EOF'
#!/bin/bash
# mpirun -np N PROGRAM ARGS...: PROGRAM once.
shift 2
exec "$@"
EOF
cat >"$tmp/bin/sluice" <<'EOF'
#!/bin/bash
# The refusal of sluice run --backend cluster, or a good run's results.json.
root="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --storage-root) root=$2; shift ;;
    --out) out=$2; shift ;;
  esac
  shift
done
if [ "${FAKE_REFUSE:-}" = usage ]; then
  echo "sluice: --shared-secret-file: /x is readable by others (chmod 600 it)" >&2
  exit 2
fi
mkdir -p "$out"
if [ "${FAKE_REFUSE:-}" = config ] || [ "${root#/}" = "$root" ]; then
  echo "   0 cluster ... FAILED: cluster: rank 0: cluster config: storage_root: must be an absolute path"
  cat >"$out/results.json" <<'JSON'
{"runs": [{"ok": false, "error": "cluster: rank 0: cluster config: storage_root: must be an absolute path",
  "phases": [], "counters": {}}]}
JSON
  exit 1
fi
cat >"$out/results.json" <<'JSON'
{"runs": [{"ok": true, "error": "",
  "phases": [{"phase": "write", "bytes": 1024}, {"phase": "read", "bytes": 1024}],
  "counters": {"faults.storage_process_kills": 2, "faults.storage_process_restarts": 2,
               "file_sweep.read.verified_bytes": 1024}}]}
JSON
EOF
chmod +x "$tmp/bin/mpirun" "$tmp/bin/sluice"
fail=0
soak() {  # soak LOG [VAR=value...]: the soak in $tmp/work with SOAK_DIR=soak (relative)
  local log=$1
  shift
  (cd "$tmp/work" && env PATH="$tmp/bin:$PATH" SLUICE="$tmp/bin/sluice" SOAK_DIR=soak SOAK_RUNS=2 \
    SOAK_LAUNCHER=mpi "$@" bash "$here/scripts/soak_cluster.sh") >"$tmp/$log" 2>&1
}

soak relative.log
rc=$?
cat "$tmp/relative.log"
if [ "$rc" != 0 ] || ! grep -q '^RESULT R2 runs=2 lost=0 corrupt=0 hung=0 failed_to_start=0 kills=4 ' \
  "$tmp/relative.log"; then
  echo "FAIL: a relative SOAK_DIR did not give the runs an absolute storage root (exit $rc)"
  fail=1
fi

for refusal in config usage; do
  soak "$refusal.log" FAKE_REFUSE=$refusal
  rc=$?
  cat "$tmp/$refusal.log"
  if ! grep -q '^RESULT R2 runs=2 lost=0 corrupt=0 hung=0 failed_to_start=2 ' "$tmp/$refusal.log"; then
    echo "FAIL: runs refused ($refusal) before they started were not counted failed_to_start (or were counted lost)"
    fail=1
  fi
  grep -q '^seed 1: failed_to_start .*\(must be an absolute path\|readable by others\)' "$tmp/$refusal.log" ||
    { echo "FAIL: seed 1's line does not give the refusal ($refusal)"; fail=1; }
  [ "$rc" != 0 ] || { echo "FAIL: the soak passed although no run started ($refusal)"; fail=1; }
done
[ "$fail" = 0 ] && echo "ok: a relative SOAK_DIR is resolved; refused runs are failed_to_start, not lost"
exit "$fail"
