#!/bin/bash
# make soak-cluster (issue 18, R2): SOAK_RUNS (default 50) seeded runs of
# tests/scenarios/scripts/cluster_soak.lua with `--backend cluster` under
# mpirun, 7 ranks: a buddy-mirrored file system whose server processes (a
# storage server, or the metadata server on its RocksDB store) are killed
# with SIGKILL and started again from their storage root, SOAK_KILLS
# (default 2) times per run, at seeded times, while a client writes and
# reads back every byte. With SOAK_NETNS=1 (root) the 7 ranks are
# network-namespace hosts with shaped links (sluice netns-hosts, its launch
# agent); else they share this host's loopback. With SOAK_LAUNCHER=emulate
# (root; make soak-cluster-netns) the same path runs without mpirun
# (`--backend emulate`: one rank process per netns host) and the plan adds,
# at seeded times inside the kills' span, SOAK_PARTITIONS (default 2)
# partitions of a storage node from every other node and SOAK_LOSS (default
# 0.01) packet loss on every link: nftables drops in the namespaces.
#
# Each run is counted as
#   hung     it passed SOAK_RUN_LIMIT_S (default 240 s): timeout ended it;
#   corrupt  it failed naming corrupt bytes (a CRC32C or pattern mismatch),
#            or fewer bytes were verified against the pattern than read;
#   failed_to_start  it never started: no results.json and exit 2 (sluice
#            refused it before anything ran) or a refused cluster
#            configuration in its log ("cluster config: ...", checked before
#            any node starts), or a results.json whose run failed so without
#            a byte moved; nothing was written, so nothing can be lost;
#   lost     any other failure, or fewer bytes read back than written
#            (an acknowledged write the file system no longer has);
# and the soak prints, as its last line,
#   RESULT R2 runs=N lost=L corrupt=C hung=H failed_to_start=F kills=K restarts=R meta_kills=M launcher=...
# (K and R count every server process killed and started again; M the
# metadata server's among them).
# Exit 0 only when lost, corrupt, hung and failed_to_start are all 0. Each
# run's output and results stay in SOAK_DIR (default build/soak-cluster; a
# relative one is taken from the current directory), one folder per seed.
# Usage: SLUICE=build/sluice bash scripts/soak_cluster.sh
set -u
sluice=$(cd "$(dirname "${SLUICE:-build/sluice}")" && pwd)/$(basename "${SLUICE:-build/sluice}")
here=$(cd "$(dirname "$0")/.." && pwd)
script="$here/tests/scenarios/scripts/cluster_soak.lua"
runs=${SOAK_RUNS:-50}
first_seed=${SOAK_SEED:-1}
kills=${SOAK_KILLS:-2}
limit_s=${SOAK_RUN_LIMIT_S:-240}
dir=${SOAK_DIR:-$here/build/soak-cluster}
[ "${dir#/}" != "$dir" ] || dir="$PWD/$dir"  # the runs' --storage-root and --out: absolute
launcher=${SOAK_LAUNCHER:-mpi}
[ -x "$sluice" ] || { echo "soak-cluster: no sluice at $sluice (build it: make build)"; exit 2; }
if [ "$launcher" = emulate ]; then
  [ "$(id -u)" = 0 ] || { echo "soak-cluster: SOAK_LAUNCHER=emulate needs root (network namespaces)"; exit 2; }
else
  command -v mpirun >/dev/null || { echo "soak-cluster: mpirun is not installed (openmpi-bin)"; exit 2; }
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rm -rf "$dir" && mkdir -p "$dir/storage"

lost=0 corrupt=0 hung=0 failed_to_start=0 all_kills=0 all_restarts=0 all_meta_kills=0
for ((i = 0; i < runs; ++i)); do
  seed=$((first_seed + i))
  out="$dir/seed-$seed"
  words=(run "$script" --backend cluster --set "seed=$seed" --set "kills=$kills" --storage-root "$dir/storage"
         --out "$out")
  if [ "$launcher" = emulate ]; then
    words[3]=emulate
    timeout "$limit_s" "$sluice" "${words[@]}" --set "partitions=${SOAK_PARTITIONS:-2}" \
      --set "loss=${SOAK_LOSS:-0.01}" >"$dir/seed-$seed.log" 2>&1
  elif [ "${SOAK_NETNS:-0}" = 1 ]; then
    timeout "$limit_s" "$sluice" netns-hosts --nodes 7 --link 1gbit -- mpirun -np 7 --hostfile '{hostfile}' \
      --mca plm_rsh_agent '{agent}' "$sluice" "${words[@]}" >"$dir/seed-$seed.log" 2>&1
  else
    timeout "$limit_s" mpirun -np 7 "$sluice" "${words[@]}" >"$dir/seed-$seed.log" 2>&1
  fi
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    verdict="hung"
  else
    verdict=$(python3 - "$out/results.json" "$rc" "$dir/seed-$seed.log" <<'PY'
import json, sys
REFUSED = "cluster config:"  # a refused configuration: checked before any node starts
log = open(sys.argv[3], errors="replace").read().splitlines()
said = [l for l in log if REFUSED in l] or [l for l in log if l.strip()][-1:] or ["(no output)"]
try:
    run = json.load(open(sys.argv[1]))["runs"][0]
except Exception as e:  # no results: refused up front (exit 2), or the run did not get that far
    if sys.argv[2] == "2" or any(REFUSED in l for l in log):
        print("failed_to_start 0 0 0 exit %s, no results.json: %s" % (sys.argv[2], said[0].strip()[:300]))
    else:
        print("lost 0 0 0 exit %s, no results.json (%s): %s" % (sys.argv[2], e, said[0].strip()[:300]))
    sys.exit(0)
c = run.get("counters", {})
meta_kills = int(c.get("faults.meta_process_kills", 0))
kills = int(c.get("faults.storage_process_kills", 0)) + meta_kills
cut = int(c.get("faults.link_partition_packets", 0)) + int(c.get("faults.link_loss_packets", 0))
restarts = int(c.get("faults.storage_process_restarts", 0)) + int(c.get("faults.meta_process_restarts", 0))
phases = {p["phase"]: p["bytes"] for p in run.get("phases", [])}
verified = int(c.get("file_sweep.read.verified_bytes", 0))
error = run.get("error") or ""
if not run.get("ok") and REFUSED in error and not any(phases.values()):
    print("failed_to_start", kills, restarts, meta_kills, error[:300])
elif not run.get("ok"):
    kind = "corrupt" if any(w in error.lower() for w in ("corrupt", "mismatch", "crc32c")) else "lost"
    print(kind, kills, restarts, meta_kills, error[:300])
elif phases.get("read", 0) < phases.get("write", 0):
    print("lost", kills, restarts, meta_kills,
          "read back %d of %d bytes" % (phases.get("read", 0), phases.get("write", 0)))
elif verified < phases.get("read", 0):
    print("corrupt", kills, restarts, meta_kills, "%d of %d bytes verified" % (verified, phases.get("read", 0)))
else:
    print("ok", kills, restarts, meta_kills,
          "%d bytes written, read back and verified; %d packets dropped on links" % (phases.get("write", 0), cut))
PY
)
  fi
  set -- $verdict
  case "$1" in
    hung) hung=$((hung + 1)) ;;
    lost) lost=$((lost + 1)) ;;
    corrupt) corrupt=$((corrupt + 1)) ;;
    failed_to_start) failed_to_start=$((failed_to_start + 1)) ;;
  esac
  [ $# -ge 4 ] && all_kills=$((all_kills + $2)) && all_restarts=$((all_restarts + $3)) &&
    all_meta_kills=$((all_meta_kills + $4))
  echo "seed $seed: $verdict"
  # A run that did not end ok shows what its processes said (kills, restarts,
  # warnings, errors), so a failure in CI can be diagnosed from its output.
  if [ "$1" != ok ]; then
    grep -E "process: |warn|error|FAILED" "$dir/seed-$seed.log" | grep -v "^-" | tail -n 40 | sed "s/^/  seed $seed | /"
  fi
done
echo "RESULT R2 runs=$runs lost=$lost corrupt=$corrupt hung=$hung failed_to_start=$failed_to_start kills=$all_kills restarts=$all_restarts meta_kills=$all_meta_kills launcher=$launcher"
[ "$lost" = 0 ] && [ "$corrupt" = 0 ] && [ "$hung" = 0 ] && [ "$failed_to_start" = 0 ]
