#!/usr/bin/env bash
# Issue 18 on the GPU machine: a study whose clients read into GPU memory, on
# the multi-process path (`sluice run --backend emulate`: one rank process per
# node in its network namespace, the cluster path's own code), beside the
# same study in simulation.
#
#   scripts/gpu_machine/device_cluster_run.sh --pack   (here)
#       packs sluice (built with CUDA in $BUILD, default build/) into
#       .carry/sluice_cluster, and iproute2's ip and tc (the GPU machine may
#       lack them) into .carry/ip and .carry/tc, each with its shared
#       libraries (scripts/gpu_machine/carry_lib.sh).
#   scripts/gpu_machine/device_cluster_run.sh          (there: device tool, carry
#                                        [".carry/sluice_cluster", ".carry/ip", ".carry/tc"])
#       says whether network namespaces can be made; if so runs study 1
#       (beegfs_gds_vs_bounce.lua, reduced) with --backend emulate and
#       --backend sim, compares them, and leaves everything in $OUT (default
#       ./out/device_cluster).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

# shellcheck source=scripts/gpu_machine/carry_lib.sh
source "$ROOT/scripts/gpu_machine/carry_lib.sh"
if [ "${1:-}" = "--pack" ]; then
  carry_binary "${BUILD:-$ROOT/build}/sluice" "$ROOT/.carry/sluice_cluster" || exit 1
  carry_binary "$(command -v ip)" "$ROOT/.carry/ip" || exit 1
  carry_binary "$(command -v tc)" "$ROOT/.carry/tc" || exit 1
  exit 0
fi

OUT=${OUT:-$ROOT/out/device_cluster}
mkdir -p "$OUT"
use_carried "$ROOT" sluice_cluster/sluice ip tc || exit 2
sets=(--set gpus=1 --set sizes=1MiB --set files=16 --set file_size=4MiB)
{
  echo "== host: $(nproc) cores; $(nvidia-smi -L 2>&1 | head -2 | tr '\n' ' '); $(uname -sr); $(date -u +%FT%H:%MZ)"
  echo "== ip: $(command -v ip), tc: $(command -v tc)"
  if ip netns add sluice-emu-probe 2>&1; then
    ip netns delete sluice-emu-probe
    timeout 200 sluice run lua_scripts/beegfs_gds_vs_bounce.lua --backend sim "${sets[@]}" --out "$OUT/sim" \
      >"$OUT/sim.txt" 2>&1
    echo "sim exit $?"
    timeout 300 sluice run lua_scripts/beegfs_gds_vs_bounce.lua --backend emulate --meta-store memory "${sets[@]}" \
      --out "$OUT/emulate" >"$OUT/emulate.txt" 2>&1
    echo "emulate exit $?"
    tail -25 "$OUT/emulate.txt"
    sluice compare "$OUT/sim/results.json" "$OUT/emulate/results.json" >"$OUT/compare.txt" 2>&1
    tail -3 "$OUT/compare.txt"
  else
    echo "network namespaces cannot be made here"
  fi
} 2>&1 | tee "$OUT/device_cluster.txt"
rm -rf "$CARRIED_TMP"
