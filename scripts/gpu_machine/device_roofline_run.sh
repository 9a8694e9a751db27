#!/usr/bin/env bash
# make bench-roofline at full scale (issue 48 item 2, P13: 300 seeded
# configurations of tests/physics/roofline.lua) on the GPU machine's 16 cores,
# the points 16 at once; SIM_MODE (default fluid, as make bench-roofline: the
# roofline checks aggregate rates, and auto runs a saturated one-client point
# per chunk for its per-flow distortion, configuration 38 alone past the
# 10-minute call) is sluice run --sim-mode. The simulation does not use the GPU.
# Here:       bash scripts/gpu_machine/device_roofline_run.sh --pack   (sluice + its libraries into .carry/sluice_sim)
# On device:  bash scripts/gpu_machine/device_roofline_run.sh          (carry .carry/sluice_sim; writes $OUT/roofline.tar.xz)
# COUNT (default 300), FIRST (default 0) and SEED (default 1) as roofline.sh takes them.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
# shellcheck source=scripts/gpu_machine/carry_lib.sh
source "$ROOT/scripts/gpu_machine/carry_lib.sh"
carried_sluice_sim "$ROOT" "${1:-}"
out=${OUT:-out}
SIM_MODE=${SIM_MODE:-fluid} bash tests/physics/roofline.sh "$(command -v sluice)" "$out/roofline" full "${COUNT:-300}" \
  "${SEED:-1}"
rc=$?
archive_out "$out" roofline
exit $rc
