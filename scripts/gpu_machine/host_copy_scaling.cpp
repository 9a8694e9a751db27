// Host copy scaling (issue 19 item 3, study 1's bounce path): what one CPU
// thread and N threads together copy in host memory, the two costs a POSIX
// bounce read pays on the client before its GPU copy:
//   memcpy  T threads, each copying its own buffer (user-space memcpy: the
//           copy_to_user of a read() runs at the same per-core rate);
//   pread   T threads, each reading its own region of one file that is in
//           the page cache (a page-cache hit is one kernel->user copy).
// Prints one line per point: "host_copy op=<memcpy|pread> threads=<T>
// bytes_per_thread=<B> gb_per_s=<aggregate> gb_per_s_per_thread=<..>", the
// median of REPS runs. Not part of the build: scripts/gpu_machine/device_host_copy_run.sh
// compiles it statically (g++ -O2 -static -pthread) and runs it on the GPU
// machine, with the host's topology beside it.
// Usage: host_copy_scaling MAX_THREADS BYTES_PER_THREAD REPS FILE
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t k_pread_call_bytes = 4u << 20;  // one read() call, as a 4 MiB bounce piece

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `work(i)` on `threads` threads started together; returns the wall time.
template <typename Work>
double timed_parallel(unsigned threads, Work work) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      work(i);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true);
  for (auto& t : pool) t.join();
  return seconds_since(t0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void report(const char* op, unsigned threads, std::size_t bytes, const std::vector<double>& walls) {
  const double gbs = threads * static_cast<double>(bytes) / median(walls) / 1e9;
  std::printf("host_copy op=%s threads=%u bytes_per_thread=%zu gb_per_s=%.2f gb_per_s_per_thread=%.2f\n", op,
              threads, bytes, gbs, gbs / threads);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s MAX_THREADS BYTES_PER_THREAD REPS FILE\n", argv[0]);
    return 2;
  }
  const unsigned max_threads = static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10));
  const std::size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const unsigned reps = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
  const std::string file = argv[4];
  if (max_threads == 0 || max_threads > 1024 || bytes < k_pread_call_bytes || bytes % k_pread_call_bytes != 0 ||
      reps == 0 || reps > 100) {
    std::fprintf(stderr, "host_copy_scaling: MAX_THREADS 1..1024, BYTES_PER_THREAD a multiple of 4 MiB, REPS 1..100\n");
    return 2;
  }
  std::vector<std::vector<char>> src(max_threads, std::vector<char>(bytes, 1));
  std::vector<std::vector<char>> dst(max_threads, std::vector<char>(bytes, 0));
  // The file: every thread's region, written once so that it is in the page cache.
  const int fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    std::perror(file.c_str());
    return 1;
  }
  for (unsigned i = 0; i < max_threads; ++i) {
    for (std::size_t off = 0; off < bytes; off += k_pread_call_bytes) {
      if (pwrite(fd, src[i].data() + off, k_pread_call_bytes, static_cast<off_t>(i * bytes + off)) !=
          static_cast<ssize_t>(k_pread_call_bytes)) {
        std::perror("pwrite");
        return 1;
      }
    }
  }
  std::atomic<bool> short_read{false};
  for (unsigned t = 1; t <= max_threads; t *= 2) {
    std::vector<double> copy_walls, read_walls;
    for (unsigned r = 0; r < reps; ++r) {
      copy_walls.push_back(timed_parallel(t, [&](unsigned i) { std::memcpy(dst[i].data(), src[i].data(), bytes); }));
      read_walls.push_back(timed_parallel(t, [&](unsigned i) {
        for (std::size_t off = 0; off < bytes; off += k_pread_call_bytes) {
          if (pread(fd, dst[i].data() + off, k_pread_call_bytes, static_cast<off_t>(i * bytes + off)) !=
              static_cast<ssize_t>(k_pread_call_bytes)) {
            short_read.store(true);
          }
        }
      }));
    }
    report("memcpy", t, bytes, copy_walls);
    report("pread", t, bytes, read_walls);
  }
  close(fd);
  unlink(file.c_str());
  if (short_read.load()) {
    std::fprintf(stderr, "host_copy_scaling: a pread returned short\n");
    return 1;
  }
  return 0;
}
