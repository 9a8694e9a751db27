// make bench-nvme (P5, issue 5): the io_uring storage backend reading and
// writing 1 MiB and 16 MiB chunks at queue depth 16 from one target, against
// `fio --ioengine=io_uring --direct=1` with the same block size, depth, file
// and file system, in the same invocation. Goal: ratio >= 0.95 for every case.
//
// The target is a directory under $SLUICE_BENCH_DIR (default /var/tmp: a
// disk, where /tmp may be tmpfs, which refuses O_DIRECT); its one object file
// of k_file_bytes, and fio's file of the same size beside it in the same
// directory (--filename; its own file since the object's CRC32Cs at rest,
// hw_backends/chunk_files.hpp, would rightly refuse bytes fio wrote behind
// the backend's back). sluice side:
// the "uring" backend with direct_io=on, 16 registered buffers of the block
// size, checksums on (every completion carries the CRC32C and every 4 KiB
// block's CRC32C is stored with the object and checked on read, as the storage
// service uses it), sequential requests over the file with 16 in flight.
// fio side: one job, --rw=read|write --bs --iodepth=16 --size, JSON output,
// bytes/s from jobs[0].read|write.bw_bytes. Writes are not synced at the end
// on either side. Each case runs k_runs times per side, alternating; the
// case's ratio is of the medians, and the RESULT is the smallest ratio.
// BENCH_SMOKE=1 (tests/bench/smoke.hpp): 1 MiB blocks only, one run, a file of k_smoke_file_bytes.
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "hw_backends/storage_backend.hpp"
#include "tests/bench/smoke.hpp"

namespace {

using namespace sluice;
using namespace sluice::hw;

constexpr std::uint64_t k_full_file_bytes = 2ULL << 30;  // ~2 s per run at ~1 GB/s
constexpr std::uint64_t k_smoke_file_bytes = 64ULL << 20;
const std::uint64_t k_file_bytes = bench::full_or_smoke(k_full_file_bytes, k_smoke_file_bytes);
constexpr std::uint32_t k_queue_depth = 16;
constexpr int k_runs = 5;
constexpr FileId k_file_id = 1;
constexpr int k_wait_ms = 30000;      // one poll for a completion: a hang becomes an error
constexpr int k_fio_timeout_s = 300;  // one fio run

struct Case {
  const char* name;
  bool write;
  std::uint64_t block_bytes;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

double fio_run(const std::string& path, const Case& c, std::string* why) {
  const std::string cmd = "timeout " + std::to_string(k_fio_timeout_s) + " fio --name=p5 --filename=" + path +
                          " --size=" + std::to_string(k_file_bytes) + " --rw=" + (c.write ? "write" : "read") +
                          " --bs=" + std::to_string(c.block_bytes) + " --iodepth=" + std::to_string(k_queue_depth) +
                          " --ioengine=io_uring --direct=1 --output-format=json 2>/dev/null";
  const std::string out = run_command(cmd);
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.contains("jobs") || j["jobs"].empty()) {
    *why = "fio output is not the expected JSON: " + out.substr(0, 300);
    return -1;
  }
  return j["jobs"][0][c.write ? "write" : "read"]["bw_bytes"].get<double>();
}

struct Buffers {
  explicit Buffers(std::uint64_t block_bytes) {
    for (std::uint32_t i = 0; i < k_queue_depth; ++i) {
      void* p = std::aligned_alloc(k_direct_io_alignment_bytes, block_bytes);
      if (p == nullptr) std::abort();
      spans.emplace_back(static_cast<std::byte*>(p), block_bytes);
      fill_pattern(spans.back(), 11 + i, 0);
    }
  }
  ~Buffers() {
    for (auto& s : spans) std::free(s.data());
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  std::vector<std::span<std::byte>> spans;
};

// One pass over the file; bytes/s, or negative (printed) on an error.
double sluice_run(StorageBackend& target, Buffers& buffers, const Case& c) {
  const std::uint64_t blocks = k_file_bytes / c.block_bytes;
  std::vector<std::uint32_t> free_slots;
  for (std::uint32_t i = 0; i < k_queue_depth; ++i) free_slots.push_back(i);
  std::uint64_t submitted = 0, completed = 0, bytes = 0;
  std::vector<StorageCompletion> done;
  const auto t0 = std::chrono::steady_clock::now();
  while (completed < blocks) {
    while (submitted < blocks && !free_slots.empty()) {
      const std::uint32_t slot = free_slots.back();
      StorageRequest r;
      r.op = c.write ? StorageOp::write : StorageOp::read;
      r.file_id = k_file_id;
      r.object_offset = submitted * c.block_bytes;
      r.buffer = buffers.spans[slot];
      r.cookie = slot;
      const Status st = target.submit(r);
      if (!st.ok()) {
        std::fprintf(stderr, "bench_nvme: submit: %s\n", st.to_string().c_str());
        return -1;
      }
      free_slots.pop_back();
      ++submitted;
    }
    done.clear();
    if (target.poll(done, k_queue_depth) == 0) {
      pollfd pfd{target.completion_fd(), POLLIN, 0};
      if (::poll(&pfd, 1, k_wait_ms) != 1) {
        std::fprintf(stderr, "bench_nvme: no completion within %d ms\n", k_wait_ms);
        return -1;
      }
      continue;
    }
    for (const StorageCompletion& comp : done) {
      if (!comp.status.ok() || comp.bytes != c.block_bytes || !comp.direct) {
        std::fprintf(stderr, "bench_nvme: request failed or short or not direct: %s (%llu bytes, direct %d)\n",
                     comp.status.to_string().c_str(), static_cast<unsigned long long>(comp.bytes), comp.direct ? 1 : 0);
        return -1;
      }
      bytes += comp.bytes;
      free_slots.push_back(static_cast<std::uint32_t>(comp.cookie));
      ++completed;
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(bytes) / s;
}

}  // namespace

int main(int argc, char** argv) {
  // "nochecksum" as the argument turns the completions' CRC32C off, to see
  // what the checksums cost; the RESULT is meant with them on.
  const bool checksum = !(argc > 1 && std::string(argv[1]) == "nochecksum");
  const char* base = std::getenv("SLUICE_BENCH_DIR");
  std::string templ = std::string(base != nullptr ? base : "/var/tmp") + "/sluice-bench-nvme-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    std::fprintf(stderr, "bench_nvme: cannot create a directory under %s\n", base != nullptr ? base : "/var/tmp");
    return 1;
  }
  const std::string dir = templ;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};

  StorageTargetConfig config;
  config.directory = dir;
  config.queue_depth = k_queue_depth;
  config.direct_io = DirectIoMode::on;
  config.checksum = checksum;
  Result<std::unique_ptr<StorageBackend>> made = create_storage_backend("uring", config);
  if (!made.ok()) {
    std::fprintf(stderr, "bench_nvme: uring backend: %s\n", made.status().to_string().c_str());
    return 1;
  }
  const std::string path = dir + "/" + [] {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(k_file_id));
    return std::string(hex);
  }();
  const std::string fio_path = dir + "/fio-peer";  // same directory and file system, fio's own file
  std::printf("bench_nvme: %s, file %s of %llu MiB, queue depth %u, checksums %s, io path: %s\n", "uring", path.c_str(),
              static_cast<unsigned long long>(k_file_bytes >> 20), k_queue_depth, checksum ? "on" : "off",
              made.value()->io_path().c_str());

  // Writes come first: they create the file the reads read.
  std::vector<Case> cases{{"write_1MiB", true, 1ULL << 20},
                          {"write_16MiB", true, 16ULL << 20},
                          {"read_1MiB", false, 1ULL << 20},
                          {"read_16MiB", false, 16ULL << 20}};
  if (bench::smoke()) cases = {cases[0], cases[2]};
  std::printf("%-12s %12s %12s %8s\n", "case", "sluice_MB/s", "fio_MB/s", "ratio");
  double worst = 1e9;
  for (const Case& c : cases) {
    // A fresh target per block size: its registered buffers are that size.
    Result<std::unique_ptr<StorageBackend>> target = create_storage_backend("uring", config);
    if (!target.ok()) {
      std::fprintf(stderr, "bench_nvme: %s\n", target.status().to_string().c_str());
      return 1;
    }
    Buffers buffers(c.block_bytes);
    if (Status st = target.value()->register_buffers(buffers.spans); !st.ok()) {
      std::fprintf(stderr, "bench_nvme: register_buffers: %s\n", st.to_string().c_str());
      return 1;
    }
    std::vector<double> ours, theirs;
    for (int run = 0; run < bench::full_or_smoke(k_runs, 1); ++run) {
      const double s = sluice_run(*target.value(), buffers, c);
      if (s < 0) return 1;
      std::string why;
      const double f = fio_run(fio_path, c, &why);
      if (f <= 0) {
        std::fprintf(stderr, "bench_nvme: fio: %s\n", why.c_str());
        return 1;
      }
      ours.push_back(s);
      theirs.push_back(f);
    }
    const double ratio = median(ours) / median(theirs);
    worst = std::min(worst, ratio);
    std::printf("%-12s %12.0f %12.0f %8.3f\n", c.name, median(ours) / 1e6, median(theirs) / 1e6, ratio);
    std::fflush(stdout);
  }
  std::printf("RESULT P5 ratio=%.3f goal=0.95\n", worst);
  return 0;
}
