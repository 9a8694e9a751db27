// make bench-ucx (P14, issue 51): sluice's UCX transport against
// ucx_perftest, the same UCX, the same transports (UCX_TLS, tcp,self unless
// the environment says otherwise), the same sizes, over loopback, in one run.
//
// Bandwidth: 1 MiB puts, k_window outstanding. ucx_perftest -t ucp_put_bw
// (its overall bandwidth, which it reports in MB/s of 2^20 bytes); sluice:
// two transports in this process, one rail each, a client putting into the
// server's region, each put complete when the transport says its bytes are
// in the remote region (its flush), k_window at a time; bytes over wall time.
// Latency: 8-byte puts. ucx_perftest -t ucp_put_lat is a one-sided
// ping-pong and reports half a round trip (its 50th percentile); a sluice
// put completes after one round trip (the put, then the flush's answer), so
// the figure compared is half the median completion time of one put at a
// time. Goal: bandwidth >= 0.9 of perftest's, latency <= 1.2x.
// Each side runs k_runs times, alternating; ratios are of the medians.
// BENCH_SMOKE=1 (tests/bench/smoke.hpp): one run of each, few iterations.
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "tests/bench/loopback_port.hpp"
#include "tests/bench/smoke.hpp"
#include "transports/transport.hpp"

namespace {

using namespace sluice;
using namespace sluice::transport;

constexpr std::uint64_t k_bw_bytes = 1ULL << 20;
constexpr std::uint32_t k_window = 16;
constexpr std::uint64_t k_lat_bytes = 8;
const int k_bw_iters = bench::full_or_smoke(2000, 100);
const int k_lat_iters = bench::full_or_smoke(20000, 500);
const int k_runs = bench::full_or_smoke(5, 1);
constexpr int k_perftest_timeout_s = 120;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string run_command(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r"); p != nullptr) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    ::pclose(p);
  }
  return out;
}

// ucx_perftest's final CSV row as a field: overall_bw (MB/s, 2^20 bytes) or the 50th percentile latency (us).
struct Perftest {
  double bytes_per_s = -1;
  double latency_us = -1;
};

Perftest perftest(const std::string& test, std::uint64_t size, int iters, std::string* why) {
  // Warm-up: a tenth of the iterations (perftest's default is 10,000 whatever the size).
  const std::vector<std::string> common = {"-t", test,
                                           "-s", std::to_string(size),
                                           "-n", std::to_string(iters),
                                           "-w", std::to_string(std::max(1, iters / 10)),
                                           "-f", "-v"};
  bench::LoopbackServer server = bench::start_loopback_server([&](int port) {
    std::vector<std::string> argv = {"timeout", std::to_string(k_perftest_timeout_s), "ucx_perftest"};
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(argv.end(), {"-p", std::to_string(port)});
    return argv;
  });
  Perftest result;
  if (server.pid < 0) {
    *why = server.why;
    return result;
  }
  std::string command = "timeout " + std::to_string(k_perftest_timeout_s) + " ucx_perftest 127.0.0.1";
  for (const std::string& a : common) command += " " + a;
  command += " -p " + std::to_string(server.port) + " 2>&1";
  const std::string out = run_command(command);
  bench::stop_loopback_server(&server);
  // "iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr" then the numbers.
  std::istringstream lines(out);
  std::string line, last;
  while (std::getline(lines, line)) {
    line.erase(0, line.find_first_not_of(' '));
    if (!line.empty() && line[0] >= '0' && line[0] <= '9') last = line;
  }
  std::vector<double> f;
  std::istringstream fields(last);
  for (std::string cell; std::getline(fields, cell, ',');) f.push_back(std::strtod(cell.c_str(), nullptr));
  if (f.size() < 8) {
    *why = "no result row from ucx_perftest: " + out.substr(0, 400);
    return result;
  }
  result.latency_us = f[1];
  result.bytes_per_s = f[5] * 1024 * 1024;
  return result;
}

struct Pair {
  std::unique_ptr<Transport> server, client;
  std::vector<std::byte> source, landing;
  PeerId peer = 0;
};

std::unique_ptr<Transport> make_ucx(std::uint64_t id) {
  TransportConfig config;
  config.local_id = id;
  config.rail_addresses = {"127.0.0.1:0"};
  Result<std::unique_ptr<Transport>> t = create_transport("ucx", config);
  if (!t.ok()) {
    std::fprintf(stderr, "bench_ucx: %s\n", t.status().to_string().c_str());
    return nullptr;
  }
  return std::move(t).value();
}

// Waits for the next events of `t` (completion fd, 10 s at most).
bool wait_events(Transport& t, std::vector<TransportEvent>& out) {
  out.clear();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (t.poll(out, k_max_poll_events) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    pollfd pfd{t.completion_fd(), POLLIN, 0};
    ::poll(&pfd, 1, 100);
  }
  return true;
}

// `iters` puts of `bytes`, `window` at a time; the seconds each took (window 1) and the total.
bool sluice_puts(Pair& p, std::uint64_t bytes, int iters, std::uint32_t window, std::vector<double>* each,
                 double* total_s) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::chrono::steady_clock::time_point> posted(static_cast<std::size_t>(iters));
  int next = 0, done = 0;
  std::vector<TransportEvent> events;
  auto post = [&](int i) {
    BulkRequest r;
    r.peer = p.peer;
    r.local_key = 1;
    r.remote_key = 2;
    r.local_offset = (static_cast<std::uint64_t>(i) % window) * bytes;
    r.remote_offset = r.local_offset;
    r.bytes = bytes;
    r.cookie = static_cast<std::uint64_t>(i);
    posted[static_cast<std::size_t>(i)] = std::chrono::steady_clock::now();
    return p.client->put(r).ok();
  };
  while (next < iters && next < static_cast<int>(window)) {
    if (!post(next++)) return false;
  }
  while (done < iters) {
    if (!wait_events(*p.client, events)) return false;
    for (const TransportEvent& e : events) {
      const auto* d = std::get_if<OpDone>(&e);
      if (d == nullptr) continue;
      if (!d->status.ok()) {
        std::fprintf(stderr, "bench_ucx: put: %s\n", d->status.to_string().c_str());
        return false;
      }
      if (each != nullptr) {
        each->push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - posted[d->cookie]).count());
      }
      ++done;
      if (next < iters && !post(next++)) return false;
    }
  }
  *total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

}  // namespace

int main() {
  ::setenv("UCX_TLS", "tcp,self", 0);  // perftest children inherit it
  const std::string tls = std::getenv("UCX_TLS");
  Pair p;
  p.source.resize(k_bw_bytes * k_window);
  p.landing.resize(k_bw_bytes * k_window);
  fill_pattern(p.source, 4, 0);
  p.server = make_ucx(1);
  p.client = make_ucx(2);
  if (!p.server || !p.client) return 1;
  if (!p.client->register_region(1, p.source, RegionKind::host).ok() ||
      !p.server->register_region(2, p.landing, RegionKind::host).ok()) {
    std::fprintf(stderr, "bench_ucx: register_region failed\n");
    return 1;
  }
  Result<PeerId> peer = p.client->connect(p.server->listen_address());
  if (!peer.ok()) return 1;
  p.peer = *peer;
  std::printf("bench_ucx: UCX_TLS=%s, loopback; put bandwidth at %llu KiB (%u in flight), latency at %llu B\n",
              tls.c_str(), static_cast<unsigned long long>(k_bw_bytes >> 10), k_window,
              static_cast<unsigned long long>(k_lat_bytes));
  std::printf("%-6s %14s %14s %14s %14s\n", "run", "sluice_MB/s", "perftest_MB/s", "sluice_us", "perftest_us");
  std::vector<double> bw_ours, bw_theirs, lat_ours, lat_theirs;
  for (int run = 0; run < k_runs; ++run) {
    double total = 0;
    if (!sluice_puts(p, k_bw_bytes, k_bw_iters, k_window, nullptr, &total)) return 1;
    bw_ours.push_back(static_cast<double>(k_bw_bytes) * k_bw_iters / total);
    std::vector<double> each;
    if (!sluice_puts(p, k_lat_bytes, k_lat_iters, 1, &each, &total)) return 1;
    lat_ours.push_back(median(each) / 2 * 1e6);  // half a round trip, as perftest reports
    std::string why;
    const Perftest bw = perftest("ucp_put_bw", k_bw_bytes, k_bw_iters, &why);
    const Perftest lat = perftest("ucp_put_lat", k_lat_bytes, k_lat_iters, &why);
    if (bw.bytes_per_s <= 0 || lat.latency_us <= 0) {
      std::fprintf(stderr, "bench_ucx: ucx_perftest: %s\n", why.c_str());
      return 1;
    }
    bw_theirs.push_back(bw.bytes_per_s);
    lat_theirs.push_back(lat.latency_us);
    std::printf("%-6d %14.1f %14.1f %14.2f %14.2f\n", run, bw_ours.back() / 1e6, bw.bytes_per_s / 1e6, lat_ours.back(),
                lat.latency_us);
  }
  const double bw_ratio = median(bw_ours) / median(bw_theirs);
  const double lat_ratio = median(lat_ours) / median(lat_theirs);
  std::printf("%-6s %14.1f %14.1f %14.2f %14.2f\n", "median", median(bw_ours) / 1e6, median(bw_theirs) / 1e6,
              median(lat_ours), median(lat_theirs));
  std::printf("RESULT P14 put_bw_vs_perftest=%.3f put_lat_vs_perftest=%.3f tls=%s goal_bw=0.9 goal_lat=1.2\n", bw_ratio,
              lat_ratio, tls.c_str());
  return 0;
}
