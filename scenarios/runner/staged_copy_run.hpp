// StagedCopyRun: the simulator's model of filling GPU memory from host memory,
// one point at a time, for calibrating the host-memory/PCIe part of a sim
// profile against bench_gpu's chunk-size sweep (issue 8; `sluice calibrate
// --gpu-sweep`, scenarios/calibrate/gpu_calibration.hpp).
//
// The machine: one socket, its host memory and one GPU (or `gpus`, each on
// its own root port) on a PCIe link of the given generation and width
// (topo::generic_machine), node 0 of a one-node cluster. `lanes` services on it each take the next piece of the
// transfer from a shared counter, as the bounce pipeline's reader threads do (hw_backends/cuda/bounce_pipeline.hpp),
// each with `depth` staging buffers:
//   bounce  a lane read()s a piece into a free buffer, one read at a time
//           (staging_cpu_copies copies at staging_cpu_copy_bytes_per_s, the
//           profile's model of a page-cache read, charged as a timer), then
//           queues its DMA on the lane's stream: Env::transfer pinned -> GPU
//           (TransferMode::local_copy) over the PCIe route, bandwidth x pcie
//           bandwidth_factor, latency = sum of hop latencies x pcie
//           latency_factor, DMAs of a lane in order; the next read starts
//           while a buffer is free, so it overlaps the previous DMA;
//   dma     the DMAs alone, depth 1 (bench_gpu's pinned cudaMemcpy series).
// Without the overlap (one staged copy after the other, as SimRuntime's
// staged copy charges a single chunk), simulated lanes that start together
// stay in lockstep and their DMAs queue behind each other: 16 lanes of 16 MiB
// then reached 34 GB/s in simulation where the PCIe link carries 53.
// The copy's memory-link load is left out here: at the rates of this machine
// the host memory link never binds (tests/scenarios/runner).
//
// Result: bytes_per_s = total_bytes / simulated time from the first piece to
// the last. SimGrid allows one engine per process: call it in a child process
// (scenario::ChildPool), once per point.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.hpp"
#include "core/topology/topology.hpp"

namespace sluice::scenario {

// Limits.
inline constexpr std::uint32_t k_max_staged_copy_gpus = 8;  // GPUs of one host filled at once
inline constexpr std::uint32_t k_max_staged_copy_lanes = 64;
inline constexpr std::uint32_t k_max_staged_copy_depth = 64;  // staging buffers per lane
// Pieces of one point (16 GiB in 4 KiB pieces): a bound on simulator events.
inline constexpr std::uint64_t k_max_staged_copy_pieces = 1ULL << 22;

enum class StagedCopySeries : std::uint8_t { bounce, dma };
std::string_view to_string(StagedCopySeries series);  // "bounce", "dma"
// invalid_argument naming the text.
Result<StagedCopySeries> parse_staged_copy_series(std::string_view text);

struct StagedCopyPoint {
  StagedCopySeries series = StagedCopySeries::bounce;
  std::uint32_t lanes = 1;        // 1..k_max_staged_copy_lanes
  std::uint32_t depth = 1;        // staging buffers per lane, 1..k_max_staged_copy_depth
  std::uint64_t piece_bytes = 0;  // > 0
  std::uint64_t total_bytes = 0;  // >= piece_bytes; per GPU
  // GPUs filled at once (issue 19 item 5: a multi-GPU host), each by its own
  // `lanes` from host memory of the one socket; 1..k_max_staged_copy_gpus.
  // The result is the bytes of all of them over the time until the last.
  std::uint32_t gpus = 1;
};
// invalid_argument naming the field.
Status validate(const StagedCopyPoint& point);

struct StagedCopyMachine {
  int pcie_gen = 5;  // the H200 of docs/seeds.md#machines-available-to-the-project: gen5 x16
  int gpu_lanes = 16;
  double memory_bytes_per_s = 204.8e9;  // generic_machine's default (8 x DDR4-3200)
  std::uint64_t gpu_memory_bytes = 141ULL << 30;
};
// One socket with `gpus` GPUs, each on its own PCIe root port (a switch of
// its own): what `nvidia-smi topo -m` shows of a virtual machine that
// flattens PCIe (docs/gpu.md, the 2-GPU H200 host).
Result<topo::Topology> staged_copy_topology(const StagedCopyMachine& machine, std::uint32_t gpus = 1);

// One point in simulation with the profile in `profile_json` (a
// sluice-sim-profile document). Errors: the profile's or the point's, a run
// that spends its event bound or ends early (naming the simulated time).
Result<double> simulate_staged_copy(std::string_view profile_json, const StagedCopyMachine& machine,
                                    const StagedCopyPoint& point);

}  // namespace sluice::scenario
