// The storage backend conformance suite, instantiated over every registered,
// available backend. Targets live in fresh directories under /tmp, removed
// after each test. Data is the core's deterministic pattern, checked by
// CRC32C; waits are bounded polls on the completion fd (no sleeps).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/chunk_files.hpp"
#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {
namespace {

constexpr int k_wait_round_ms = 200;  // bound per wait round: turns a hang into a failure
constexpr int k_wait_rounds = 50;

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

// A buffer aligned for O_DIRECT.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::size_t bytes)
      : bytes_(bytes), data_(static_cast<std::byte*>(std::aligned_alloc(k_direct_io_alignment_bytes, round(bytes)))) {}
  std::span<std::byte> span() { return {data_.get(), bytes_}; }
  std::span<std::byte> span(std::size_t offset, std::size_t n) { return span().subspan(offset, n); }

 private:
  static std::size_t round(std::size_t n) {
    const std::size_t a = k_direct_io_alignment_bytes;
    return std::max(a, (n + a - 1) / a * a);
  }
  std::size_t bytes_;
  std::unique_ptr<std::byte, FreeDeleter> data_;
};

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-storage-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::uint32_t crc(std::span<const std::byte> b) { return proto::crc32c(b); }

StorageTargetConfig config_at(std::string directory, std::uint32_t queue_depth = 16) {
  StorageTargetConfig c;
  c.directory = std::move(directory);
  c.queue_depth = queue_depth;
  return c;
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& l : list_storage_backends()) {
    if (l.available) names.push_back(l.name);
  }
  return names;
}

class StorageConformance : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<StorageBackend> open(StorageTargetConfig config) {
    if (config.directory.empty()) config.directory = dir_.path() + "/target";
    Result<std::unique_ptr<StorageBackend>> b = create_storage_backend(GetParam(), config);
    EXPECT_TRUE(b.ok()) << b.status().to_string();
    return b.ok() ? std::move(b).value() : nullptr;
  }
  std::unique_ptr<StorageBackend> open() { return open(StorageTargetConfig{}); }

  // Submits and waits for this request's completion.
  StorageCompletion run(StorageBackend& b, StorageRequest r) {
    r.cookie = next_cookie_++;
    const Status st = b.submit(r);
    EXPECT_TRUE(st.ok()) << st.to_string();
    if (!st.ok()) return StorageCompletion{r.cookie, st};
    return wait(b, r.cookie);
  }

  StorageCompletion wait(StorageBackend& b, std::uint64_t cookie) {
    for (int round = 0; round <= k_wait_rounds; ++round) {
      auto it = early_.find(cookie);
      if (it != early_.end()) {
        StorageCompletion c = std::move(it->second);
        early_.erase(it);
        return c;
      }
      std::vector<StorageCompletion> got;
      if (b.poll(got, 64) == 0) {
        pollfd pfd{b.completion_fd(), POLLIN, 0};
        ::poll(&pfd, 1, k_wait_round_ms);
      }
      for (auto& c : got) early_.emplace(c.cookie, std::move(c));
    }
    ADD_FAILURE() << "no completion for cookie " << cookie;
    return StorageCompletion{cookie, Status(StatusCode::timed_out, "test wait bound")};
  }

  StorageRequest write(FileId id, std::uint64_t offset, std::span<std::byte> buffer, bool sync = false) {
    return StorageRequest{StorageOp::write, id, offset, buffer, sync, 0};
  }
  StorageRequest read(FileId id, std::uint64_t offset, std::span<std::byte> buffer) {
    return StorageRequest{StorageOp::read, id, offset, buffer, false, 0};
  }

  TempDir dir_;
  std::uint64_t next_cookie_ = 1;
  std::map<std::uint64_t, StorageCompletion> early_;
};

TEST_P(StorageConformance, WritesAndReadsBackVerifiedByCrc32c) {
  auto b = open();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->name(), GetParam());
  AlignedBuffer out(1 << 20), in(1 << 20);
  fill_pattern(out.span(), 17, 0);
  const StorageCompletion w = run(*b, write(7, 0, out.span()));
  ASSERT_TRUE(w.status.ok()) << w.status.to_string();
  EXPECT_EQ(w.bytes, 1u << 20);
  ASSERT_TRUE(w.crc_valid);
  EXPECT_EQ(w.crc32c, crc(out.span()));
  const StorageCompletion r = run(*b, read(7, 0, in.span()));
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  EXPECT_EQ(r.bytes, 1u << 20);
  ASSERT_TRUE(r.crc_valid);
  EXPECT_EQ(r.crc32c, w.crc32c);
  EXPECT_EQ(crc(in.span()), w.crc32c);
  EXPECT_FALSE(first_pattern_mismatch(in.span(), 17, 0).has_value());
}

TEST_P(StorageConformance, ObjectsAreHexNamedFilesInTheTargetDirectory) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer out(5000);
  fill_pattern(out.span(), 1, 0);
  ASSERT_TRUE(run(*b, write(0xABCDEF, 100, out.span())).status.ok());
  const std::string path = dir_.path() + "/target/0000000000abcdef";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_EQ(std::filesystem::file_size(path), 5100u);
}

TEST_P(StorageConformance, ReadsPastTheEndReturnOnlyWhatExists) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer out(10000), in(16384);
  fill_pattern(out.span(), 2, 0);
  ASSERT_TRUE(run(*b, write(3, 0, out.span())).status.ok());
  const StorageCompletion r = run(*b, read(3, 8192, in.span()));
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  EXPECT_EQ(r.bytes, 10000u - 8192u);
  EXPECT_EQ(r.crc32c, crc(out.span().subspan(8192)));
  EXPECT_EQ(crc(in.span(0, r.bytes)), crc(out.span().subspan(8192)));
  const StorageCompletion beyond = run(*b, read(3, 1 << 20, in.span()));
  ASSERT_TRUE(beyond.status.ok());
  EXPECT_EQ(beyond.bytes, 0u);
}

TEST_P(StorageConformance, MissingObjectsReadEmptyStatZeroAndRemoveCleanly) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer buf(4096);
  const StorageCompletion r = run(*b, read(99, 0, buf.span()));
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  EXPECT_EQ(r.bytes, 0u);
  StorageRequest stat{StorageOp::stat, 99, 0, {}, false, 0};
  EXPECT_EQ(run(*b, stat).bytes, 0u);
  StorageRequest remove{StorageOp::remove, 99, 0, {}, false, 0};
  EXPECT_TRUE(run(*b, remove).status.ok());

  fill_pattern(buf.span(), 3, 0);
  ASSERT_TRUE(run(*b, write(99, 8192, buf.span())).status.ok());
  EXPECT_EQ(run(*b, stat).bytes, 8192u + 4096u);
  EXPECT_TRUE(run(*b, remove).status.ok());
  EXPECT_EQ(run(*b, stat).bytes, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/target/0000000000000063"));
  EXPECT_EQ(run(*b, read(99, 0, buf.span())).bytes, 0u) << "a removed object reads as empty";
}

// The pages of `path` in the page cache (mincore over a mapping of it).
std::size_t resident_pages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st {};
  std::size_t resident = 0;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    const auto bytes = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> in((bytes + page - 1) / page);
      if (::mincore(map, bytes, in.data()) == 0) {
        resident = static_cast<std::size_t>(std::count_if(in.begin(), in.end(), [](unsigned char v) { return v & 1; }));
      }
      ::munmap(map, bytes);
    }
  }
  ::close(fd);
  return resident;
}

// StorageOp::flush (elbencho's --sync --dropcache between phases): the
// target's dirty pages are written back and its cached pages dropped; the
// data stays.
TEST_P(StorageConformance, AFlushWritesBackAndDropsTheTargetsCachedPages) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer out(64 * 1024 + 13);  // unaligned: through the page cache
  fill_pattern(out.span(), 5, 0);
  ASSERT_TRUE(run(*b, write(5, 13, out.span())).status.ok());
  const std::string object = dir_.path() + "/target/0000000000000005";
  struct statfs fs {};
  ASSERT_EQ(::statfs(object.c_str(), &fs), 0);
  const bool page_cache_is_the_storage = fs.f_type == TMPFS_MAGIC;
  if (!page_cache_is_the_storage) {
    EXPECT_GT(resident_pages(object), 0u) << "a buffered write leaves cached pages";
  }
  const StorageCompletion flushed = run(*b, StorageRequest{StorageOp::flush, 0, 0, {}, false, 0});
  ASSERT_TRUE(flushed.status.ok()) << flushed.status.to_string();
  if (!page_cache_is_the_storage) {
    EXPECT_EQ(resident_pages(object), 0u) << "the flush dropped them";
  }
  AlignedBuffer in(64 * 1024 + 13);
  const StorageCompletion r = run(*b, read(5, 13, in.span()));
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  EXPECT_EQ(crc(in.span()), crc(out.span()));
}

TEST_P(StorageConformance, AlignedRequestsGoDirectAndUnalignedOnesAreBufferedAndCounted) {
  auto b = open();
  ASSERT_TRUE(b);
  const bool direct_here = b->io_path().find("O_DIRECT (") != std::string::npos;
  AlignedBuffer buf(64 * 1024);
  fill_pattern(buf.span(), 4, 0);
  const StorageCompletion aligned = run(*b, write(1, 4096, buf.span()));
  ASSERT_TRUE(aligned.status.ok());
  EXPECT_EQ(aligned.direct, direct_here) << b->io_path();
  const StorageCompletion odd = run(*b, write(1, 4096 + 13, buf.span(1, 1000)));
  ASSERT_TRUE(odd.status.ok());
  EXPECT_FALSE(odd.direct);
  const StorageStats s = b->stats();
  EXPECT_EQ(s.direct_ops + s.buffered_ops, 2u);
  EXPECT_EQ(s.direct_ops, direct_here ? 1u : 0u);
  EXPECT_EQ(s.unaligned_ops, direct_here ? 1u : 0u);
  // What was written through either path reads back.
  AlignedBuffer in(64 * 1024);
  ASSERT_TRUE(run(*b, read(1, 4096, in.span())).status.ok());
  std::vector<std::byte> expect(buf.span().begin(), buf.span().end());
  std::copy_n(buf.span().begin() + 1, 1000, expect.begin() + 13);
  EXPECT_EQ(crc(in.span()), crc(expect));
}

TEST_P(StorageConformance, DirectIoOnRefusesUnalignedRequestsAtOnce) {
  StorageTargetConfig config;
  config.directory = dir_.path() + "/on";
  config.direct_io = DirectIoMode::on;
  Result<std::unique_ptr<StorageBackend>> b = create_storage_backend(GetParam(), config);
  if (!b.ok()) {
    EXPECT_EQ(b.status().code(), StatusCode::unavailable);  // the file system refuses O_DIRECT
    GTEST_SKIP() << b.status().to_string();
  }
  AlignedBuffer buf(8192);
  const Status st = (*b)->submit(write(1, 7, buf.span()));
  EXPECT_EQ(st.code(), StatusCode::invalid_argument);
  EXPECT_NE(st.message().find("k_direct_io_alignment_bytes"), std::string::npos) << st.message();
  EXPECT_TRUE(run(**b, write(1, 4096, buf.span())).direct);
}

TEST_P(StorageConformance, RefusedDirectIoFallsBackVisiblyInAutoAndFailsInOn) {
  std::vector<std::string> logs;
  std::mutex logs_mu;
  StorageTargetConfig config;
  config.inject_direct_io_refusal = true;
  config.log = [&](std::string_view line) {
    std::lock_guard lock(logs_mu);
    logs.emplace_back(line);
  };
  auto b = open(config);
  ASSERT_TRUE(b);
  EXPECT_NE(b->io_path().find("buffered (O_DIRECT refused"), std::string::npos) << b->io_path();
  {
    std::lock_guard lock(logs_mu);
    ASSERT_EQ(logs.size(), 1u);
    EXPECT_NE(logs[0].find("falling back to buffered I/O"), std::string::npos) << logs[0];
  }
  AlignedBuffer buf(8192), in(8192);
  fill_pattern(buf.span(), 5, 0);
  const StorageCompletion w = run(*b, write(2, 0, buf.span()));
  ASSERT_TRUE(w.status.ok());
  EXPECT_FALSE(w.direct);
  EXPECT_EQ(run(*b, read(2, 0, in.span())).crc32c, crc(buf.span()));
  EXPECT_EQ(b->stats().direct_ops, 0u);
  EXPECT_EQ(b->stats().unaligned_ops, 0u) << "refused, not unaligned";

  config.direct_io = DirectIoMode::on;
  config.directory = dir_.path() + "/on";
  Result<std::unique_ptr<StorageBackend>> on = create_storage_backend(GetParam(), config);
  ASSERT_FALSE(on.ok());
  EXPECT_EQ(on.status().code(), StatusCode::unavailable);
  EXPECT_NE(on.status().message().find("O_DIRECT refused"), std::string::npos) << on.status().message();

  config.direct_io = DirectIoMode::off;
  config.directory = dir_.path() + "/off";
  auto off = open(config);
  ASSERT_TRUE(off);
  EXPECT_EQ(off->io_path(), std::string(GetParam() == "uring" ? "io_uring, " : "") + "buffered (direct_io=off)");
}

TEST_P(StorageConformance, QueueDepthBoundsAcceptedRequests) {
  StorageTargetConfig config;
  config.queue_depth = 3;
  auto b = open(config);
  ASSERT_TRUE(b);
  AlignedBuffer buf(4096);
  for (std::uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(b->submit(StorageRequest{StorageOp::write, 1, i * 4096, buf.span(), false, i}).ok());
  }
  const Status full = b->submit(StorageRequest{StorageOp::stat, 1, 0, {}, false, 9});
  EXPECT_EQ(full.code(), StatusCode::again);
  EXPECT_NE(full.message().find("queue_depth 3"), std::string::npos) << full.message();
  for (std::uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(wait(*b, i).status.ok());
  EXPECT_TRUE(b->submit(StorageRequest{StorageOp::stat, 1, 0, {}, false, 9}).ok()) << "room again after polling";
  EXPECT_EQ(wait(*b, 9).bytes, 3u * 4096u);
}

TEST_P(StorageConformance, ManyRequestsInFlightEachCompleteOnceWithTheirData) {
  StorageTargetConfig config;
  config.queue_depth = 16;
  config.max_open_objects = 3;  // smaller than the objects touched: the descriptor cache must evict
  auto b = open(config);
  ASSERT_TRUE(b);
  constexpr std::size_t k_chunk = 64 * 1024;
  constexpr std::size_t k_chunks = 48;
  AlignedBuffer out(k_chunk * k_chunks), in(k_chunk * k_chunks);
  fill_pattern(out.span(), 6, 0);
  const auto pump = [&](StorageOp op, AlignedBuffer& buffer) {
    std::vector<int> seen(k_chunks, 0);
    std::size_t next = 0, done = 0;
    for (int guard = 0; done < k_chunks && guard < 100000; ++guard) {
      while (next < k_chunks) {
        const FileId id = next % 8;
        const std::uint64_t offset = (next / 8) * k_chunk;
        const Status st = b->submit(StorageRequest{op, id, offset, buffer.span(next * k_chunk, k_chunk), false, next});
        if (st.code() == StatusCode::again) break;
        ASSERT_TRUE(st.ok()) << st.to_string();
        ++next;
      }
      std::vector<StorageCompletion> got;
      if (b->poll(got, 64) == 0) {
        pollfd pfd{b->completion_fd(), POLLIN, 0};
        ::poll(&pfd, 1, k_wait_round_ms);
      }
      for (const auto& c : got) {
        ASSERT_TRUE(c.status.ok()) << c.status.to_string();
        EXPECT_EQ(c.bytes, k_chunk);
        EXPECT_EQ(c.crc32c, crc(buffer.span(c.cookie * k_chunk, k_chunk))) << "chunk " << c.cookie;
        ++seen[c.cookie];
        ++done;
      }
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  };
  pump(StorageOp::write, out);
  pump(StorageOp::read, in);
  EXPECT_EQ(crc(in.span()), crc(out.span()));
}

TEST_P(StorageConformance, SyncWritesAreCountedAndSurviveReopening) {
  AlignedBuffer buf(3 * 4096);
  fill_pattern(buf.span(), 8, 0);
  {
    auto b = open();
    ASSERT_TRUE(b);
    const StorageCompletion w = run(*b, write(5, 0, buf.span(), true));
    ASSERT_TRUE(w.status.ok()) << w.status.to_string();
    EXPECT_EQ(w.bytes, buf.span().size());
    EXPECT_EQ(b->stats().sync_writes, 1u);
    ASSERT_TRUE(run(*b, write(5, 5, buf.span(0, 100), true)).status.ok()) << "sync write to an existing object";
    EXPECT_EQ(b->stats().sync_writes, 2u);
  }
  auto again = open();
  ASSERT_TRUE(again);
  AlignedBuffer in(3 * 4096);
  const StorageCompletion r = run(*again, read(5, 0, in.span()));
  std::vector<std::byte> expect(buf.span().begin(), buf.span().end());
  std::copy_n(buf.span().begin(), 100, expect.begin() + 5);
  EXPECT_EQ(r.crc32c, crc(expect));
}

TEST_P(StorageConformance, RegisteredBuffersServeRequestsInsideThem) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer pool(256 * 1024), other(8192);
  const std::vector<std::span<std::byte>> buffers{pool.span(0, 128 * 1024), pool.span(128 * 1024, 128 * 1024)};
  const Status registered = b->register_buffers(buffers);
  if (registered.code() == StatusCode::no_space) {
    // io_uring accounts fixed buffers against RLIMIT_MEMLOCK (64 KiB in some containers).
    GTEST_SKIP() << registered.to_string();
  }
  ASSERT_TRUE(registered.ok()) << registered.to_string();
  fill_pattern(pool.span(0, 64 * 1024), 9, 0);
  ASSERT_TRUE(run(*b, write(4, 0, pool.span(0, 64 * 1024))).status.ok());
  const StorageCompletion r = run(*b, read(4, 0, pool.span(128 * 1024, 64 * 1024)));
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  EXPECT_EQ(crc(pool.span(128 * 1024, 64 * 1024)), crc(pool.span(0, 64 * 1024)));
  // A buffer outside the registered ones still works.
  ASSERT_TRUE(run(*b, read(4, 0, other.span())).status.ok());
  EXPECT_EQ(crc(other.span()), crc(pool.span(0, 8192)));
  const std::vector<std::span<std::byte>> with_empty{std::span<std::byte>()};
  EXPECT_EQ(b->register_buffers(with_empty).code(), StatusCode::invalid_argument);
  const std::vector<std::span<std::byte>> too_many(k_max_registered_buffers + 1, pool.span(0, 4096));
  EXPECT_EQ(b->register_buffers(too_many).code(), StatusCode::invalid_argument);
  EXPECT_TRUE(b->register_buffers({}).ok()) << "an empty set unregisters";
}

TEST_P(StorageConformance, CompletionFdIsReadableOnlyWhileCompletionsWait) {
  auto b = open();
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->submit(StorageRequest{StorageOp::stat, 1, 0, {}, false, 1}).ok());
  pollfd pfd{b->completion_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, k_wait_round_ms * k_wait_rounds), 1);
  EXPECT_TRUE(wait(*b, 1).status.ok());
  std::vector<StorageCompletion> rest;
  b->poll(rest, 64);
  pfd.revents = 0;
  EXPECT_EQ(::poll(&pfd, 1, 0), 0);
}

TEST_P(StorageConformance, RefusesOversizedAndOverflowingRequests) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer buf(4096);
  // Never dereferenced: refused before any I/O.
  const std::span<std::byte> huge(buf.span().data(), k_max_storage_request_bytes + 1);
  const Status big = b->submit(read(1, 0, huge));
  EXPECT_EQ(big.code(), StatusCode::invalid_argument);
  EXPECT_NE(big.message().find("k_max_storage_request_bytes"), std::string::npos);
  EXPECT_EQ(b->submit(write(1, ~std::uint64_t{0} - 10, buf.span())).code(), StatusCode::invalid_argument);
}

TEST_P(StorageConformance, DeviceErrorsNameTheTargetAndObject) {
  auto b = open();
  ASSERT_TRUE(b);
  // An object path that is a directory cannot be opened for I/O.
  std::filesystem::create_directories(dir_.path() + "/target/0000000000000001");
  AlignedBuffer buf(4096);
  const StorageCompletion w = run(*b, write(1, 0, buf.span()));
  ASSERT_FALSE(w.status.ok());
  EXPECT_EQ(w.status.code(), StatusCode::io_error);
  EXPECT_NE(w.status.message().find("0000000000000001"), std::string::npos) << w.status.message();
  EXPECT_NE(w.status.message().find(dir_.path()), std::string::npos) << w.status.message();
  EXPECT_EQ(b->stats().errors, 1u);
}

TEST_P(StorageConformance, RefusesBadTargetConfigs) {
  const auto create = [&](StorageTargetConfig c) { return create_storage_backend(GetParam(), c).status(); };
  EXPECT_EQ(create(StorageTargetConfig{}).code(), StatusCode::invalid_argument) << "no directory";
  EXPECT_EQ(create(config_at(dir_.path() + "/a", 0)).code(), StatusCode::invalid_argument);
  EXPECT_EQ(create(config_at(dir_.path() + "/a", k_max_queue_depth + 1)).code(), StatusCode::invalid_argument);
  StorageTargetConfig no_files = config_at(dir_.path() + "/a");
  no_files.max_open_objects = 0;
  EXPECT_EQ(create(no_files).code(), StatusCode::invalid_argument);
  EXPECT_EQ(create(config_at(dir_.path() + "/missing/parent")).code(), StatusCode::unavailable);
  const std::string file = dir_.path() + "/plain-file";
  ::close(::open(file.c_str(), O_CREAT | O_WRONLY, 0644));
  EXPECT_EQ(create(config_at(file)).code(), StatusCode::unavailable);
}

// ---- CRC32C at rest (issue 26; hw_backends/chunk_files.hpp) -------------------

// Flips one bit of an object file behind the backend's back (a drive that lies).
void flip_on_disk(const std::string& path, std::uint64_t at) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  std::byte b{};
  ASSERT_EQ(::pread(fd, &b, 1, static_cast<off_t>(at)), 1);
  b ^= std::byte{0x04};
  ASSERT_EQ(::pwrite(fd, &b, 1, static_cast<off_t>(at)), 1);
  ::close(fd);
}

TEST_P(StorageConformance, ABitFlippedAtRestIsReportedNamingTheBlockNotServed) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer out(256 * 1024), in(256 * 1024);
  fill_pattern(out.span(), 31, 0);
  ASSERT_TRUE(run(*b, write(5, 0, out.span())).status.ok());
  ASSERT_TRUE(run(*b, read(5, 0, in.span())).status.ok()) << "intact bytes read back";
  flip_on_disk(dir_.path() + "/target/0000000000000005", 100'000);  // in 4 KiB block 24
  for (auto [offset, length] : {std::pair<std::uint64_t, std::size_t>{0, 256 * 1024}, {98'304, 4096}, {99'000, 1500}}) {
    const StorageCompletion r = run(*b, read(5, offset, in.span(0, length)));
    EXPECT_EQ(r.status.code(), StatusCode::corrupt) << offset << ": " << r.status.to_string();
    EXPECT_NE(r.status.message().find("block 24"), std::string::npos) << r.status.to_string();
    EXPECT_NE(r.status.message().find("changed at rest"), std::string::npos) << r.status.to_string();
  }
  // Blocks that did not change still read.
  EXPECT_TRUE(run(*b, read(5, 0, in.span(0, 64 * 1024))).status.ok());
}

// A process killed while a write's bytes were going in, before its CRCs were
// recorded (chunk_files.hpp, "Crashes"): the write began (its blocks marked),
// half its bytes reached the object, and nothing more happened. It shares a
// block with an acknowledged write on each side. After the restart both
// acknowledged writes read back whole and checked, the unfinished range reads
// without a false "changed at rest", and its blocks are checked again after.
TEST_P(StorageConformance, AWriteCutOffByACrashLeavesNoStaleChecksum) {
  const std::string target = dir_.path() + "/target";
  AlignedBuffer before(5000), after(3000), cut(9000);
  fill_pattern(before.span(), 51, 0);
  fill_pattern(cut.span(), 51, 5000);
  fill_pattern(after.span(), 51, 14'000);
  {
    auto b = open();
    ASSERT_TRUE(b);
    ASSERT_TRUE(run(*b, write(13, 0, before.span())).status.ok());
    ASSERT_TRUE(run(*b, write(13, 14'000, after.span())).status.ok());
    // The cut write, as far as the crash let it go, on the same target files.
    StorageTargetConfig config = config_at(target);
    Result<std::unique_ptr<ChunkFiles>> files = ChunkFiles::open(config, "posix");
    ASSERT_TRUE(files.ok()) << files.status().to_string();
    ASSERT_TRUE((*files)->begin_write(13, 5000, 9000).ok());
    const int fd = ::open((target + "/000000000000000d").c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, cut.span().data(), 4500, 5000), 4500);
    ::close(fd);
  }
  std::vector<std::string> logged;
  std::mutex log_mu;
  StorageTargetConfig config;
  config.log = [&](std::string_view line) {
    std::lock_guard lock(log_mu);
    logged.emplace_back(line);
  };
  auto b = open(config);  // the restart
  ASSERT_TRUE(b);
  AlignedBuffer in(17'000);
  const StorageCompletion first = run(*b, read(13, 0, in.span(0, 5000)));
  ASSERT_TRUE(first.status.ok()) << first.status.to_string();
  EXPECT_FALSE(first_pattern_mismatch(in.span(0, 5000), 51, 0).has_value());
  const StorageCompletion last = run(*b, read(13, 14'000, in.span(0, 3000)));
  ASSERT_TRUE(last.status.ok()) << last.status.to_string();
  EXPECT_FALSE(first_pattern_mismatch(in.span(0, 3000), 51, 14'000).has_value());
  const StorageCompletion all = run(*b, read(13, 0, in.span(0, 17'000)));
  ASSERT_TRUE(all.status.ok()) << all.status.to_string();
  EXPECT_FALSE(first_pattern_mismatch(in.span(0, 9500), 51, 0).has_value()) << "what the cut write got in";
  {
    std::lock_guard lock(log_mu);
    ASSERT_FALSE(logged.empty());
    EXPECT_NE(logged.back().find("checksum taken anew"), std::string::npos) << logged.back();
  }
  // The recovered blocks are checked again from now on.
  flip_on_disk(target + "/000000000000000d", 6000);  // block 1, one the cut write marked
  EXPECT_EQ(run(*b, read(13, 4096, in.span(0, 4096))).status.code(), StatusCode::corrupt);
}

TEST_P(StorageConformance, UnalignedOverlappingWritesKeepEveryBlockChecksumRight) {
  auto b = open();
  ASSERT_TRUE(b);
  // Appends and overwrites of odd sizes at odd offsets, crossing and sharing
  // blocks, a gap left unwritten, then a short last block grown.
  std::vector<std::byte> truth;
  const std::vector<std::pair<std::uint64_t, std::size_t>> writes = {
      {0, 1}, {1, 5000}, {4095, 2}, {5001, 12'000}, {30'000, 777}, {3, 8192}, {30'777, 4096}};
  std::uint64_t seed = 1;
  for (auto [offset, length] : writes) {
    AlignedBuffer out(length);
    fill_pattern(out.span(), ++seed, 0);
    ASSERT_TRUE(run(*b, write(9, offset, out.span())).status.ok()) << offset;
    if (truth.size() < offset + length) truth.resize(offset + length);
    std::copy(out.span().begin(), out.span().end(), truth.begin() + static_cast<std::ptrdiff_t>(offset));
  }
  AlignedBuffer in(40'960);
  for (auto [offset, length] : {std::pair<std::uint64_t, std::size_t>{0, truth.size()},
                                {1, 4095},
                                {4094, 9000},
                                {17'000, 13'000},
                                {30'700, 4173}}) {
    const StorageCompletion r = run(*b, read(9, offset, in.span(0, length)));
    ASSERT_TRUE(r.status.ok()) << offset << "+" << length << ": " << r.status.to_string();
    ASSERT_EQ(r.bytes, length);
    EXPECT_TRUE(std::equal(in.span(0, length).begin(), in.span(0, length).end(),
                           truth.begin() + static_cast<std::ptrdiff_t>(offset)))
        << offset;
  }
}

TEST_P(StorageConformance, AWriteWhoseBytesDifferFromTheirExpectedCrcIsRefusedAndNothingIsWritten) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer out(64 * 1024);
  fill_pattern(out.span(), 41, 0);
  StorageRequest w = write(11, 0, out.span());
  w.expected_crc32c = crc(out.span()) ^ 1u;
  const StorageCompletion refused = run(*b, w);
  EXPECT_EQ(refused.status.code(), StatusCode::corrupt) << refused.status.to_string();
  EXPECT_NE(refused.status.message().find("changed after the storage server checked them"), std::string::npos)
      << refused.status.to_string();
  StorageRequest stat{StorageOp::stat, 11, 0, {}, false, 0};
  EXPECT_EQ(run(*b, stat).bytes, 0u) << "nothing was written";
  w.expected_crc32c = crc(out.span());
  EXPECT_TRUE(run(*b, w).status.ok());
  EXPECT_EQ(run(*b, stat).bytes, 64u * 1024u);
}

TEST_P(StorageConformance, RemoveDeletesTheChecksumsWithTheObject) {
  auto b = open();
  ASSERT_TRUE(b);
  AlignedBuffer out(8192);
  fill_pattern(out.span(), 5, 0);
  ASSERT_TRUE(run(*b, write(12, 0, out.span())).status.ok());
  const std::string sidecar = dir_.path() + "/target/000000000000000c.crc";
  EXPECT_TRUE(std::filesystem::exists(sidecar));
  StorageRequest remove{StorageOp::remove, 12, 0, {}, false, 0};
  ASSERT_TRUE(run(*b, remove).status.ok());
  EXPECT_FALSE(std::filesystem::exists(sidecar));
  // A new object of the same id does not inherit the old checksums.
  AlignedBuffer other(4096);
  fill_pattern(other.span(), 6, 0);
  ASSERT_TRUE(run(*b, write(12, 4096, other.span())).status.ok());
  AlignedBuffer in(8192);
  EXPECT_TRUE(run(*b, read(12, 0, in.span())).status.ok());
}

// fallocate: a punch reads as zeros after (edges inside CRC blocks, the
// checksums at rest still right), its space freed; a reservation keeps the
// bytes and the size and takes space; a punch past the end or of a missing
// object changes nothing; a range past the largest offset is refused.
TEST_P(StorageConformance, PunchedRangesReadAsZerosAndReservationsKeepTheSize) {
  auto b = open();
  ASSERT_TRUE(b);
  constexpr std::size_t k_bytes = 1 << 20;
  AlignedBuffer out(k_bytes), in(k_bytes);
  fill_pattern(out.span(), 9, 0);
  ASSERT_TRUE(run(*b, write(21, 0, out.span())).status.ok());
  StorageRequest punch{StorageOp::punch, 21, 100'001, {}, false, 0};
  punch.length = 500'000;
  const StorageCompletion p = run(*b, punch);
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  std::vector<std::byte> want(out.span().begin(), out.span().end());
  std::fill(want.begin() + 100'001, want.begin() + 600'001, std::byte{0});
  const StorageCompletion r = run(*b, read(21, 0, in.span()));
  ASSERT_TRUE(r.status.ok()) << "the CRCs at rest follow the punch: " << r.status.to_string();
  EXPECT_EQ(r.bytes, k_bytes);
  EXPECT_EQ(crc(in.span()), proto::crc32c(want));
  StorageRequest stat{StorageOp::stat, 21, 0, {}, false, 0};
  EXPECT_EQ(run(*b, stat).bytes, k_bytes) << "a punch keeps the size";
  const std::string path = dir_.path() + "/target/0000000000000015";
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const auto punched_blocks = st.st_blocks;
  if (b->stats().punch_by_writing_zeros == 0) {
    EXPECT_LT(static_cast<std::uint64_t>(punched_blocks) * 512, k_bytes - 400'000) << "the hole's space is freed";
  }
  StorageRequest reserve{StorageOp::allocate, 21, 2 * k_bytes, {}, false, 0};
  reserve.length = k_bytes;
  ASSERT_TRUE(run(*b, reserve).status.ok());
  EXPECT_EQ(run(*b, stat).bytes, k_bytes) << "a reservation keeps the size";
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  if (b->stats().allocate_unsupported == 0) {
    EXPECT_GE(static_cast<std::uint64_t>(st.st_blocks - punched_blocks) * 512, k_bytes) << "the space is taken";
  }
  EXPECT_TRUE(run(*b, read(21, 0, in.span())).status.ok());
  EXPECT_EQ(crc(in.span()), proto::crc32c(want)) << "a reservation keeps the bytes";
  StorageRequest beyond{StorageOp::punch, 21, 3 * k_bytes, {}, false, 0};
  beyond.length = 4096;
  EXPECT_TRUE(run(*b, beyond).status.ok());
  EXPECT_EQ(run(*b, stat).bytes, k_bytes);
  StorageRequest missing{StorageOp::punch, 22, 0, {}, false, 0};
  missing.length = 4096;
  EXPECT_TRUE(run(*b, missing).status.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/target/0000000000000016")) << "a missing object stays missing";
  StorageRequest overflowing{StorageOp::allocate, 21, ~std::uint64_t{0} - 10, {}, false, 1};
  overflowing.length = 100;
  const Status refused = b->submit(overflowing);
  EXPECT_EQ(refused.code(), StatusCode::invalid_argument) << refused.to_string();
}

INSTANTIATE_TEST_SUITE_P(Registered, StorageConformance, ::testing::ValuesIn(available_backends()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

TEST(StorageBackendRegistry, ListsPosixAndUringWithTheirVerdicts) {
  const auto listings = list_storage_backends();
  std::map<std::string, StorageBackendListing> by_name;
  for (const auto& l : listings) by_name[l.name] = l;
  ASSERT_TRUE(by_name.contains("posix"));
  EXPECT_TRUE(by_name["posix"].available);
  EXPECT_TRUE(by_name["posix"].capabilities.direct_io);
  ASSERT_TRUE(by_name.contains("uring"));
  if (by_name["uring"].available) {
    EXPECT_TRUE(by_name["uring"].capabilities.registered_buffers);
  } else {
    EXPECT_FALSE(by_name["uring"].why_unavailable.empty());
  }
  Result<std::unique_ptr<StorageBackend>> none = create_storage_backend("tape", config_at("/tmp/sluice-never-created"));
  EXPECT_EQ(none.status().code(), StatusCode::not_found);
  EXPECT_NE(none.status().message().find("posix"), std::string::npos) << none.status().message();
}

TEST(StorageBackendRegistry, BackendsShareTheTargetLayout) {
  // A target written by one backend is read by every other one.
  TempDir dir;
  AlignedBuffer out(8192);
  fill_pattern(out.span(), 10, 0);
  const auto names = available_backends();
  for (const std::string& writer : names) {
    for (const std::string& reader : names) {
      const StorageTargetConfig config = config_at(dir.path() + "/" + writer + "-" + reader);
      auto w = create_storage_backend(writer, config);
      auto r = create_storage_backend(reader, config);
      ASSERT_TRUE(w.ok() && r.ok());
      ASSERT_TRUE((*w)->submit(StorageRequest{StorageOp::write, 12, 0, out.span(), false, 1}).ok());
      std::vector<StorageCompletion> got;
      for (int round = 0; round < k_wait_rounds && got.empty(); ++round) {
        pollfd pfd{(*w)->completion_fd(), POLLIN, 0};
        ::poll(&pfd, 1, k_wait_round_ms);
        (*w)->poll(got, 1);
      }
      ASSERT_EQ(got.size(), 1u);
      AlignedBuffer in(8192);
      ASSERT_TRUE((*r)->submit(StorageRequest{StorageOp::read, 12, 0, in.span(), false, 2}).ok());
      got.clear();
      for (int round = 0; round < k_wait_rounds && got.empty(); ++round) {
        pollfd pfd{(*r)->completion_fd(), POLLIN, 0};
        ::poll(&pfd, 1, k_wait_round_ms);
        (*r)->poll(got, 1);
      }
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].crc32c, crc(out.span())) << writer << " -> " << reader;
    }
  }
}

}  // namespace
}  // namespace sluice::hw
