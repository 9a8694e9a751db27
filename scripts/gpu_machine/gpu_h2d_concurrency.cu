// Concurrent host->GPU copies on a multi-GPU host (issue 19 item 5): what
// 1..N GPUs receive together from pinned and from pageable host memory, each
// GPU fed by its own host thread and buffer. Prints one line per point:
//   h2d kind=<pinned|pageable> gpus=<G> gb_per_s=<aggregate> gb_per_s_per_gpu=<..>
// the median of REPS runs, each copying BYTES_PER_GPU per GPU in 64 MiB pieces.
// Not part of the build: scripts/gpu_machine/device_host_copy_run.sh --pack compiles it
// (nvcc -O2 -arch=sm_90 -cudart static) and runs it on the GPU machine.
// Usage: gpu_h2d_concurrency BYTES_PER_GPU REPS
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t k_piece_bytes = 64u << 20;

#define CHECK(call)                                                                             \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

struct Lane {
  char* host = nullptr;  // pinned or pageable
  char* device = nullptr;
  cudaStream_t stream{};
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One run: every lane copies `bytes` to its GPU at once; the wall time.
double run_once(std::vector<Lane>& lanes, int gpus, std::size_t bytes) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int g = 0; g < gpus; ++g) {
    threads.emplace_back([&, g] {
      CHECK(cudaSetDevice(g));
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      for (std::size_t off = 0; off < bytes; off += k_piece_bytes) {
        CHECK(cudaMemcpyAsync(lanes[g].device + (off % (1u << 30)), lanes[g].host + (off % (1u << 30)), k_piece_bytes,
                              cudaMemcpyHostToDevice, lanes[g].stream));
      }
      CHECK(cudaStreamSynchronize(lanes[g].stream));
    });
  }
  while (ready.load() < gpus) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true);
  for (auto& t : threads) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s BYTES_PER_GPU REPS\n", argv[0]);
    return 2;
  }
  const std::size_t bytes = std::strtoull(argv[1], nullptr, 10);
  const int reps = std::atoi(argv[2]);
  if (bytes < k_piece_bytes || bytes % k_piece_bytes != 0 || reps < 1 || reps > 100) {
    std::fprintf(stderr, "gpu_h2d_concurrency: BYTES_PER_GPU a multiple of 64 MiB, REPS 1..100\n");
    return 2;
  }
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  const std::size_t buffer = 1u << 30;  // the copies cycle over 1 GiB per GPU
  for (const bool pinned : {true, false}) {
    std::vector<Lane> lanes(count);
    for (int g = 0; g < count; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaMalloc(&lanes[g].device, buffer));
      CHECK(cudaStreamCreateWithFlags(&lanes[g].stream, cudaStreamNonBlocking));
      if (pinned) {
        CHECK(cudaMallocHost(&lanes[g].host, buffer));
      } else {
        lanes[g].host = static_cast<char*>(std::malloc(buffer));
      }
      std::memset(lanes[g].host, g + 1, buffer);
    }
    for (int gpus = 1; gpus <= count; gpus *= 2) {
      std::vector<double> walls;
      run_once(lanes, gpus, k_piece_bytes);  // warm-up
      for (int r = 0; r < reps; ++r) walls.push_back(run_once(lanes, gpus, bytes));
      const double gbs = gpus * static_cast<double>(bytes) / median(walls) / 1e9;
      std::printf("h2d kind=%s gpus=%d gb_per_s=%.2f gb_per_s_per_gpu=%.2f\n", pinned ? "pinned" : "pageable", gpus,
                  gbs, gbs / gpus);
      std::fflush(stdout);
    }
    for (int g = 0; g < count; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaFree(lanes[g].device));
      CHECK(cudaStreamDestroy(lanes[g].stream));
      if (pinned) {
        CHECK(cudaFreeHost(lanes[g].host));
      } else {
        std::free(lanes[g].host);
      }
    }
  }
  return 0;
}
