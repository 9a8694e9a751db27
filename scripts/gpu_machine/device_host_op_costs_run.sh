#!/usr/bin/env bash
# Host operation costs on the GPU machine (issue 19: a source for every
# simulator profile parameter): scripts/gpu_machine/host_op_costs.cpp, run on an idle
# host with 16 cores, on the local file system under /var/tmp.
# Here:       bash scripts/gpu_machine/device_host_op_costs_run.sh --pack   (binary + libisal into .carry/hostops)
# On device:  bash scripts/gpu_machine/device_host_op_costs_run.sh          (carry .carry/hostops; writes $OUT)
# Also here:  bash scripts/gpu_machine/device_host_op_costs_run.sh --local  (this machine, into out/hostops)
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=.carry/hostops
if [ "${1:-}" = "--pack" ] || [ "${1:-}" = "--local" ]; then
  mkdir -p "$bin"
  g++ -O2 -pthread -std=c++17 -Wall -Wextra -o "$bin/host_op_costs" scripts/gpu_machine/host_op_costs.cpp -lisal || exit 1
  cp -L /usr/lib/x86_64-linux-gnu/libisal.so.2 "$bin/" || exit 1
  [ "${1:-}" = "--pack" ] && exit 0
fi
out=${OUT:-out/hostops}
mkdir -p "$out"
dir=/var/tmp/sluice-host-op-costs
rm -rf "$dir" && mkdir -p "$dir"
{
  echo "host_op_costs: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "kernel $(uname -r), $dir on $(df --output=source "$dir" | tail -1) ($(stat -f -c %T "$dir"))," \
    "$(date -u +%Y-%m-%dT%H:%MZ), 5 repeats, medians"
  LD_LIBRARY_PATH="$bin" timeout 500 "$bin/host_op_costs" "$dir" 5
} | tee "$out/host_op_costs.txt"
rm -rf "$dir"
