// make bench-core: how fast the core's hot decisions are, per call.
// These bound what a simulation of many chunks and files can do per second
// of wall time (SimEnv's budget per chunk is in the microseconds). There is
// no external peer for these decisions; the system-level benchmarks with
// peers (raw SimGrid, iperf3, fio, cuFile) come with SimEnv and HwEnv.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <vector>

#include "core/common/rng.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/layout/target_chooser.hpp"
#include "core/namespace/meta_sharding.hpp"
#include "core/proto/codec.hpp"
#include "core/proto/crc32c.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/machine_builders.hpp"
#include "tests/bench/smoke.hpp"

namespace {

using namespace sluice;

proto::Message sample_read_chunk() {
  proto::ReadChunk m;
  m.request_id = 42;
  m.file_id = 7;
  m.target = 3;
  m.object_offset = 1 << 20;
  m.length = 1 << 20;
  m.dst = MemHandle{1, MemKind::gpu, 3, 9, 0, 1 << 20};
  return m;
}

void BM_EncodeDecodeReadChunk(benchmark::State& state) {
  const proto::Message m = sample_read_chunk();
  for (auto _ : state) {
    auto frame = proto::encode(m);
    auto back = proto::decode(frame);
    benchmark::DoNotOptimize(back);
  }
}
BENCHMARK(BM_EncodeDecodeReadChunk);

void BM_Crc32c1MiB(benchmark::State& state) {
  std::vector<std::byte> data(1 << 20, std::byte{0x5A});
  for (auto _ : state) benchmark::DoNotOptimize(proto::crc32c(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * (1 << 20));
}
BENCHMARK(BM_Crc32c1MiB);

void BM_StripeMapRange64MiB(benchmark::State& state) {
  auto pattern = StripePattern::raid0(StripeFlavor::beegfs, 512 * k_kib, {1, 2, 3, 4, 5, 6, 7, 8}).value();
  for (auto _ : state) benchmark::DoNotOptimize(pattern.map_range(3 * k_mib + 17, 64 * k_mib));
}
BENCHMARK(BM_StripeMapRange64MiB);

void BM_ChooseTargetsRandomized(benchmark::State& state) {
  std::vector<TargetInfo> targets;
  for (TargetId t = 0; t < 128; ++t) targets.push_back(TargetInfo{t, t / 4, 8 * k_tib, 4 * k_tib, true});
  TargetChooserConfig cfg;
  auto chooser = TargetChooser::make(cfg).value();
  Rng rng(1);
  ChooseRequest req;
  req.stripe_count = 4;
  for (auto _ : state) benchmark::DoNotOptimize(chooser.choose(targets, req, rng));
}
BENCHMARK(BM_ChooseTargetsRandomized);

void BM_ShardForEntryCrush16(benchmark::State& state) {
  NamespaceConfig cfg;
  cfg.policy = MetaPolicy::striped_dir;
  cfg.shard_count = 16;
  cfg.dir_stripe_count = 16;
  Rng rng(1);
  auto root = root_placement(cfg).value();
  auto dir = place_new_directory(root, "/d", cfg, rng).value();
  std::uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(shard_for_entry(dir, "/d", "file" + std::to_string(i++)));
}
BENCHMARK(BM_ShardForEntryCrush16);

void BM_RailChooseReleaseDgxA100(benchmark::State& state) {
  auto t = topo::dgx_a100().value();
  auto rails = sched::RailSelector::create(t, 0).value();
  std::uint32_t g = 0;
  for (auto _ : state) {
    auto nic = rails.choose(sched::MemoryPlace::gpu(g++ % 8));
    rails.release(*nic).ignore();
  }
}
BENCHMARK(BM_RailChooseReleaseDgxA100);

}  // namespace

// BENCHMARK_MAIN, then RESULT core benchmarks=<how many ran>; with BENCH_SMOKE=1 (tests/bench/smoke.hpp): each
// benchmark for a millisecond.
int main(int argc, char** argv) {
  char smoke_min_time[] = "--benchmark_min_time=0.001";
  std::vector<char*> args;
  args.reserve(static_cast<std::size_t>(argc) + 1);
  for (int i = 0; i < argc; ++i) {
    args.push_back(argv[i]);
    if (i == 0 && sluice::bench::smoke()) args.push_back(smoke_min_time);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("RESULT core benchmarks=%zu\n", ran);
  return 0;
}
