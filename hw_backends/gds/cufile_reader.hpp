// CuFileReader: reads a file into GPU memory by the path decide_gds_path()
// picks for the configured mode (gds_path.hpp), and says which it took.
//
// cuFile (libcufile, from the CUDA toolkit or the nvidia-cufile wheel) is
// optional at build time (SLUICE_HAVE_CUFILE); without it the probe reports
// the driver unavailable ("built without cuFile ..."), so mode on fails with
// that reason and auto takes the own bounce pipeline.
//
// cuFile needs the file's block device in the udev database: without nvidia-fs
// cuFileHandleRegister answers "file descriptor is not registered" unless
// /run/udev/data/b<major>:<minor> holds E:ID_FS_USAGE=filesystem
// (scripts/gpu_machine/gpu_device_run.sh writes it on the GPU machine).
//
// Reads are cut in chunks of bounce.buffer_bytes taken by
// bounce.reader_threads threads (cuFile path: one cuFileRead per chunk, as
// KvikIO's pread splits a read into tasks; own path: the bounce pipeline).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "hw_backends/cuda/bounce_pipeline.hpp"
#include "hw_backends/cuda/pinned_pool.hpp"
#include "hw_backends/gds/gds_path.hpp"

namespace sluice::hw::gds {

struct CuFileReaderConfig {
  GdsMode mode = GdsMode::auto_;
  bool direct = false;             // open the file O_DIRECT (GDS proper needs it; compat works either way)
  cuda::BounceConfig bounce;       // chunking and threads, both paths
  std::uint16_t staging_numa = 0;  // own bounce: NUMA node of the staging buffers
  // Where the path taken is reported (once, at open); may be empty.
  std::function<void(std::string_view)> log;
};

// Was this build compiled with cuFile? (Why not, when not.)
bool cufile_built();
std::string_view cufile_build_note();

// What cuFile says about `fd` (driver open, handle registration, nvidia-fs).
// The handle registered for the probe is deregistered before returning.
CuFileProbe probe_cufile(int fd);

struct GdsReadStats {
  std::uint64_t bytes = 0;
  double wall_seconds = 0;
  cuda::BounceStats bounce;  // own bounce only
};

class CuFileReader {
 public:
  // Opens the file, probes cuFile, decides. `pool` lends the own bounce
  // pipeline its staging buffers (it must outlive the reader). Errors: the
  // file's open, decide_gds_path's (mode on), config errors.
  static Result<std::unique_ptr<CuFileReader>> open(const std::string& path, const CuFileReaderConfig& config,
                                                    cuda::PinnedPool& pool);
  ~CuFileReader();
  CuFileReader(const CuFileReader&) = delete;
  CuFileReader& operator=(const CuFileReader&) = delete;

  GdsPath path() const { return decision_.path; }
  const std::string& reason() const { return decision_.reason; }
  const CuFileProbe& probe() const { return probe_; }

  // bytes of the file at file_offset -> gpu_dst (on `device`).
  Result<GdsReadStats> read_to_gpu(int device, std::byte* gpu_dst, std::uint64_t bytes, std::uint64_t file_offset);

 private:
  CuFileReader() = default;
  Result<GdsReadStats> read_cufile(int device, std::byte* gpu_dst, std::uint64_t bytes, std::uint64_t file_offset);

  std::string path_;
  CuFileReaderConfig config_;
  cuda::PinnedPool* pool_ = nullptr;
  int fd_ = -1;
  void* handle_ = nullptr;  // CUfileHandle_t when the cuFile path is taken
  CuFileProbe probe_;
  GdsDecision decision_;
};

}  // namespace sluice::hw::gds
