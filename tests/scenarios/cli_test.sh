#!/usr/bin/env bash
# CLI behaviour: output, files written, exit codes (0 ok, 1 run failed, 2 usage/bad input/script error).
set -u
sluice="$1"
here=$(cd "$(dirname "$0")" && pwd)
scripts="$here/scripts"
schema="$here/../../analysis/results.schema.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# shellcheck source=tests/scenarios/test_lib.sh
source "$here/test_lib.sh"
expect 0 "topo show dgx_a100 writes files" -- "$sluice" topo show dgx_a100 --out "$tmp/o"
grep -q "gpu0.*mlx5_0(PXB)" "$tmp/out" || { echo "FAIL: GPU 0 ranking not shown"; fail=1; }
grep -q '"chosen_nic": "mlx5_0"' "$tmp/o/topology.json" || { echo "FAIL: topology.json lacks GPU 0's NIC"; fail=1; }
expect 2 "unknown machine" -- "$sluice" topo show no_such_machine
grep -q "neither a machine" "$tmp/err" || { echo "FAIL: unclear message"; cat "$tmp/err"; fail=1; }
printf 'this is not a topology\n' >"$tmp/bad.txt"
expect 2 "malformed nvidia-smi capture" -- "$sluice" topo import "$tmp/bad.txt"
printf '<?xml version="1.0"?><topology><object type="Machine">' >"$tmp/bad.xml"
expect 2 "truncated hwloc xml" -- "$sluice" topo import "$tmp/bad.xml"
expect 2 "missing argument" -- "$sluice" topo show
expect 2 "node out of range" -- "$sluice" topo show dgx_a100 --node 7
expect 0 "backends" -- "$sluice" backends
grep -q "SIMGRID" "$tmp/out" || { echo "FAIL: backends lacks SIMGRID"; fail=1; }
grep -qE "^  tcp +host" "$tmp/out" || { echo "FAIL: backends lacks the tcp transport"; cat "$tmp/out"; fail=1; }
grep -qE "^  posix " "$tmp/out" || { echo "FAIL: backends lacks the posix backend"; fail=1; }
expect 0 "help" -- "$sluice" --help
grep -q "run" "$tmp/out" && grep -q "describe" "$tmp/out" || { echo "FAIL: --help lacks run/describe"; fail=1; }
for cmd in run describe topo backends; do
  expect 0 "$cmd --help" -- "$sluice" $cmd --help
done

# run: a toy sweep in simulation writes results.json/results.csv and prints the table.
expect 0 "run tiny sweep" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/run" --jobs 2 --set files=8
grep -qE "file_sweep/write" "$tmp/out" || { echo "FAIL: run printed no table"; cat "$tmp/out"; fail=1; }
grep -q "seed 3" "$tmp/out" || { echo "FAIL: run did not print its seed"; fail=1; }
[ -s "$tmp/run/results.json" ] && [ -s "$tmp/run/results.csv" ] || { echo "FAIL: results files missing"; fail=1; }
head -1 "$tmp/run/results.csv" | grep -q "throughput_GB_per_s" || { echo "FAIL: csv header lacks units"; fail=1; }
[ "$(grep -c ',file_sweep,write,' "$tmp/run/results.csv")" = 2 ] || { echo "FAIL: csv wants one write row per run"; cat "$tmp/run/results.csv"; fail=1; }
grep -q '"files": "8"' "$tmp/run/results.json" || { echo "FAIL: --set files=8 not recorded"; fail=1; }
if python3 "$here/runner/validate_results.py" "$schema" "$tmp/run/results.json"; then
  echo "ok: results.json validates against the schema"
else
  echo "FAIL: results.json does not validate against analysis/results.schema.json"; fail=1
fi
# --report: the run's own report (report.md + the plot it embeds, a real SVG and PNG).
expect 0 "run --report" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/reported" --set files=8 --report
grep -q "report written: " "$tmp/out" || { echo "FAIL: run --report did not say where the report is"; cat "$tmp/out"; fail=1; }
[ -s "$tmp/reported/report.md" ] || { echo "FAIL: run --report wrote no report.md"; fail=1; }
svg=$(ls "$tmp/reported"/*.svg 2>/dev/null | head -1)
png=$(ls "$tmp/reported"/*.png 2>/dev/null | head -1)
{ [ -n "$svg" ] && grep -q "<svg" "$svg" && [ "$(stat -c %s "$svg")" -gt 2000 ]; } ||
  { echo "FAIL: run --report drew no SVG plot"; ls "$tmp/reported"; fail=1; }
{ [ -n "$png" ] && [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ]; } ||
  { echo "FAIL: run --report drew no PNG plot"; fail=1; }
grep -q "$(basename "${svg:-none}")\|$(basename "${png:-none}")" "$tmp/reported/report.md" ||
  { echo "FAIL: report.md does not embed its plot"; fail=1; }
expect 0 "run --seed overrides" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/seeded" --seed 11 --set files=4
grep -q '"seed": 11' "$tmp/seeded/results.json" || { echo "FAIL: --seed not applied"; fail=1; }
# Under ASan (make sanitize), SimGrid's context switches make the sanitizer
# runtime itself warn once on stderr; that is not sluice talking.
grep -v -e '__asan_handle_no_return' -e 'False positive error reports may follow' \
  -e 'For details see https://github.com/google/sanitizers/issues/189' "$tmp/err" > "$tmp/err.ours" || true
[ ! -s "$tmp/err.ours" ] || { echo "FAIL: run is not quiet on a non-terminal stderr"; cat "$tmp/err.ours"; fail=1; }
# --sim-coalesce overrides every run's sl.run sim_coalesce, and the results say so (issue 19).
expect 0 "run --sim-coalesce on" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/coal" --sim-coalesce on --set files=4
grep -q '"coalesce": true' "$tmp/coal/results.json" || { echo "FAIL: --sim-coalesce on not recorded"; fail=1; }
expect 2 "run --sim-coalesce with a bad value" -- "$sluice" run "$scripts/tiny_sweep.lua" --sim-coalesce maybe
grep -q "sim-coalesce" "$tmp/err" || { echo "FAIL: --sim-coalesce maybe: unclear message"; cat "$tmp/err"; fail=1; }
expect 0 "run without runs" -- "$sluice" run "$scripts/no_params.lua" --out "$tmp/none"
grep -q "made no runs" "$tmp/out" || { echo "FAIL: no 'made no runs'"; fail=1; }

# Exit codes: 1 for a failed run (results still written), 2 for the user's mistakes.
expect 1 "run whose point fails" -- "$sluice" run "$scripts/failing_run.lua" --out "$tmp/failed"
grep -q "event budget" "$tmp/err" || { echo "FAIL: failed run does not say why"; cat "$tmp/err"; fail=1; }
grep -q '"ok": false' "$tmp/failed/results.json" || { echo "FAIL: failed run not recorded"; fail=1; }
expect 2 "script syntax error" -- "$sluice" run "$scripts/syntax_error.lua" --out "$tmp/x"
grep -q "syntax_error.lua:3:" "$tmp/err" || { echo "FAIL: no file:line"; cat "$tmp/err"; fail=1; }
expect 2 "unknown --set" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/x" --set nosuch=1
expect 2 "malformed --set" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/x" --set files
expect 2 "bad backend" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend cloud
expect 2 "missing script" -- "$sluice" run "$tmp/no_such.lua"

# hw: the same script on this machine (loopback TCP, chunk files in a temporary directory).
expect 0 "run --backend hw" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/hw" --backend hw --set files=4
grep -qE "^ +0 hw .*file_sweep/read" "$tmp/out" || { echo "FAIL: hw run printed no read row"; cat "$tmp/out"; fail=1; }
grep -q '"backend": "hw"' "$tmp/hw/results.json" || { echo "FAIL: hw backend not recorded"; fail=1; }
# ... deployed as asked (issue 18 item 5): io_uring targets under --storage-root, the shm
# transport; every run records them, and the root is left as it was.
mkdir -p "$tmp/root"
expect 0 "run --backend hw --storage-backend uring --storage-root --transport shm" -- "$sluice" run \
  "$scripts/tiny_sweep.lua" --out "$tmp/hw_deployed" --backend hw --set files=4 --storage-backend uring \
  --storage-root "$tmp/root" --transport shm --node-memory 512MiB
python3 - "$tmp/hw_deployed/results.json" "$tmp/root" <<'PY' || { echo "FAIL: deployment not recorded"; fail=1; }
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
want = {"transport": "shm", "storage_backend": "uring", "node_memory_limit_bytes": str(512 << 20)}
# storage_root: the run's own directory under --storage-root (issue 47 item 6).
bad = [r.get("deployment") for r in runs if not r["ok"] or any(r.get("deployment", {}).get(k) != v for k, v in want.items())
       or not r["deployment"].get("storage_root", "").startswith(sys.argv[2] + "/")]
sys.exit(f"runs deployed otherwise: {bad}" if bad or not runs else 0)
PY
[ -z "$(ls -A "$tmp/root")" ] || { echo "FAIL: the runs left files in --storage-root"; ls -A "$tmp/root"; fail=1; }
expect 2 "--storage-backend nosuch" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --storage-backend nosuch
expect 2 "--transport nosuch" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --transport nosuch
expect 2 "--storage-root missing" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --storage-root "$tmp/no_such_root"
expect 2 "--node-memory too small" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --node-memory 1KiB
grep -q -- "--node-memory: 1KiB is outside 16MiB .. 16TiB" "$tmp/err" || { echo "FAIL: no bounds"; cat "$tmp/err"; fail=1; }
expect 2 "--node-memory not a size" -- "$sluice" run "$scripts/tiny_sweep.lua" --backend hw --node-memory lots
grep -q -- "--node-memory: " "$tmp/err" || { echo "FAIL: --node-memory not named"; cat "$tmp/err"; fail=1; }

# describe
expect 0 "describe" -- "$sluice" describe "$scripts/tiny_sweep.lua"
grep -qE "^  files +number +16 " "$tmp/out" || { echo "FAIL: describe lacks files"; cat "$tmp/out"; fail=1; }
grep -q "file size" "$tmp/out" || { echo "FAIL: describe lacks descriptions"; fail=1; }
expect 0 "describe without params" -- "$sluice" describe "$scripts/no_params.lua"
grep -q "declares no parameters" "$tmp/out" || { echo "FAIL: describe of no params"; fail=1; }
expect 2 "describe syntax error" -- "$sluice" describe "$scripts/syntax_error.lua"
expect 2 "describe missing argument" -- "$sluice" describe

# Sizes: one grammar everywhere (core/common/byte_size.hpp). "4MB" is refused
# with the flag or parameter named and the spelling to use, before anything runs.
expect 2 "mount --chunk-size 4MB" -- "$sluice" mount "$tmp" --chunk-size 4MB
grep -q -- '--chunk-size: "4MB" is not a size, use "4MiB" or the number of bytes' "$tmp/err" ||
  { echo "FAIL: mount --chunk-size 4MB: unclear message"; cat "$tmp/err"; fail=1; }
expect 2 "mount --chunk-size=-1" -- "$sluice" mount "$tmp" --chunk-size=-1
grep -q -- '--chunk-size: "-1" is not a size: a size is 0 or more bytes' "$tmp/err" ||
  { echo "FAIL: mount --chunk-size=-1: unclear message"; cat "$tmp/err"; fail=1; }
expect 2 "--set file_size=4MB" -- "$sluice" run "$here/../../lua_scripts/file_sweep.lua" --out "$tmp/x" \
  --set file_size=4MB
grep -q 'file_size=4MB: "4MB" is not a size, use "4MiB"' "$tmp/err" ||
  { echo "FAIL: --set file_size=4MB: unclear message"; cat "$tmp/err"; fail=1; }
expect 2 "--set size=4MB" -- "$sluice" run "$scripts/tiny_sweep.lua" --out "$tmp/x" --set size=4MB
grep -q 'size=4MB: "4MB" is not a size, use "4MiB"' "$tmp/err" ||
  { echo "FAIL: --set size=4MB: unclear message"; cat "$tmp/err"; fail=1; }
exit $fail
