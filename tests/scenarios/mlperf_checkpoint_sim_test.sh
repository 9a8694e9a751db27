#!/bin/bash
# Issue 52 item 1 (ctest mlperf.checkpoint): MLPerf Storage v2.0's checkpoint
# with fsync, sl.workload.dlio on lua_scripts/mlperf/llama3_8b.yaml end to end
# on the simulator (tests/scenarios/scripts/mlperf_llama3_8b_tiny.lua): the
# config shrunk to 2 ranks writes 2 checkpoints with sync writes, then reads
# both back, every byte verified; results.json holds both rates.
#
# Bytes per rank, by DLIO's formula (scenarios/lua/dlio_config.cpp) at the
# overrides' shape (h 256, f 512, V 1024, L 2, heads 8, kv_heads 2; ZeRO 3
# over data 2): kv = 256 / 8 x 2 = 64, a layer 256 + 256 x 384 + 65536 + 256
# + 3 x 256 x 512 = 557568, P = 2 x 1024 x 256 + 2 x 557568 + 256 = 1639680;
# model state P / 2 x 2 bytes = 1639680, optimizer (3 x 819840 + 15 x 256) x
# 4 = 9853440: 11493120 bytes; 2 ranks x 2 checkpoints: 45972480 per phase.
# A checkpoint key the reader refuses is exit 2 naming file:line: key, and so
# is a placement of another rank count than the config's (its bytes per rank
# hold for its ranks only).
# Usage: mlperf_checkpoint_sim_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
script=$here/tests/scenarios/scripts/mlperf_llama3_8b_tiny.lua
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/scenarios/test_lib.sh"

expect 0 "llama3_8b.yaml shrunk runs on the simulator" -- "$sluice" run "$script" --out "$tmp/run"
line=$(grep '^checkpoint: ' "$tmp/out")
echo "$line"
[ "$line" = "checkpoint: model=llama_8b type=checkpoint_burst ranks=2 shard_bytes=11493120 sync=true writes=2 reads=2" ] ||
  { echo "FAIL: the workload line is not the shrunk 8B's: '$line'"; fail=1; }
python3 - "$tmp/run/results.json" <<'PY' || fail=1
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
ok = True
def check(cond, what):
    global ok
    print(("ok: " if cond else "FAIL: ") + what)
    ok = ok and cond
check(len(runs) == 1 and runs[0]["ok"], "one run, ok")
run = runs[0]
settings = run["spec"]["workloads"][0]["settings"]
check(settings["sync"] is True and settings["shard_bytes"] == 11493120 and settings["checkpoints"] == 2
      and settings["read_back"] is True and settings["read_checkpoints"] == 2, "checkpoint_burst as the config says")
phases = {p["phase"]: p for p in run["phases"] if p["workload"] == "llama_8b"}
written = 2 * 2 * 11493120
counters = run["counters"]
check(phases["write"]["bytes"] == written, "the write phase wrote 2 checkpoints of 2 ranks")
check(counters.get("checkpoint.write.sync_bytes") == written, "every byte written with sync (fsync)")
check(phases["read"]["bytes"] == written, "the read phase read back every byte written")
check(counters.get("checkpoint.read.verified_bytes") == written, "every byte read back verified")
for name in ("write", "read"):
    rate = phases[name]["last_bytes_per_s"]
    check(rate > 0, "%s rate reported: %.3f GB/s" % (name, rate / 1e9))
sys.exit(0 if ok else 1)
PY
sed 's/zero_stage: 3/zero_stage: 4/' "$here/lua_scripts/mlperf/llama3_8b.yaml" >"$tmp/bad.yaml"
printf 'local sl = require "sluice"\nlocal w = sl.workload.dlio{ config = "bad.yaml" }\n' >"$tmp/bad.lua"
expect 2 "a refused checkpoint key is a script error" -- "$sluice" run "$tmp/bad.lua" --out "$tmp/bad"
bad_line=$(grep -n 'zero_stage: 4' "$tmp/bad.yaml" | cut -d: -f1)
grep -q "bad.lua:2: sl.workload.dlio: bad.yaml:$bad_line: model.parallelism.zero_stage: 4 is out of range" "$tmp/err" ||
  { echo "FAIL: the error does not name bad.yaml:$bad_line: model.parallelism.zero_stage"; cat "$tmp/err"; fail=1; }
sed -e 's/block_bytes = 1048576,/block_bytes = 1048576, ranks_per_node = 1,/' \
    -e "s|\"../../../lua_scripts/mlperf/llama3_8b.yaml\"|\"$here/lua_scripts/mlperf/llama3_8b.yaml\"|" "$script" >"$tmp/one_rank.lua"
expect 2 "a placement of 1 rank for the config's 2 is a script error" -- "$sluice" run "$tmp/one_rank.lua" --out "$tmp/one"
grep -q "one_rank.lua:[0-9]*: sl.workload.dlio: the config's checkpoint is written by 2 ranks (its parallelism), the workload places 1 (1 client nodes x ranks_per_node 1)" "$tmp/err" ||
  { echo "FAIL: no rank-count error"; cat "$tmp/err"; fail=1; }
exit $fail
