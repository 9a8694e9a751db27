#!/usr/bin/env bash
# make bench-fidelity's studies on the GPU machine's 16 cores (issue 19 item
# 2): the 2-core build machine needs hours for the seed sizes, the device
# host minutes. The simulation does not use the GPU; the host's cores run
# the points in parallel (one child process per point, --jobs = cores).
# Here:       bash scripts/gpu_machine/device_fidelity_run.sh --pack   (sluice + its libraries into .carry/sluice_sim)
# On device:  bash scripts/gpu_machine/device_fidelity_run.sh          (carry .carry/sluice_sim; writes $OUT/fidelity)
# FIDELITY_STUDIES picks studies as for scripts/bench_fidelity.sh (default:
# six of the eight; docs/figures.md's F3 line ran "beeond_azure_sweep
# nvmesh_bandwidth_sharing" in a second call: all eight took 549 s on
# 2026-11-29, too close to one call's 600 s).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
# shellcheck source=scripts/gpu_machine/carry_lib.sh
source "$ROOT/scripts/gpu_machine/carry_lib.sh"
carried_sluice_sim "$ROOT" "${1:-}"
export FIDELITY_STUDIES=${FIDELITY_STUDIES:-"beegfs_gds_vs_bounce dne_metadata_sharding gpu_rdma_recorder beeond_stage_in cosmoflow_epoch checkpoint_burst"}
export FIDELITY_STUDY_TIMEOUT_S=${FIDELITY_STUDY_TIMEOUT_S:-520}
SLUICE=$(command -v sluice) FIDELITY_OUT=${OUT:-out}/fidelity bash scripts/bench_fidelity.sh
rc=$?
# The report's summary beside the archive of everything.
out=${OUT:-out}
cp "$out/fidelity/fidelity.md" "$out/fidelity.md"
archive_out "$out" fidelity
exit $rc
