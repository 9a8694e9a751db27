// The raw SimGrid S4U peer of `make bench-sim`: the chunk-read workload of
// issue 4's Performance section written directly against S4U 3.32, the way
// an S4U user would write it, to compare SimEnv's cost per chunk with.
//
// Platform: one StarZone; every host has one split-duplex link to the centre
// (link_bytes_per_s per direction, link_latency_ns), so a message between
// two hosts crosses two links. Servers have one disk each. Network model
// CM02 without cross-traffic, as SimEnv uses.
// Workload: C client actors; client c sends request k (of R) to server
// (c + k) mod S as a detached 256-byte put to the server's mailbox, keeps W
// in flight, and receives each 1 MiB reply from its own mailbox (a
// permanent receiver, so replies flow in parallel). Each server runs
// server_queue_depth worker actors; a worker gets a request, reads the chunk
// from the disk (blocking read) and puts the reply to the client's mailbox.
#pragma once

#include <cstdint>

namespace sluice::bench {

struct ReadBenchSpec {
  std::uint32_t clients = 32;
  std::uint32_t servers = 8;
  std::uint32_t chunks_per_client = 256;
  std::uint32_t window = 8;
  std::uint64_t chunk_bytes = 1 << 20;
  std::uint64_t request_bytes = 256;
  // Requests a server serves at once (its device queue depth; sluice's
  // StorageService uses 8 per target by default); the others wait in order.
  std::uint32_t server_queue_depth = 8;
  // SimEnv only (P2): chunks of one client on one server merged per request
  // (sim_bench.cpp, BenchClient); 0 or 1 = one request per chunk.
  std::uint32_t coalesce_chunks = 1;
  double link_bytes_per_s = 12.5e9;  // 100 Gb/s
  double link_latency_s = 2e-6;
  double disk_read_bytes_per_s = 3.2e9;
  double disk_write_bytes_per_s = 2.0e9;
};

struct RunResult {
  double simulated_s = 0;   // when the last client received its last chunk
  double wall_s = 0;        // wall time of the simulation run (platform building excluded)
  double build_wall_s = 0;  // wall time to build the platform
  std::uint64_t chunks = 0;
  long peak_rss_kib = 0;
  std::uint64_t requests = 0;  // chunk requests sent (fewer than chunks when coalesced)
};

// Runs the raw S4U program in this process (which must not have an engine).
RunResult run_raw_s4u(const ReadBenchSpec& spec);

}  // namespace sluice::bench
