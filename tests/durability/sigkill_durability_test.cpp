// Real crashes: a process that writes chunk files (posix, io_uring) or a
// RocksDB metadata store is killed with SIGKILL mid-write, at a seeded random
// moment, and restarted from the same storage root, round after round; every
// acknowledged write must read back exactly (checksums at rest included) and
// every acknowledged create and remove must hold. The writer is
// tests/durability/child/crash_child.cpp; an acknowledgement is a line it
// wrote after the call completed, so whatever the parent read (also after the
// kill, to the pipe's end) was acknowledged.
//
// What this shows is durability across a crash of the process (the kernel
// keeps what write(2) and io_uring completed, and RocksDB's WAL is in the OS
// before a write returns), with sync off and on; power loss needs sync on and
// is not something a test here can cut.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/pattern.hpp"
#include "hw_backends/storage_backend.hpp"
#include "tests/durability/crash_pattern.hpp"
#include "tests/support/scratch_dir.hpp"
#ifdef SLUICE_HAVE_ROCKSDB
#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"
#endif

extern char** environ;

namespace sluice {
namespace {

constexpr int k_rounds = 10;               // kill and restart this many times per case
constexpr int k_min_acks_before_kill = 5;  // the kill comes after a seeded count in [min, max]
constexpr int k_max_acks_before_kill = 400;
constexpr int k_line_wait_ms = 10'000;  // a child silent this long is hung: the test fails

// A crash_child process with its stdout on a pipe.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    std::vector<char*> argv;
    std::vector<std::string> all = {SLUICE_CRASH_CHILD};
    all.insert(all.end(), args.begin(), args.end());
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0) kill_and_reap();
    if (out_ >= 0) ::close(out_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }

  // The next whole line; nullopt at the end of the pipe or after k_line_wait_ms of silence (hung set).
  std::optional<std::string> line() {
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string l = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return l;
      }
      pollfd pfd{out_, POLLIN, 0};
      if (::poll(&pfd, 1, k_line_wait_ms) <= 0) {
        hung = true;
        return std::nullopt;
      }
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;  // a partial last line was never acknowledged
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // SIGKILL, then the exit status (-1 if it could not be reaped).
  int kill_and_reap() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    const pid_t got = ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return got > 0 ? status : -1;
  }

  bool hung = false;

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buffer_;
};

// Runs the child until `kill_after` acknowledgements, kills it, and returns
// every acknowledgement line (those read after the kill too) and every
// announcement of a call about to be made ("try ..."). Fails the test
// on an error line or a hang.
std::vector<std::string> run_and_kill(const std::vector<std::string>& args, int kill_after) {
  Child child(args);
  EXPECT_TRUE(child.started()) << "cannot start " << SLUICE_CRASH_CHILD;
  std::vector<std::string> lines;
  int acks = 0;
  bool killed = false;
  while (std::optional<std::string> l = child.line()) {
    EXPECT_EQ(l->rfind("error", 0), std::string::npos) << *l;
    if (l->rfind("ack", 0) == 0 || l->rfind("try", 0) == 0) lines.push_back(*l);
    if (l->rfind("ack", 0) == 0) ++acks;
    if (!killed && acks >= kill_after) {
      const int status = child.kill_and_reap();
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child ended before the kill";
      killed = true;
    }
  }
  EXPECT_FALSE(child.hung) << "the child was silent for " << k_line_wait_ms << " ms";
  EXPECT_TRUE(killed) << "the child ended after " << acks << " acknowledgements, before the kill";
  return lines;
}

// ---- chunk files -------------------------------------------------------------

constexpr std::uint64_t k_unsettled = ~std::uint64_t{0};  // a write in flight at a kill: old or new bytes

// What each byte of one object must hold: [begin, end) -> the generation of
// the last acknowledged write there, or k_unsettled.
class ObjectTruth {
 public:
  struct Segment {
    std::uint64_t end = 0;
    std::uint64_t gen = 0;
  };
  void assign(std::uint64_t begin, std::uint64_t end, std::uint64_t gen) {
    split(begin);
    split(end);
    segments_.erase(segments_.lower_bound(begin), segments_.lower_bound(end));
    segments_[begin] = Segment{end, gen};
  }
  const std::map<std::uint64_t, Segment>& segments() const { return segments_; }

 private:
  void split(std::uint64_t at) {
    auto it = segments_.upper_bound(at);
    if (it == segments_.begin()) return;
    --it;
    if (it->first < at && at < it->second.end) {
      segments_[at] = Segment{it->second.end, it->second.gen};
      it->second.end = at;
    }
  }
  std::map<std::uint64_t, Segment> segments_;
};

struct WriteLine {
  FileId id = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t gen = 0;
  auto key() const { return std::tuple(id, offset, length, gen); }
};

// One round's lines into the truth: acknowledged writes settle their range;
// writes tried and not acknowledged (in flight at the kill) unsettle theirs.
void take_storage_lines(const std::vector<std::string>& lines, std::map<FileId, ObjectTruth>& truth) {
  std::map<std::tuple<FileId, std::uint64_t, std::uint64_t, std::uint64_t>, WriteLine> tried;
  for (const std::string& l : lines) {
    std::istringstream in(l);
    std::string word;
    WriteLine w;
    in >> word >> w.id >> w.offset >> w.length >> w.gen;
    ASSERT_FALSE(in.fail()) << "not a write line: " << l;
    if (word == "try") {
      tried[w.key()] = w;
    } else {
      ASSERT_EQ(tried.erase(w.key()), 1u) << "acknowledged, never tried: " << l;
      truth[w.id].assign(w.offset, w.offset + w.length, w.gen);
    }
  }
  for (const auto& [key, w] : tried) truth[w.id].assign(w.offset, w.offset + w.length, k_unsettled);
}

// Reads one range through `backend`; the completion.
hw::StorageCompletion read_range(hw::StorageBackend& backend, FileId id, std::uint64_t offset,
                                 std::vector<std::byte>& buffer) {
  EXPECT_TRUE(backend.submit({StorageOp::read, id, offset, buffer, false, 7}).ok());
  std::vector<hw::StorageCompletion> got;
  for (int round = 0; round < 20'000 && got.empty(); ++round) {
    if (backend.poll(got, 1) == 0) ::usleep(50);
  }
  if (got.empty()) return hw::StorageCompletion{7, Status(StatusCode::timed_out, "no completion in 1 s")};
  return got[0];
}

// The restart: a fresh backend on `dir` reads every range of every object.
// Every read must succeed (a write cut by the kill must not make its blocks,
// or acknowledged bytes beside it, read as corrupt), and every settled range
// must hold its write's bytes. Returns the settled bytes checked.
std::uint64_t verify_objects(const std::string& backend_name, const std::string& dir,
                             const std::map<FileId, ObjectTruth>& truth) {
  hw::StorageTargetConfig config;
  config.directory = dir;
  Result<std::unique_ptr<hw::StorageBackend>> opened = hw::create_storage_backend(backend_name, config);
  EXPECT_TRUE(opened.ok()) << "restart: " << opened.status().to_string();
  if (!opened.ok()) return 0;
  std::vector<std::byte> buffer;
  std::uint64_t checked = 0;
  for (const auto& [id, object] : truth) {
    for (const auto& [begin, segment] : object.segments()) {
      buffer.assign(segment.end - begin, std::byte{0});
      const hw::StorageCompletion c = read_range(**opened, id, begin, buffer);
      const std::string where =
          "object " + std::to_string(id) + " [" + std::to_string(begin) + ", " + std::to_string(segment.end) + ")";
      if (!c.status.ok()) {
        ADD_FAILURE() << where << " does not read after the restart: " << c.status.to_string();
        return checked;
      }
      if (segment.gen == k_unsettled) continue;
      if (c.bytes != buffer.size()) {
        ADD_FAILURE() << where << ": acknowledged, " << c.bytes << " bytes read back";
        return checked;
      }
      if (auto bad = first_pattern_mismatch(buffer, pattern_seed(id, segment.gen), begin)) {
        ADD_FAILURE() << where << ": acknowledged, byte " << *bad << " is wrong";
        return checked;
      }
      checked += buffer.size();
    }
  }
  return checked;
}

bool backend_available(const std::string& name) {
  for (const auto& l : hw::list_storage_backends()) {
    if (l.name == name) return l.available;
  }
  return false;
}

struct StorageCase {
  std::string backend;
  bool sync = false;
};

class SigkillStorage : public ::testing::TestWithParam<StorageCase> {};

TEST_P(SigkillStorage, EveryAcknowledgedWriteReadsBackAfterTheWriterIsKilledAndRestarted) {
  const StorageCase c = GetParam();
  if (!backend_available(c.backend)) GTEST_SKIP() << c.backend << " is not available here";
  testing::ScratchDir root;
  ASSERT_FALSE(root.path().empty());
  const std::string dir = root.path() + "/target";
  std::mt19937_64 rng(c.sync ? 1001 : 1000);
  std::map<FileId, ObjectTruth> truth;
  std::uint64_t checked = 0;
  for (int round = 0; round < k_rounds && !HasFailure(); ++round) {
    const int kill_after =
        k_min_acks_before_kill + static_cast<int>(rng() % (k_max_acks_before_kill - k_min_acks_before_kill + 1));
    take_storage_lines(run_and_kill({"storage", c.backend, dir, std::to_string(rng()), c.sync ? "1" : "0"}, kill_after),
                       truth);
    checked = verify_objects(c.backend, dir, truth);
    ASSERT_FALSE(HasFailure()) << "round " << round << ", killed after " << kill_after << " acknowledgements";
  }
  EXPECT_GT(checked, 0u);
  RecordProperty("acknowledged_bytes_checked", static_cast<int>(checked));
}

INSTANTIATE_TEST_SUITE_P(Backends, SigkillStorage,
                         ::testing::Values(StorageCase{"posix", false}, StorageCase{"posix", true},
                                           StorageCase{"uring", false}, StorageCase{"uring", true}),
                         [](const ::testing::TestParamInfo<StorageCase>& param_info) {
                           return param_info.param.backend + (param_info.param.sync ? "_sync" : "_buffered");
                         });

// ---- RocksDB metadata store ----------------------------------------------------

#ifdef SLUICE_HAVE_ROCKSDB
struct MetaTruth {
  std::set<std::uint64_t> present;  // acknowledged creates not removed since (nor being removed at a kill)
  std::set<std::uint64_t> removed;  // acknowledged removes
  std::uint64_t highest = 0;        // the highest acknowledged create
};

// A remove announced ("try rm N") and not acknowledged was under way at the
// kill: its entry may be there or not.
void take_meta_lines(const std::vector<std::string>& lines, MetaTruth& truth) {
  for (const std::string& l : lines) {
    std::istringstream in(l);
    std::string word, op;
    std::uint64_t n = 0;
    in >> word >> op >> n;
    ASSERT_FALSE(in.fail()) << "not an acknowledgement: " << l;
    if (word == "try") {
      truth.present.erase(n);
    } else if (op == "put") {
      truth.present.insert(n);
      truth.highest = std::max(truth.highest, n);
    } else {
      truth.present.erase(n);
      truth.removed.insert(n);
    }
  }
}

// The restart: the store reopened from `dir` holds every acknowledged create
// and none of the acknowledged removes; its entry count is what it lists; the
// file-id counter is not behind any entry.
void verify_meta(const std::string& dir, const MetaTruth& truth) {
  hw::RocksDbMetaStoreConfig config;
  config.path = dir;
  Result<std::unique_ptr<hw::RocksDbMetaStore>> opened = hw::RocksDbMetaStore::open(config);
  ASSERT_TRUE(opened.ok()) << "restart: " << opened.status().to_string();
  MetaStore& store = **opened;
  for (std::uint64_t n : truth.present) {
    Result<proto::InodeDesc> e = store.get_entry("/d", "f" + std::to_string(n));
    ASSERT_TRUE(e.ok()) << "acknowledged create f" << n << " is gone: " << e.status().to_string();
    EXPECT_EQ(e->file_id, n);
    EXPECT_EQ(e->size_bytes, n * 7);
  }
  for (std::uint64_t n : truth.removed) {
    EXPECT_FALSE(store.get_entry("/d", "f" + std::to_string(n)).ok()) << "acknowledged remove of f" << n << " undone";
  }
  std::uint64_t listed = 0;
  std::uint64_t highest_listed = 0;
  for (std::uint64_t cookie = 0;;) {
    MetaListPage page = store.list("/d", cookie, 1000);
    for (const auto& [name, inode] : page.entries) highest_listed = std::max(highest_listed, inode.file_id);
    listed += page.entries.size();
    if (page.eof || page.entries.empty()) break;
    cookie = page.next_cookie;
  }
  EXPECT_EQ(store.entry_count("/d"), listed) << "the entry count moved apart from the entries";
  EXPECT_GE(listed, truth.present.size());
  EXPECT_GE(store.load_counter(), std::max(truth.highest, highest_listed)) << "the file-id counter went back";
}

// Each mutation committed by its own call, and group-committed (the store's
// group_commit, acknowledged after commit(), as real runs' metadata servers).
TEST(SigkillRocksDb, EveryAcknowledgedCreateAndRemoveHoldsAfterTheServerIsKilledAndRestarted) {
  for (const bool group : {false, true}) {
    for (const bool sync : {false, true}) {
      SCOPED_TRACE(std::string(sync ? "sync" : "no sync") + (group ? ", group commit" : ""));
      testing::ScratchDir root;
      ASSERT_FALSE(root.path().empty());
      const std::string dir = root.path() + "/meta";
      std::mt19937_64 rng((sync ? 2001 : 2000) + (group ? 10 : 0));
      MetaTruth truth;
      for (int round = 0; round < k_rounds && !HasFailure(); ++round) {
        const int kill_after =
            k_min_acks_before_kill + static_cast<int>(rng() % (k_max_acks_before_kill - k_min_acks_before_kill + 1));
        take_meta_lines(
            run_and_kill({"meta", dir, std::to_string(rng()), sync ? "1" : "0", group ? "1" : "0"}, kill_after), truth);
        verify_meta(dir, truth);
      }
      EXPECT_FALSE(truth.present.empty());
    }
  }
}
#endif

}  // namespace
}  // namespace sluice
