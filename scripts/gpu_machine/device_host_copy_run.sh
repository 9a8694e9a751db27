#!/usr/bin/env bash
# Host copy scaling and the host's topology on a GPU machine (issue 19 items
# 3 and 5): what the client side of a bounce read can copy per CPU thread and
# with N threads (memcpy, page-cache pread: scripts/gpu_machine/host_copy_scaling.cpp),
# and `nvidia-smi topo -m` (which `sluice topo import` reads), lscpu and the
# NUMA layout, for the multi-GPU host model.
# Here:       bash scripts/gpu_machine/device_host_copy_run.sh --pack   (static binary into .carry/hostcopy)
# On device:  bash scripts/gpu_machine/device_host_copy_run.sh          (carry .carry/hostcopy; writes $OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = "--pack" ]; then
  mkdir -p .carry/hostcopy
  g++ -O2 -static -pthread -std=c++17 -Wall -Wextra -o .carry/hostcopy/host_copy_scaling scripts/gpu_machine/host_copy_scaling.cpp ||
    exit 1
  nvcc -O2 -arch=sm_90 -cudart static -std=c++17 -o .carry/hostcopy/gpu_h2d_concurrency scripts/gpu_machine/gpu_h2d_concurrency.cu
  exit $?
fi
out=${OUT:-out/hostcopy}
mkdir -p "$out"
nvidia-smi topo -m >"$out/topo_m.txt" 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,memory.total --format=csv \
  >"$out/gpus.csv" 2>&1
{ lscpu; echo; cat /proc/meminfo | head -5; echo; for n in /sys/devices/system/node/node*; do
    echo "$(basename "$n"): cpus $(cat "$n/cpulist") $(grep MemTotal "$n/meminfo" | awk '{print $4, $5}')"; done; } \
  >"$out/host.txt" 2>&1
threads=$(nproc)
max=1
while [ $((max * 2)) -le "$threads" ]; do max=$((max * 2)); done
echo "host_copy_scaling: $(hostname), $threads cores, up to $max threads, 256 MiB per thread, 5 repeats" \
  | tee "$out/host_copy.txt"
timeout 500 .carry/hostcopy/host_copy_scaling "$max" $((256 << 20)) 5 /var/tmp/host_copy_scaling.dat \
  | tee -a "$out/host_copy.txt"
timeout 300 .carry/hostcopy/gpu_h2d_concurrency $((8 << 30)) 5 | tee "$out/h2d.txt"
