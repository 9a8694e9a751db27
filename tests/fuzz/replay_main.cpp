// Replay driver for the fuzz harnesses in builds without libFuzzer (g++; CI).
//
//   fuzz_replay_<name> [--runs N] [--seed S] [--max-bytes B] [--write-seeds DIR] [PATH...]
//
// Runs the harness on its built-in seeds, on every file of each PATH (a file
// or a directory: the committed corpus and the regression inputs of crashes
// found earlier), then on N mutants drawn from that pool by a seeded mutator
// (bit flips, interesting bytes, truncation, insertion, duplication of a
// range, splicing two inputs). Deterministic for a given seed; bounded by N.
// A broken property aborts the process, so ctest reports the failure; the
// input is written to ./fuzz-crash-<name>.bin first so it can become a
// regression file. --write-seeds writes the built-in seeds to DIR (a starting
// corpus for libFuzzer in `make fuzz`) and exits.
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "fuzz_harness.hpp"

#ifndef SLUICE_FUZZ_NAME
#define SLUICE_FUZZ_NAME "harness"
#endif

namespace {

using Input = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

constexpr std::uint64_t k_default_runs = 20'000;
constexpr std::size_t k_default_max_bytes = 64 * 1024;
constexpr std::size_t k_max_pool_inputs = 10'000;

const Input* g_current = nullptr;

// On abort or a crash: keep the input that broke the harness (not
// async-signal-safe in general, but the process is dying anyway and this is a
// test driver).
void save_current(int sig) {
  if (g_current != nullptr) {
    const std::string path = std::string("fuzz-crash-") + SLUICE_FUZZ_NAME + ".bin";
    if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(g_current->data(), 1, g_current->size(), f);
      std::fclose(f);
      std::fprintf(stderr, "fuzz %s: input saved to %s (%zu bytes)\n", SLUICE_FUZZ_NAME, path.c_str(),
                   g_current->size());
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void run_one(const Input& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  g_current = nullptr;
}

bool read_file(const fs::path& path, std::size_t max_bytes, Input& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  out.resize(max_bytes);
  const std::size_t got = std::fread(out.data(), 1, max_bytes, f);
  std::fclose(f);
  out.resize(got);
  return true;
}

void mutate(Input& x, const std::vector<Input>& pool, sluice::Rng& rng, std::size_t max_bytes) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng.uniform(n)); };
  const int rounds = 1 + static_cast<int>(rng.uniform(4));
  for (int r = 0; r < rounds; ++r) {
    switch (rng.uniform(7)) {
      case 0:
        if (!x.empty()) x[pick(x.size())] ^= static_cast<std::uint8_t>(1u << rng.uniform(8));
        break;
      case 1:
        if (!x.empty()) {
          const std::uint8_t interesting[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, '\t', '\n', '<', '"', ' ', 'X'};
          x[pick(x.size())] = interesting[rng.uniform(sizeof interesting)];
        }
        break;
      case 2: x.resize(pick(x.size() + 1)); break;
      case 3:
        if (x.size() < max_bytes)
          x.insert(x.begin() + static_cast<std::ptrdiff_t>(pick(x.size() + 1)),
                   static_cast<std::uint8_t>(rng.uniform(256)));
        break;
      case 4:
        if (!x.empty() && x.size() < max_bytes) {
          const std::size_t from = pick(x.size());
          const std::size_t len = std::min<std::size_t>(1 + pick(16), x.size() - from);
          const Input piece(x.begin() + static_cast<std::ptrdiff_t>(from),
                            x.begin() + static_cast<std::ptrdiff_t>(from + len));
          x.insert(x.begin() + static_cast<std::ptrdiff_t>(pick(x.size() + 1)), piece.begin(), piece.end());
        }
        break;
      case 5: {
        const Input& other = pool[pick(pool.size())];
        const std::size_t cut = pick(x.size() + 1);
        const std::size_t from = pick(other.size() + 1);
        x.resize(cut);
        x.insert(x.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      default:  // a little-endian integer overwritten with an extreme
        if (x.size() >= 4) {
          const std::uint32_t extremes[] = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x10000};
          const std::uint32_t v = extremes[rng.uniform(6)];
          std::memcpy(x.data() + pick(x.size() - 3), &v, 4);
        }
        break;
    }
    if (x.size() > max_bytes) x.resize(max_bytes);
  }
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--runs N] [--seed S] [--max-bytes B] [--write-seeds DIR] [PATH...]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t runs = k_default_runs;
  std::uint64_t seed = 1;
  std::size_t max_bytes = k_default_max_bytes;
  std::vector<fs::path> paths;
  std::string write_seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--runs" && has_value) {
      runs = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--seed" && has_value) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--max-bytes" && has_value) {
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--write-seeds" && has_value) {
      write_seeds = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return usage(argv[0]);
    } else {
      paths.emplace_back(a);
    }
  }
  const std::vector<Input> seeds = sluice::fuzz::fuzz_seeds();
  if (!write_seeds.empty()) {
    fs::create_directories(write_seeds);
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream out(fs::path(write_seeds) / ("seed-" + std::to_string(i)), std::ios::binary);
      out.write(reinterpret_cast<const char*>(seeds[i].data()), static_cast<std::streamsize>(seeds[i].size()));
    }
    std::printf("fuzz %s: wrote %zu seeds to %s\n", SLUICE_FUZZ_NAME, seeds.size(), write_seeds.c_str());
    return 0;
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, save_current);

  std::vector<Input> pool = seeds;
  std::size_t files = 0;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> entries;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file()) entries.push_back(e.path());
      }
      std::sort(entries.begin(), entries.end());  // a fixed order: the run is reproducible
      for (const fs::path& f : entries) {
        Input x;
        if (read_file(f, max_bytes, x) && pool.size() < k_max_pool_inputs) pool.push_back(std::move(x)), ++files;
      }
    } else if (fs::is_regular_file(p, ec)) {
      Input x;
      if (read_file(p, max_bytes, x) && pool.size() < k_max_pool_inputs) pool.push_back(std::move(x)), ++files;
    }  // a missing path (no regressions yet) is fine
  }
  if (pool.empty()) pool.emplace_back();

  for (const Input& x : pool) run_one(x);
  sluice::Rng rng(seed);
  for (std::uint64_t r = 0; r < runs; ++r) {
    Input x = pool[static_cast<std::size_t>(rng.uniform(pool.size()))];
    mutate(x, pool, rng, max_bytes);
    run_one(x);
  }
  std::printf("fuzz %s: %zu seeds, %zu files, %llu mutants (seed %llu): no crash, every property held\n",
              SLUICE_FUZZ_NAME, seeds.size(), files, static_cast<unsigned long long>(runs),
              static_cast<unsigned long long>(seed));
  return 0;
}
