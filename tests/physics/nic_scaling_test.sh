#!/bin/bash
# Issue 48 item 3 (ctest physics.nic_scaling): a storage server that uses all
# its NICs. tests/scenarios/scripts/nic_scaling.lua at a CI size (2 servers of
# 2 sockets and 16 drives, 6 clients of one 200 Gb/s NIC) with 1, 2 and 4
# NICs per server: `sluice bound` names what binds (the servers' NIC ports,
# then the PCIe uplinks of their switches), and the simulated read rate rises
# with the NICs, never above its bound. Before the fix every server sent all
# its bytes through NIC 0, so 2 and 4 NICs read as 1 did.
# Usage: nic_scaling_test.sh SLUICE
set -u
sluice=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
script=$here/tests/scenarios/scripts/nic_scaling.lua
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sets=(--set servers=2 --set clients=6 --set size=64MiB)
fail=0
declare -A rate whole bound kind
for n in 1 2 4; do
  "$sluice" bound "$script" "${sets[@]}" --set nics=$n >"$work/bound$n.txt" 2>&1 || { cat "$work/bound$n.txt"; exit 1; }
  line=$(grep "file_sweep read:" "$work/bound$n.txt")
  bound[$n]=$(sed -E 's/.*read: ([0-9.]+) GB\/s.*/\1/' <<<"$line")
  kind[$n]=$(sed -E 's/.*bound by ([a-z -]+):.*/\1/' <<<"$line")
  "$sluice" run "$script" "${sets[@]}" --set nics=$n --out "$work/run$n" >"$work/run$n.log" 2>&1 ||
    { tail -20 "$work/run$n.log"; exit 1; }
  # The rate while every rank still reads (first_bytes_per_s: until the first
  # finishes) measures the NICs; the whole phase's (last_bytes_per_s) adds the
  # tail of the ranks whose 64 MiB files drew busier targets (6.6 of 75 ms at 4 NICs).
  read -r rate[$n] whole[$n] < <(python3 -c '
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
p = [p for p in run["phases"] if p["phase"] == "read"][0]
print(p["first_bytes_per_s"] / 1e9, p["last_bytes_per_s"] / 1e9)' "$work/run$n/results.json")
  echo "nics=$n: read ${rate[$n]} GB/s while all ranks read (${whole[$n]} GB/s over the phase), bound ${bound[$n]} GB/s by ${kind[$n]}"
  awk -v r="${rate[$n]}" -v w="${whole[$n]}" -v b="${bound[$n]}" 'BEGIN { exit !(r <= b * 1.0001 && w <= b * 1.0001) }' ||
    { echo "FAIL: nics=$n reads above its bound"; fail=1; }
done
[ "${kind[1]}" = "nic port" ] && [ "${kind[2]}" = "nic port" ] && [ "${kind[4]}" = "pcie" ] ||
  { echo "FAIL: binding resources ${kind[1]} / ${kind[2]} / ${kind[4]}, expected nic port / nic port / pcie"; fail=1; }
awk -v a="${rate[1]}" -v b="${rate[2]}" 'BEGIN { exit !(b >= 1.5 * a) }' ||
  { echo "FAIL: 2 NICs read ${rate[2]} GB/s, not 1.5 x the ${rate[1]} of one"; fail=1; }
awk -v a="${rate[2]}" -v b="${rate[4]}" 'BEGIN { exit !(b >= a) }' ||
  { echo "FAIL: 4 NICs read ${rate[4]} GB/s, less than 2 NICs' ${rate[2]}"; fail=1; }
# The client side: one client of 2 sockets reading with host buffers from 2
# servers of 4 NICs. With a 200 Gb/s NIC on each socket it reads twice what
# one NIC does: the rank's threads spread over both sockets, each with its
# buffer on its own node, and each takes its own socket's NIC (the BeeGFS
# client's NUMA-local NIC priority). Before the fix every host buffer was on
# NUMA node 0, and the second socket's NIC carried nothing.
csets=(--set servers=2 --set clients=1 --set nics=4 --set size=64MiB --set files=64 --set threads=64)
declare -A crate
for cn in 1 2; do
  "$sluice" run "$script" "${csets[@]}" --set client_nics=$cn --out "$work/client$cn" >"$work/client$cn.log" 2>&1 ||
    { tail -20 "$work/client$cn.log"; exit 1; }
  crate[$cn]=$(python3 -c '
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
read = [p for p in run["phases"] if p["phase"] == "read"][0]
print(read["last_bytes_per_s"] / 1e9, read["last_bytes_per_s"] / read["bound_bytes_per_s"])' "$work/client$cn/results.json")
  echo "client_nics=$cn: read ${crate[$cn]% *} GB/s, ${crate[$cn]#* } of its bound"
  awk -v r="${crate[$cn]#* }" 'BEGIN { exit !(r >= 0.9 && r <= 1.0001) }' ||
    { echo "FAIL: client_nics=$cn reads ${crate[$cn]#* } of its bound, not within [0.9, 1]"; fail=1; }
done
awk -v a="${crate[1]% *}" -v b="${crate[2]% *}" 'BEGIN { exit !(b >= 1.8 * a) }' ||
  { echo "FAIL: a client with a NIC on each socket reads ${crate[2]% *} GB/s, not 1.8 x the ${crate[1]% *} of one"; fail=1; }
# A checkpoint burst's writes (study 8 at CI size: 2 servers of 8 drives
# writing 3.8 GB/s each) are bound by the drives: 2 x 8 x 3.8 = 60.8 GB/s.
line=$("$sluice" bound "$here/lua_scripts/checkpoint_burst.lua" --set servers=2 --set clients=2 --set shard=256MiB |
  grep -m1 "checkpoint_burst write:")
grep -q "write: 60.80 GB/s, bound by drive write:" <<<"$line" ||
  { echo "FAIL: checkpoint bound: $line (expected 60.80 GB/s by drive write)"; fail=1; }
# A workload's own ceilings (issue 48: every seed study's figure against a
# bound). Study 5's stage-in at 100 nodes: the object store's 5 GB/s per
# rank x 100 ranks = 500 GB/s, below what the drives and NICs carry.
line=$("$sluice" bound "$here/lua_scripts/beeond_stage_in.lua" | grep "stage_in ingress:" | tail -1)
grep -q "ingress: 500.00 GB/s, bound by object store: 100 ranks x 5 GB/s" <<<"$line" ||
  { echo "FAIL: stage-in bound: $line (expected 500 GB/s by the object store)"; fail=1; }
# Study 7's local-NVMe epoch: 512 ranks, each a 16 MiB batch per 55.92 ms
# compute step (300 MB/s per GPU): 512 x 16777216 / 0.055924053 s = 153.60 GB/s.
line=$("$sluice" bound "$here/lua_scripts/cosmoflow_epoch.lua" | grep -m1 "train_epoch epoch:")
grep -q "epoch: 153.60 GB/s, bound by accelerator compute: 512 ranks" <<<"$line" ||
  { echo "FAIL: epoch bound: $line (expected 153.60 GB/s by the accelerators' compute)"; fail=1; }
# Study 4's recorder with two 25 Gb/s ports: 2 x 3.125 x 0.97 (the payload
# share, topo::k_network_payload_share) = 6.06 GB/s.
line=$("$sluice" bound "$here/lua_scripts/gpu_rdma_recorder.lua" | grep "record record:" | tail -1)
grep -q "record: 6.06 GB/s, bound by nic port: node0/mlx5_0->switch, node0/mlx5_1->switch" <<<"$line" ||
  { echo "FAIL: recorder bound: $line (expected 6.06 GB/s by its two ports)"; fail=1; }
[ $fail = 0 ] && echo "nic scaling: ok"
exit $fail
