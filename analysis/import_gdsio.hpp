// gdsio's output as sluice runs (NVIDIA GPUDirect Storage Benchmarking and
// Configuration Guide, "gdsio": one result line per run,
//   IoType: READ XferType: GPUD Threads: 8 DataSetSize: 818796544/4096000(KiB)
//   IOSize: 1024(KiB) Throughput: 6.524658 GiB/sec, Avg_Latency: 1197.370995
//   usecs ops: 799606 total_time 119.679102 secs
// on one line). Other lines (configuration echoes, warnings) are skipped; a
// line that starts with "IoType:" and does not read is an error naming it.
//
// Runs: one per result line. Params (stream style): xfer_type (GPUD,
// CPUONLY, CPU_GPU, GPUD_ASYNC, GPU_BATCH, ...), threads, io_bytes (IOSize
// x 1024; io_size verbatim when it is a random-size range "min-max-step"),
// size_bytes (the DataSetSize asked for, x 1024), random (1 for RAND* I/O).
// config.gds is "on" for the GPU-direct transfer types (GPUD*, GPU_BATCH*).
// Phase (workload gpu_stream; ranks = threads): READ/RANDREAD -> playback
// (storage to GPU), WRITE/RANDWRITE -> record (GPU to storage), any other
// IoType in lower case.
//   last_bytes_per_s = Throughput x 2^30 (gdsio's GiB);
//   bytes = DataSetSize done x 1024; ops = ops; last_done_s = total_time;
//   last_ops_per_s = ops / total_time;
//   extra.latency_us_mean = Avg_Latency (a mean: latency_us_p50/p99 stay null);
//   first done: null.
#pragma once

#include <vector>

#include "analysis/import_input.hpp"
#include "analysis/import_record.hpp"

namespace sluice::analysis {

// Throws ImportError naming the file and line.
std::vector<ImportedRun> import_gdsio_text(const ImportInput& input);

}  // namespace sluice::analysis
