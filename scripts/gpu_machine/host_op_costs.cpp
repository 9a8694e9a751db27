// Host operation costs (issue 19: a source for every simulator profile
// parameter, sim/profiles/default.json "sources"). One thread, medians of
// REPS repeats, on the machine it runs on:
//   meta op=<create|stat|mkdir|unlink|rename|setattr|readdir_entry>
//        ns_per_op   local file-system metadata operations (mdtest's set) on
//                    DIR: a Lustre MDT or BeeGFS metadata server stores its
//                    namespace in a local file system (ldiskfs = ext4, or
//                    ext4/xfs), so the ratios between these costs are the
//                    ratios the profile's meta_* costs keep;
//   chunk op=<stat|unlink> ns_per_op   stat and unlink of a 1 MiB chunk file
//                    (the storage server's remove/stat of a chunk object,
//                    SimProfile disk_metadata_latency_ns);
//   crc32c gb_per_s  ISA-L crc32_iscsi over 64 MiB (what core/proto/crc32c
//                    calls: SimProfile memory_op_bytes_per_s);
//   memcpy gb_per_s  one thread copying 256 MiB within one memory
//                    (SimProfile same_location_copy_bytes_per_s);
//   loopback_tcp one_way_ns   half the round trip of a 64-byte message
//                    ping-pong over 127.0.0.1 with TCP_NODELAY (SimProfile
//                    local_message_latency_ns);
//   fdatasync ns_per_op   a 4 KiB pwrite + fdatasync on DIR's device (for the
//                    record: the profile's sync latency is a data-sheet NVMe's).
// Not part of the build: scripts/gpu_machine/device_host_op_costs_run.sh compiles it
// (g++ -O2 -pthread, ISA-L) and runs it here and on the GPU machine.
// Usage: host_op_costs DIR REPS
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <isa-l/crc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int k_meta_files = 20000;  // entries per metadata repeat
constexpr int k_chunk_files = 2000;  // 1 MiB chunk files per repeat
constexpr std::size_t k_chunk_bytes = 1 << 20;
constexpr std::size_t k_crc_bytes = 64u << 20;
constexpr std::size_t k_copy_bytes = 256u << 20;
constexpr int k_round_trips = 20000;
constexpr int k_syncs = 500;

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point t0) { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

[[noreturn]] void die(const std::string& what) {
  std::perror(what.c_str());
  std::exit(1);
}

std::string name_of(const std::string& dir, const char* prefix, int i) {
  return dir + "/" + prefix + std::to_string(i);
}

// One repeat of the metadata set in a fresh directory; ns per op of each.
std::vector<double> meta_repeat(const std::string& root, int rep) {
  const std::string dir = root + "/meta" + std::to_string(rep);
  if (mkdir(dir.c_str(), 0755) != 0) die("mkdir " + dir);
  std::vector<double> out;
  auto t0 = Clock::now();
  for (int i = 0; i < k_meta_files; ++i) {
    const int fd = open(name_of(dir, "f", i).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0 || close(fd) != 0) die("create");
  }
  out.push_back(ns_since(t0) / k_meta_files);
  struct stat st {};
  t0 = Clock::now();
  for (int i = 0; i < k_meta_files; ++i) {
    if (stat(name_of(dir, "f", i).c_str(), &st) != 0) die("stat");
  }
  out.push_back(ns_since(t0) / k_meta_files);
  t0 = Clock::now();
  for (int i = 0; i < k_meta_files; ++i) {
    if (mkdir(name_of(dir, "d", i).c_str(), 0755) != 0) die("mkdir");
  }
  out.push_back(ns_since(t0) / k_meta_files);
  t0 = Clock::now();
  for (int i = 0; i < k_meta_files; ++i) {
    if (chmod(name_of(dir, "f", i).c_str(), 0600) != 0) die("chmod");
  }
  out.push_back(ns_since(t0) / k_meta_files);
  t0 = Clock::now();
  for (int i = 0; i < k_meta_files; ++i) {
    if (rename(name_of(dir, "f", i).c_str(), name_of(dir, "g", i).c_str()) != 0) die("rename");
  }
  out.push_back(ns_since(t0) / k_meta_files);
  t0 = Clock::now();
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) die("opendir");
  int entries = 0;
  while (readdir(d) != nullptr) ++entries;
  closedir(d);
  out.push_back(ns_since(t0) / entries);
  t0 = Clock::now();
  for (int i = 0; i < k_meta_files; ++i) {
    if (unlink(name_of(dir, "g", i).c_str()) != 0) die("unlink");
  }
  out.push_back(ns_since(t0) / k_meta_files);
  for (int i = 0; i < k_meta_files; ++i) rmdir(name_of(dir, "d", i).c_str());
  rmdir(dir.c_str());
  return out;
}

// stat and unlink of 1 MiB chunk files (written and fsynced first, so the
// unlink frees real extents).
std::pair<double, double> chunk_repeat(const std::string& root, int rep) {
  const std::string dir = root + "/chunks" + std::to_string(rep);
  if (mkdir(dir.c_str(), 0755) != 0) die("mkdir " + dir);
  std::vector<char> data(k_chunk_bytes, 'x');
  for (int i = 0; i < k_chunk_files; ++i) {
    const int fd = open(name_of(dir, "c", i).c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd < 0 || write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) die("chunk write");
    close(fd);
  }
  sync();
  struct stat st {};
  auto t0 = Clock::now();
  for (int i = 0; i < k_chunk_files; ++i) {
    if (stat(name_of(dir, "c", i).c_str(), &st) != 0) die("chunk stat");
  }
  const double stat_ns = ns_since(t0) / k_chunk_files;
  t0 = Clock::now();
  for (int i = 0; i < k_chunk_files; ++i) {
    if (unlink(name_of(dir, "c", i).c_str()) != 0) die("chunk unlink");
  }
  const double unlink_ns = ns_since(t0) / k_chunk_files;
  rmdir(dir.c_str());
  return {stat_ns, unlink_ns};
}

double crc_gbps() {
  std::vector<unsigned char> buf(k_crc_bytes);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i * 131);
  const auto t0 = Clock::now();
  volatile unsigned sink = crc32_iscsi(buf.data(), static_cast<int>(buf.size()), 0xffffffffu);
  (void)sink;
  return static_cast<double>(k_crc_bytes) / ns_since(t0);
}

double memcpy_gbps() {
  std::vector<char> a(k_copy_bytes, 'a'), b(k_copy_bytes, 'b');
  std::memcpy(b.data(), a.data(), a.size());  // fault the pages in first
  const auto t0 = Clock::now();
  std::memcpy(b.data(), a.data(), a.size());
  const double gbps = static_cast<double>(k_copy_bytes) / ns_since(t0);
  volatile char sink = b[k_copy_bytes / 2];
  (void)sink;
  return gbps;
}

void set_nodelay(int fd) {
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
}

void read_exact(int fd, char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t got = read(fd, p, n);
    if (got <= 0) die("loopback read");
    p += got;
    n -= static_cast<std::size_t>(got);
  }
}

// Half the median-of-batches round trip of 64-byte messages over loopback.
double loopback_one_way_ns() {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    die("loopback listen");
  }
  std::thread echo([listener] {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) die("accept");
    set_nodelay(fd);
    char msg[64];
    for (int i = 0; i < k_round_trips; ++i) {
      read_exact(fd, msg, sizeof msg);
      if (write(fd, msg, sizeof msg) != static_cast<ssize_t>(sizeof msg)) die("echo write");
    }
    close(fd);
  });
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("connect");
  set_nodelay(fd);
  char msg[64] = {};
  std::vector<double> batches;
  constexpr int k_batch = 1000;
  for (int b = 0; b < k_round_trips / k_batch; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < k_batch; ++i) {
      if (write(fd, msg, sizeof msg) != static_cast<ssize_t>(sizeof msg)) die("ping write");
      read_exact(fd, msg, sizeof msg);
    }
    batches.push_back(ns_since(t0) / k_batch / 2);
  }
  echo.join();
  close(fd);
  close(listener);
  return median(batches);
}

double fdatasync_ns(const std::string& root) {
  const std::string path = root + "/sync.dat";
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) die("open " + path);
  std::vector<char> page(4096, 's');
  const auto t0 = Clock::now();
  for (int i = 0; i < k_syncs; ++i) {
    if (pwrite(fd, page.data(), page.size(), static_cast<off_t>(i) * 4096) != 4096 || fdatasync(fd) != 0) {
      die("pwrite+fdatasync");
    }
  }
  const double ns = ns_since(t0) / k_syncs;
  close(fd);
  unlink(path.c_str());
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: host_op_costs DIR REPS\n");
    return 2;
  }
  const std::string root = argv[1];
  const int reps = std::atoi(argv[2]);
  if (reps < 1 || reps > 100) {
    std::fprintf(stderr, "host_op_costs: REPS must be in [1, 100], got %s\n", argv[2]);
    return 2;
  }
  const char* names[] = {"create", "stat", "mkdir", "setattr", "rename", "readdir_entry", "unlink"};
  std::vector<std::vector<double>> meta(7);
  std::vector<double> chunk_stat, chunk_unlink, crc, copy, loop, syncs;
  for (int r = 0; r < reps; ++r) {
    const std::vector<double> one = meta_repeat(root, r);
    for (std::size_t k = 0; k < one.size(); ++k) meta[k].push_back(one[k]);
    const auto [s, u] = chunk_repeat(root, r);
    chunk_stat.push_back(s);
    chunk_unlink.push_back(u);
    crc.push_back(crc_gbps());
    copy.push_back(memcpy_gbps());
    loop.push_back(loopback_one_way_ns());
    syncs.push_back(fdatasync_ns(root));
  }
  for (std::size_t k = 0; k < meta.size(); ++k) {
    std::printf("meta op=%s ns_per_op=%.0f\n", names[k], median(meta[k]));
  }
  std::printf("chunk op=stat ns_per_op=%.0f\nchunk op=unlink ns_per_op=%.0f\n", median(chunk_stat),
              median(chunk_unlink));
  std::printf("crc32c gb_per_s=%.2f\nmemcpy gb_per_s=%.2f\n", median(crc), median(copy));
  std::printf("loopback_tcp one_way_ns=%.0f\nfdatasync ns_per_op=%.0f\n", median(loop), median(syncs));
  return 0;
}
