// SimProfile: the model parameters of a simulation, with where they come from.
//
// docs/design.md#calibration: analysis/ fits these numbers to measured runs and
// writes them as a profile file with its source recorded (machine, date,
// scenario, fit error); sim/ loads profiles by name. Following SimGrid's own
// practice (src/kernel/resource/models/: calibration factors are data, each
// citing its paper), every default below says where it comes from, and a
// profile file says where its numbers come from in its "source" object.
//
// File format (JSON, strict: an unknown key is an error naming it, so a typo
// cannot silently fall back to a default; a missing key keeps the default):
//
//   { "format": "sluice-sim-profile", "version": 1, "name": "dgx-lab-2024-05",
//     "source": { "kind": "fit", "machine": "...", "date": "2024-05-01",
//                 "scenario": "calibrate_read.lua", "fit_error_pct": 3.1, "note": "..." },
//     "link_classes": { "pcie": { "bandwidth_factor": 1.0, "latency_factor": 1.0 },
//                       "memory": {...}, "inter_socket": {...}, "network": {...} },
//     "network": { "tcp_window_bytes": 4194304, "message_overhead_bytes": 66,
//                  "local_message_latency_ns": 5000 },
//     "disk": { "read_latency_ns": 77000, "write_latency_ns": 18000, "sync_latency_ns": 20000,
//               "metadata_latency_ns": 10000, "request_occupancy_ns": 1571,
//               "read_bandwidth_factor": 1.0, "write_bandwidth_factor": 1.0,
//               "read_request_bytes_per_s": 0, "write_request_bytes_per_s": 0,
//               "batch_occupancy_ns": 0 },
//     "cpu": { "cores_per_node": 64, "cost_ns_per_unit": { "meta_create": 10000, ... } },
//     "memory": { "memory_op_bytes_per_s": 1e10, "same_location_copy_bytes_per_s": 1e10 },
//     "staging": { "cpu_copies": 1, "cpu_copy_bytes_per_s": 5.9e9 },
//     "sources": { "disk.read_latency_ns": "Intel SSD DC P4510 data sheet ...", ... } }
//
// How each number is used is documented at the field; SimEnv (sim_env.hpp)
// and the platform builder (sim_platform.hpp) are the only readers.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/env.hpp"
#include "core/topology/hardware_figures.hpp"
#include "core/topology/topology.hpp"

namespace sluice::sim {

inline constexpr std::string_view k_profile_format = "sluice-sim-profile";
inline constexpr int k_profile_version = 1;
// Limits: a profile file larger than this is refused (it is a few KiB).
inline constexpr std::size_t k_max_profile_bytes = 1 << 20;
// Sanity bounds that catch unit mistakes (a factor of 1e9 is a unit error).
inline constexpr double k_min_factor = 1e-3;
inline constexpr double k_max_factor = 1e3;
inline constexpr TimeNs k_max_profile_latency_ns = k_ns_per_s;
inline constexpr std::uint32_t k_max_cores_per_node = 1 << 16;
// CPU copies of a staged byte (a larger count is a unit or typing error).
inline constexpr std::uint32_t k_max_staging_cpu_copies = 8;
// A disk request rate (disk_*_request_bytes_per_s) other than 0 is at least
// this: 1 KB/s would make a 1 MiB request take 17 minutes, a unit mistake.
inline constexpr double k_min_disk_request_bytes_per_s = 1e3;
// Channels of one drive (disk_channels): more is a typing error (a large
// NVMe drive has 16-32 flash channels; a virtual disk's host a few queues).
inline constexpr std::uint32_t k_max_disk_channels = 256;
// A channel stripe (disk_channel_stripe_bytes) is at least a sector and at
// most 1 GiB.
inline constexpr std::uint64_t k_min_disk_channel_stripe_bytes = 512;
inline constexpr std::uint64_t k_max_disk_channel_stripe_bytes = std::uint64_t{1} << 30;
// Read-ahead (page_cache_read_ahead_bytes) is at most 1 GiB per stream.
inline constexpr std::uint64_t k_max_read_ahead_bytes = std::uint64_t{1} << 30;

// Multipliers applied to one class of links (topo::LinkClass).
// One SimGrid flow has one bandwidth factor: a communication gets the lowest
// bandwidth_factor among the classes its route crosses (a route with a
// network link gets the network's, a PCIe-only route PCIe's). Its latency is
// the sum over its links of latency x that link's class latency_factor, so a
// PCIe hop is never charged a network factor. See sim_platform.hpp.
struct LinkClassFactors {
  double bandwidth_factor = 1.0;
  double latency_factor = 1.0;
  bool operator==(const LinkClassFactors&) const = default;
};

// Where a profile's numbers come from (docs/design.md#calibration).
struct ProfileSource {
  std::string kind = "defaults";  // "defaults" | "fit" | "manual"
  std::string machine;            // what was measured
  std::string date;               // when (ISO 8601)
  std::string scenario;           // which calibration scenario produced it
  double fit_error_pct = -1;      // prediction error on held-out runs; < 0: not known
  std::string note;
  bool operator==(const ProfileSource&) const = default;
};

struct SimProfile {
  std::string name = "default";
  ProfileSource source;

  // ---- links, by topo::LinkClass (pcie, memory, inter_socket, network) ----
  // pcie, memory, inter_socket: 1.0 / 1.0. The topology's bandwidths are
  // already effective rates (hardware_figures.hpp applies
  // k_pcie_protocol_efficiency = 0.85 to the PCI-SIG raw rate, memory and
  // socket links carry published figures) and its latencies are per-hop
  // hardware latencies, so no TCP-style correction belongs on them.
  // network bandwidth: topo::k_network_payload_share (0.97, the LV08 model's
  // value and TCP's payload share of a 1500-byte frame; hardware_figures.hpp).
  // network latency 1.0, not LV08's 13.01: that factor folds TCP slow start
  // over WAN round trips into the latency; the topology's network latencies
  // (hardware_figures.hpp, 300 ns per link) are end-to-end figures of
  // RDMA-class fabrics without slow start. Calibration replaces both.
  std::array<LinkClassFactors, 4> link_classes{LinkClassFactors{1.0, 1.0}, LinkClassFactors{1.0, 1.0},
                                               LinkClassFactors{1.0, 1.0},
                                               LinkClassFactors{topo::k_network_payload_share, 1.0}};
  // TCP window: SimGrid caps a flow at window / (2 x route latency)
  // (network/TCP-gamma). 4 MiB is SimGrid's default; the cap only binds on
  // long-latency routes (at 2 us it is 1 TB/s), never on PCIe.
  double tcp_window_bytes = 4194304;
  // Bytes added to every control message on the wire beyond the sluice frame
  // (proto::encoded_size): Ethernet 14 + IPv4 20 + TCP with timestamps 32 = 66.
  std::uint32_t message_overhead_bytes = 66;
  // A message between two services of one node (loopback/shared memory) takes
  // this and loads no link: a 64-byte TCP message's one-way time over
  // 127.0.0.1, 8366 ns on the H200 machine (scripts/gpu_machine/host_op_costs.cpp).
  TimeNs local_message_latency_ns = 8366;

  // ---- disks (SimGrid 3.32's disk model has bandwidth only) ----
  // The drive is an s4u::Disk with the topology's read and write bandwidth
  // (Vertex nvme_read/write_bytes_per_s) x disk_read/write_bandwidth_factor,
  // shared by the requests in flight. Per request, storage_io adds explicitly:
  // - a latency before the transfer starts that does not occupy the drive
  //   (read 77 us, write 18 us: Intel SSD DC P4510 product specification,
  //   typical sequential latency; a write is absorbed by the drive's cache);
  // - bytes / disk_read/write_request_bytes_per_s more of it (below);
  // - an occupancy: device time per request, added to the Io as
  //   occupancy x drive bandwidth extra bytes, so the drive serves at most
  //   1/occupancy requests per second however small they are (1571 ns =
  //   1 / 636,500 IOPS, the P4510's 4 KiB random-read figure);
  // - sync_latency_ns more for a sync (FUA/flush) write: the P4510 has
  //   power-loss protection, so a flush is acknowledged from its cache, one
  //   more command round trip (its 18 us write latency);
  // - metadata_latency_ns for remove and stat of a chunk object (a local file
  //   system metadata operation: stat of a 1 MiB chunk file, 1309 ns on the
  //   H200 machine, scripts/gpu_machine/host_op_costs.cpp; a remove is charged the same).
  TimeNs disk_read_latency_ns = 77 * k_ns_per_us;
  TimeNs disk_write_latency_ns = 18 * k_ns_per_us;
  TimeNs disk_sync_latency_ns = 18 * k_ns_per_us;
  TimeNs disk_metadata_latency_ns = 1309;
  TimeNs disk_request_occupancy_ns = 1571;
  // Drive time paid once per batch of requests, shared by the requests at
  // the drive when one is submitted (q of them, this one included: each pays
  // batch_occupancy_ns / q more occupancy). The fixed cost of one round of the
  // submission/completion path: a doorbell, an interrupt and, on a virtual
  // disk, an exit to the host; a device that finds q requests queued takes
  // them in one round (virtio-blk's notification suppression, NVMe interrupt
  // coalescing). It makes a request cheaper as the depth grows, which a
  // fixed occupancy cannot: on the 2-core VM's virtio disk (fio 3.33, 4 KiB
  // random reads, psync, O_DIRECT, numjobs 1..64) the time per request at
  // depth fell from 119 us (1 job) to 24 us (16) and 18 us (64), while a
  // lone request took 117 us. 0 (the default): a bare-metal drive's data
  // sheet gives its IOPS at depth, which the occupancy above already is.
  TimeNs disk_batch_occupancy_ns = 0;
  // Multiply the drive's read and write bandwidth from the topology where
  // the platform creates the SimGrid disk (sim_platform.hpp), so every use of
  // the drive's rate (occupancy bytes, a streamed read's first segment) sees
  // it. The topology's figures are data-sheet sequential rates
  // (machine_builders.cpp; hwloc import assumes them); a fit brings them to
  // a measured drive's rate at depth (fio, many requests in flight) without
  // a topology of its own. 1.0: the data sheet's figure.
  double disk_read_bandwidth_factor = 1.0;
  double disk_write_bandwidth_factor = 1.0;
  // A request's bytes also take bytes / this rate before its drive transfer,
  // as part of its latency (not occupying the drive): the part of a request's
  // time a lone request cannot overlap. A single large request does not reach
  // the drive's bandwidth: on NVMe one request is served by a few flash
  // channels; on a virtual disk the host copies a request's data serially.
  // Measured on a virtio disk (fio 3.33, libaio, O_DIRECT): 1 MiB reads
  // ~2.44 ms each at queue depth 1 but ~690 MB/s at queue depth 8, while 4 KiB
  // reads take ~107 us at depth 1. Latency + occupancy + bytes at the drive's
  // bandwidth cannot give these together: the 4 KiB figure bounds the
  // latency and the depth-8 rate the bandwidth, which puts a lone 1 MiB read
  // under ~1.7 ms. A read charges the bytes it reads (up to the object's
  // end), a write its buffer's bytes. 0: none (a lone request transfers at
  // the drive's full bandwidth, the data sheet's sequential figure).
  double disk_read_request_bytes_per_s = 0;
  double disk_write_request_bytes_per_s = 0;
  // The drive as disk_channels independent channels instead of one shared
  // resource: each channel is a SimGrid disk with 1/channels of the drive's
  // bandwidth. A request's bytes are cut into pieces of
  // disk_channel_stripe_bytes; it takes min(channels, pieces) consecutive
  // channels from the one its first piece maps to (a hash of the file and
  // the piece's index: an FTL spreads logical blocks over its channels), an
  // equal share of its bytes and of its occupancy on each (the occupancy
  // stays device time per request); the request ends when its last share does. Small requests
  // that land on the same channel wait for each other while other channels
  // idle, so the drive nears its rate slowly with depth, as flash does (and a
  // virtual disk's host with a few queues): the 2-core VM's virtio disk
  // (fio 3.33, O_DIRECT) did 18 k 4 KiB reads/s at depth 1, 57 k at 8 and
  // 85 k at 64, where one shared resource is at its limit from depth ~2.
  // 1 (the default): the drive is one resource, as its data sheet's rates
  // are for the whole drive; the stripe then has no effect.
  std::uint32_t disk_channels = 1;
  std::uint64_t disk_channel_stripe_bytes = 16 * 1024;

  // ---- CPU ----
  // Cores of a node's CPU host (execs of different services run in parallel
  // up to this; one service runs its computes one at a time, FIFO).
  // 64: one AMD EPYC 7742 (DGX A100 socket).
  std::uint32_t cpu_cores_per_node = 64;
  // Service time per unit of each CostKind, in ns (the same order as
  // CostKind); parameter_sources gives each one's source.
  // Metadata kinds: one unit is one request of an in-kernel Lustre MDT,
  // which a metadata server runs one at a time (its saturated rate is
  // 1 / cost): lookup, create, mkdir, stat, unlink, rename and setattr 5 us
  // (docs/seeds.md#sharded-metadata: one MDT ~200,000 ops/s; the survey
  // gives one rate for mdtest's operations, so each request takes it), a
  // readdir entry 221 ns (readdir of an ext4 directory, the MDT's backing
  // file system, on the H200 machine: scripts/gpu_machine/host_op_costs.cpp). Other
  // servers charge a multiple (core/services/meta_op_units.hpp: BeeGFS 3-14
  // units). A chunk request costs ~1 us of server CPU, a client request
  // ~0.5 us (assumptions: not yet measured).
  // workload_step is accelerator time: its unit is 1 ns and it occupies no CPU.
  std::array<TimeNs, static_cast<std::size_t>(CostKind::count_)> cost_ns_per_unit{5000, 5000, 5000, 5000, 221, 5000,
                                                                                  5000, 5000, 1000, 500,  1};

  // ---- memory operations ----
  // checksum / fill / verify run at this rate (ISA-L crc32c, one thread:
  // 11.39 GB/s on the H200 machine, scripts/gpu_machine/host_op_costs.cpp); no bytes
  // exist in simulation.
  double memory_op_bytes_per_s = 11.39e9;
  // A transfer whose source and destination are the same memory (host to host
  // on one NUMA node, GPU to the same GPU) crosses no link; it takes
  // bytes / this (a single-thread memcpy: 10.66 GB/s on the H200 machine,
  // scripts/gpu_machine/host_op_costs.cpp).
  double same_location_copy_bytes_per_s = 10.66e9;

  // ---- host staging of GPU data (the client side of a bounce) ----
  // A bounce moves GPU data through host memory (core/sched DataPath::bounce:
  // NIC <-> pinned buffer, then a copy host <-> GPU). Without GPUDirect Storage
  // a POSIX read does not DMA where the GPU copy reads: the NIC (or the drive)
  // fills a kernel buffer (the file system's RDMA buffer, or the page cache)
  // and read() copies it into the user buffer with the CPU before cudaMemcpy
  // (docs/seeds.md#beegfs-and-gpudirect-storage, the BeeGFS/NetApp blog's
  // "classic path"; KvikIO's POSIX compat mode does the same pread into its
  // bounce buffer). GDS removes exactly this copy. SimRuntime therefore charges
  // every same-node copy between host memory and a GPU with staging_cpu_copies
  // CPU copies before its DMA:
  // - each copy reads and writes the host memory of the buffer's NUMA node
  //   (a flow over both directions of its memory link, sharing them with
  //   the NIC and GPU DMA), so a bounced byte crosses host memory
  //   2 + 2 x staging_cpu_copies times;
  // - each copy runs on one CPU thread at most at
  //   staging_cpu_copy_bytes_per_s (the flow's rate cap): the thread is busy
  //   for bytes / that rate. Copies of different chunks run in parallel, as
  //   the I/O threads that issued them do; the node's cores are not a limit.
  // staging_cpu_copies = 1: the one copy_to_user of read() (kernel buffer ->
  // user buffer). 0 models a pipeline whose NIC DMA lands in the pinned
  // buffer the GPU copy reads (sluice's own RDMA bounce). 2 would add the
  // CUDA driver's own staging of a pageable source (pageable host->GPU
  // copies ran at ~9 GB/s vs ~55 GB/s pinned on the H200 of
  // docs/seeds.md#machines-available-to-the-project).
  // staging_cpu_copy_bytes_per_s = 5.9 GB/s: a single-thread pread of a
  // file in the page cache, measured on the project's GPU machine
  // (docs/seeds.md#machines-available-to-the-project): a page-cache hit is
  // one kernel->user copy and nothing else, i.e. one thread's copy rate.
  // Calibrate both against a measured bounce read (analysis/).
  std::uint32_t staging_cpu_copies = 1;
  double staging_cpu_copy_bytes_per_s = 5.9e9;

  // ---- the storage servers' page cache (write-back) ----
  // A buffered write (StorageIoSpec::buffered: a storage server that writes
  // through the page cache, as BeeGFS's does) completes once the page cache
  // holds it: one thread's copy of its bytes into the cache, at
  // page_cache_copy_bytes_per_s. Its drive work follows in the background
  // (write-back). The dirty bytes of a node are bounded by
  // page_cache_dirty_ratio x its host memory (Linux's vm.dirty_ratio): a
  // write that would pass it waits until write-back has made room, so a
  // long write runs at the drives' rate. 0 turns write-back off (every
  // write waits for its drive).
  // dirty_ratio 0.2: the value BeeGFS's storage tuning guide sets
  // (doc.beegfs.io, Storage Node Tuning: vm.dirty_ratio = 20), also the
  // kernel's default (Documentation/admin-guide/sysctl/vm.rst).
  // copy_bytes_per_s 5.9 GB/s: one thread's copy between a user buffer
  // and the page cache, the staging copy above (a page-cache pread on the
  // H200 machine).
  double page_cache_dirty_ratio = 0.2;
  double page_cache_copy_bytes_per_s = 5.9e9;
  // A buffered read (StorageIoSpec::buffered on a read: a storage server
  // that reads through the page cache, as BeeGFS's does) that continues a
  // sequential stream of its object has the kernel read ahead: the drive
  // reads the next page_cache_read_ahead_bytes of the object in the
  // background, in pieces of the request's length, and a later read that
  // finds its piece there (read or still being read) waits for that piece,
  // then costs one thread's copy out of the cache (page_cache_copy_bytes_per_s)
  // instead of a drive request. So the drive works ahead of the network
  // instead of in step with the server's request slots. A piece is read once
  // and dropped once consumed (a second read of the same bytes goes to the
  // drive again: the model keeps no other clean pages), and on a write or
  // removal of its object or a flush (the drop of the caches). Read-ahead
  // holds at most (1 - page_cache_dirty_ratio) x the node's host memory.
  // 0 turns read-ahead off.
  // read_ahead_bytes 4 MiB: read_ahead_kb = 4096, the value BeeGFS's storage
  // tuning guide sets on its storage servers' block devices (doc.beegfs.io,
  // Storage Node Tuning).
  std::uint64_t page_cache_read_ahead_bytes = 4 * k_mib;

  // Where each number comes from, by its key in the file ("disk.read_latency_ns",
  // "cpu.cost_ns_per_unit.meta_create", ...): a measurement (command and
  // machine), a data sheet or a seed figure. default_profile() gives one for
  // every parameter (the comments above say the same at more length); a fit
  // replaces those of the parameters it fitted. A key that names no parameter
  // is an error.
  std::map<std::string, std::string> parameter_sources;

  const LinkClassFactors& factors(topo::LinkClass c) const { return link_classes[static_cast<std::size_t>(c)]; }
  TimeNs cost_ns(CostKind kind) const { return cost_ns_per_unit[static_cast<std::size_t>(kind)]; }
  bool operator==(const SimProfile&) const = default;
};

// The documented defaults above.
SimProfile default_profile();

// Checks ranges (finite, positive factors within [k_min_factor,
// k_max_factor], latencies within [0, k_max_profile_latency_ns], disk
// request rates 0 or within [k_min_disk_request_bytes_per_s, 1e15], ...);
// invalid_argument naming the field.
Status validate(const SimProfile& profile);

// The key of every parameter in a profile file ("network.tcp_window_bytes",
// "cpu.cost_ns_per_unit.meta_create", ...), in the file's order.
std::vector<std::string> parameter_keys();

// Parses a profile file's text (see the format above). Errors name the key
// or the JSON error position.
Result<SimProfile> parse_profile(std::string_view json_text);
// The profile as a profile file (every key written, so a file round-trips).
std::string to_json(const SimProfile& profile);

// Reads a profile file.
Result<SimProfile> load_profile_file(const std::string& path);
// "default" gives default_profile(); any other name is looked up as
// <dir>/<name>.json in `search_dirs`, in order; not_found lists where it looked.
Result<SimProfile> load_profile(std::string_view name, const std::vector<std::string>& search_dirs);

}  // namespace sluice::sim
