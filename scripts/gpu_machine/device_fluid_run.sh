#!/usr/bin/env bash
# make bench-sim's P12 and P12b (issue 50, scripts/bench_fluid.sh) on the GPU
# machine's host: each run on one of its 16 cores, all at once (P12_PARALLEL):
# issue 48's 18 + 50 read per chunk and three times in fluid mode, and the
# 200 + 600 read in fluid mode. The simulation does not use the GPU.
# Here:       bash scripts/gpu_machine/device_fluid_run.sh --pack   (sluice + its libraries into .carry/sluice_sim)
# On device:  bash scripts/gpu_machine/device_fluid_run.sh          (carry .carry/sluice_sim; writes $OUT/p12)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
# shellcheck source=scripts/gpu_machine/carry_lib.sh
source "$ROOT/scripts/gpu_machine/carry_lib.sh"
carried_sluice_sim "$ROOT" "${1:-}"
out=${OUT:-out}
SLUICE=$(command -v sluice) P12_OUT=$out/p12 P12_PARALLEL=1 bash scripts/bench_fluid.sh
rc=$?
archive_out "$out" p12
exit $rc
