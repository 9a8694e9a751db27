#!/bin/bash
# The F4 calibration command (issue 22), in one place for make bench-f4,
# scripts/gpu_machine/device_storage_run.sh and scripts/f4_stripes.sh:
# lua_scripts/calibrate_disk.lua under fio, the drive's channel count from the
# fit points (--estimate-channels), then the fields of scripts/f4_fit_params.txt
# fitted from sim/profiles/disk_fit_start.json. Prints RESULT F4 median_err=.. p90_err=..
#   scripts/f4_calibrate.sh --out DIR [more sluice calibrate arguments, e.g. --fio scripts/fio_replay.sh]
# SLUICE: the sluice binary (build/sluice); F4_DIR: fio's data directory, on the
# drive to model (/var/tmp/sluice-f4; a replay needs the stored run's); F4_REPEATS (3);
# F4_PROFILE_DIR: where disk_fit_start.json is read (sim/profiles); F4_TIMEOUT_S (3600).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
mapfile -t params < <(grep -v '^#' "$root/scripts/f4_fit_params.txt")
fit_flags=()
for p in "${params[@]}"; do fit_flags+=(--fit-param "$p"); done
exec timeout "${F4_TIMEOUT_S:-3600}" "${SLUICE:-$root/build/sluice}" calibrate "$root/lua_scripts/calibrate_disk.lua" \
  --backend fio --fio-dir "${F4_DIR:-/var/tmp/sluice-f4}" --result F4 --repeats "${F4_REPEATS:-3}" \
  --profile-dir "${F4_PROFILE_DIR:-$root/sim/profiles}" --base-profile disk_fit_start --estimate-channels \
  "${fit_flags[@]}" "$@"
