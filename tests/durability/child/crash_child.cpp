// The process the durability tests kill with SIGKILL (tests/durability/
// sigkill_durability_test.cpp). It writes to a storage root for ever (bounded)
// and announces every acknowledgement on stdout, one line each, written with
// write(2) only after the call it acknowledges completed:
//
//   crash_child storage BACKEND DIR SEED SYNC
//     one storage target of BACKEND (posix, uring) at DIR, as a storage
//     server drives it: up to k_in_flight writes at once, to k_objects
//     objects, of 1 byte to 64 KiB (a third of them 4 KiB-aligned); appends,
//     and one in three an overwrite inside the object that overlaps no write
//     in flight. Each write has a generation; its bytes are
//     fill_pattern(pattern_seed(id, gen), offset). "try ID OFFSET LENGTH GEN"
//     before the submit, "ack ID OFFSET LENGTH GEN" after the completion.
//     Objects are continued from their size at start, so a restarted child
//     goes on where the killed one stopped.
//   crash_child meta DIR SEED SYNC GROUP
//     a RocksDB metadata store at DIR, as a metadata server drives it:
//     entries "f<N>" created under "/d" (N from the file-id counter, which is
//     stored before the entry: a counter never goes back), every seventh an
//     earlier entry removed ("try rm N" before the call, so the parent knows
//     which remove was under way at the kill); each completion -> "ack put N"
//     or "ack rm N". GROUP 1: the store group-commits (group_commit), and
//     the child acknowledges 1 to 8 operations (seeded) together after
//     commit(), as a metadata server's replies leave after its turn's commit.
//
// SYNC is 0 or 1 (writes durable on completion). Ends by itself, exit 0,
// after k_max_ops operations or k_max_run_s seconds; exit 2 on bad arguments,
// 3 when a call fails (the line "error ..." says which).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/durability/crash_pattern.hpp"
#include "hw_backends/storage_backend.hpp"
#ifdef SLUICE_HAVE_ROCKSDB
#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"
#endif

namespace {

using namespace sluice;

constexpr std::uint64_t k_max_ops = 200'000;
constexpr int k_max_run_s = 60;
constexpr std::size_t k_in_flight = 4;
constexpr std::uint64_t k_objects = 3;
constexpr std::size_t k_max_append_bytes = 64 * 1024;

// One line to stdout, unbuffered: what the parent reads is what was acknowledged.
void say(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) std::exit(4);  // the parent is gone
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void fail(const std::string& what) {
  say("error " + what);
  std::exit(3);
}

bool out_of_time(std::chrono::steady_clock::time_point start, std::uint64_t ops) {
  return ops >= k_max_ops || std::chrono::steady_clock::now() - start > std::chrono::seconds(k_max_run_s);
}

// Waits for at least one completion of `backend`.
std::vector<hw::StorageCompletion> take_completions(hw::StorageBackend& backend) {
  std::vector<hw::StorageCompletion> got;
  for (int round = 0; round < 10'000 && got.empty(); ++round) {
    if (backend.poll(got, 64) == 0) ::usleep(50);
  }
  if (got.empty()) fail("no completion within 0.5 s");
  return got;
}

std::uint64_t object_size(hw::StorageBackend& backend, FileId id) {
  hw::StorageRequest stat{StorageOp::stat, id, 0, {}, false, 1'000'000 + id};
  if (Status st = backend.submit(stat); !st.ok()) fail("stat: " + st.to_string());
  std::vector<hw::StorageCompletion> got = take_completions(backend);
  if (!got[0].status.ok()) fail("stat: " + got[0].status.to_string());
  return got[0].bytes;
}

struct Write {
  FileId id = 0;
  std::uint64_t offset = 0;
  std::uint64_t gen = 0;  // its bytes: fill_pattern(pattern_seed(id, gen), offset)
  std::vector<std::byte> bytes;
};

bool overlaps(const std::map<std::uint64_t, Write>& in_flight, FileId id, std::uint64_t begin, std::uint64_t end) {
  for (const auto& [cookie, w] : in_flight) {
    if (w.id == id && w.offset < end && begin < w.offset + w.bytes.size()) return true;
  }
  return false;
}

// The next write: an append, or (one in three, once the object has bytes) an
// overwrite inside it that no write in flight overlaps.
Write next_write(std::mt19937_64& rng, std::map<FileId, std::uint64_t>& end,
                 const std::map<std::uint64_t, Write>& in_flight) {
  Write w;
  w.id = 1 + rng() % k_objects;
  w.gen = rng() >> 24;
  const std::size_t length =
      rng() % 3 == 0 ? 4096 * (1 + rng() % 16) : 1 + static_cast<std::size_t>(rng() % k_max_append_bytes);
  w.offset = end[w.id];
  if (rng() % 3 == 0 && end[w.id] > 0) {
    const std::uint64_t at = rng() % end[w.id];
    if (!overlaps(in_flight, w.id, at, at + length)) w.offset = at;
  }
  end[w.id] = std::max(end[w.id], w.offset + length);
  w.bytes.resize(length);
  fill_pattern(w.bytes, pattern_seed(w.id, w.gen), w.offset);
  return w;
}

std::string describe(const Write& w) {
  return std::to_string(w.id) + " " + std::to_string(w.offset) + " " + std::to_string(w.bytes.size()) + " " +
         std::to_string(w.gen);
}

int run_storage(const std::string& backend_name, const std::string& dir, std::uint64_t seed, bool sync) {
  hw::StorageTargetConfig config;
  config.directory = dir;
  config.queue_depth = 16;
  Result<std::unique_ptr<hw::StorageBackend>> opened = hw::create_storage_backend(backend_name, config);
  if (!opened.ok()) fail("open: " + opened.status().to_string());
  hw::StorageBackend& backend = **opened;
  std::map<FileId, std::uint64_t> end;  // each object's size, as far as this run's writes go
  for (FileId id = 1; id <= k_objects; ++id) end[id] = object_size(backend, id);
  std::mt19937_64 rng(seed);
  std::map<std::uint64_t, Write> in_flight;  // by cookie
  std::uint64_t next_cookie = 1;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t ops = 0; !out_of_time(start, ops);) {
    while (in_flight.size() < k_in_flight) {
      const std::uint64_t cookie = next_cookie++;
      Write& w = in_flight.emplace(cookie, next_write(rng, end, in_flight)).first->second;
      say("try " + describe(w));
      if (Status st = backend.submit({StorageOp::write, w.id, w.offset, w.bytes, sync, cookie}); !st.ok())
        fail("submit: " + st.to_string());
    }
    for (const hw::StorageCompletion& c : take_completions(backend)) {
      auto it = in_flight.find(c.cookie);
      if (it == in_flight.end()) fail("a completion for an unknown cookie");
      if (!c.status.ok()) fail("write: " + c.status.to_string());
      say("ack " + describe(it->second));
      in_flight.erase(it);
      ++ops;
    }
  }
  return 0;
}

#ifdef SLUICE_HAVE_ROCKSDB
proto::InodeDesc file_inode(std::uint64_t n) {
  proto::InodeDesc inode;
  inode.file_id = n;
  inode.type = proto::InodeType::file;
  inode.mode = 0644;
  inode.size_bytes = n * 7;
  return inode;
}

// One create or remove of run_meta; its acknowledgement line is returned
// (said at once, or after the group's commit).
std::string meta_op(MetaStore& store, std::uint64_t ops, std::mt19937_64& rng, std::deque<std::uint64_t>& created,
                    std::uint64_t* put) {
  *put = 0;
  if (ops % 7 == 6 && !created.empty()) {
    const std::size_t pick = rng() % created.size();
    const std::uint64_t n = created[pick];
    created.erase(created.begin() + static_cast<std::ptrdiff_t>(pick));
    say("try rm " + std::to_string(n));
    if (Status st = store.remove_entry("/d", "f" + std::to_string(n)); !st.ok()) fail("remove: " + st.to_string());
    return "ack rm " + std::to_string(n);
  }
  const std::uint64_t n = store.load_counter() + 1;
  if (Status st = store.store_counter(n); !st.ok()) fail("store_counter: " + st.to_string());
  if (Status st = store.put_entry("/d", "f" + std::to_string(n), file_inode(n)); !st.ok())
    fail("put_entry: " + st.to_string());
  *put = n;
  return "ack put " + std::to_string(n);
}

int run_meta(const std::string& dir, std::uint64_t seed, bool sync, bool group) {
  hw::RocksDbMetaStoreConfig config;
  config.path = dir;
  config.sync_writes = sync;
  config.group_commit = group;
  Result<std::unique_ptr<hw::RocksDbMetaStore>> opened = hw::RocksDbMetaStore::open(config);
  if (!opened.ok()) fail("open: " + opened.status().to_string());
  MetaStore& store = **opened;
  if (!store.get_dir("/d").ok()) {
    proto::InodeDesc dir_inode;
    dir_inode.type = proto::InodeType::dir;
    dir_inode.mode = 0755;
    if (Status st = store.put_dir("/d", dir_inode); !st.ok()) fail("put_dir: " + st.to_string());
    if (Status st = store.commit(); !st.ok()) fail("commit: " + st.to_string());
  }
  std::mt19937_64 rng(seed);
  std::deque<std::uint64_t> created;  // this run's acknowledged creates, removable
  // Group commit: 1..k_max_group operations, then commit(), then their acknowledgements.
  constexpr std::uint64_t k_max_group = 8;
  std::vector<std::pair<std::string, std::uint64_t>> pending;  // ack line, create (0: a remove)
  std::uint64_t group_left = group ? 1 + rng() % k_max_group : 1;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t ops = 0; !out_of_time(start, ops); ++ops) {
    std::uint64_t put = 0;
    pending.emplace_back(meta_op(store, ops, rng, created, &put), put);
    if (--group_left > 0) continue;
    if (Status st = store.commit(); !st.ok()) fail("commit: " + st.to_string());
    for (const auto& [line, n] : pending) {
      say(line);
      if (n != 0) created.push_back(n);
    }
    pending.clear();
    group_left = group ? 1 + rng() % k_max_group : 1;
  }
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto number = [&](std::size_t i) { return std::strtoull(args[i].c_str(), nullptr, 10); };
  if (args.size() == 5 && args[0] == "storage") return run_storage(args[1], args[2], number(3), args[4] == "1");
#ifdef SLUICE_HAVE_ROCKSDB
  if (args.size() == 5 && args[0] == "meta") return run_meta(args[1], number(2), args[3] == "1", args[4] == "1");
#endif
  std::fprintf(stderr, "usage: crash_child storage BACKEND DIR SEED SYNC | meta DIR SEED SYNC GROUP\n");
  return 2;
}
