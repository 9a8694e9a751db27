#include "sim/sim_profile.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::sim {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 4> k_class_names{"pcie", "memory", "inter_socket", "network"};

Status bad(const std::string& what) { return error(StatusCode::invalid_argument, "sim profile: " + what); }

Status check_factor(double value, const std::string& field) {
  if (!std::isfinite(value) || value < k_min_factor || value > k_max_factor) {
    return bad(field + " = " + std::to_string(value) + " is outside [" + std::to_string(k_min_factor) + ", " +
               std::to_string(k_max_factor) + "]");
  }
  return ok_status();
}

Status check_latency(TimeNs value, const std::string& field) {
  if (value < 0 || value > k_max_profile_latency_ns) {
    return bad(field + " = " + std::to_string(value) + " ns is outside [0, " +
               std::to_string(k_max_profile_latency_ns) + "]");
  }
  return ok_status();
}

Status check_rate(double value, const std::string& field) {
  if (!std::isfinite(value) || value <= 0 || value > topo::k_max_bandwidth_bytes_per_s) {
    return bad(field + " = " + std::to_string(value) + " bytes/s is not a rate in (0, 1e15]");
  }
  return ok_status();
}

// 0 (none) or a rate in [k_min_disk_request_bytes_per_s, 1e15].
Status check_optional_rate(double value, const std::string& field) {
  if (value == 0) return ok_status();
  if (!std::isfinite(value) || value < k_min_disk_request_bytes_per_s || value > topo::k_max_bandwidth_bytes_per_s) {
    return bad(field + " = " + std::to_string(value) + " bytes/s is neither 0 (none) nor a rate in [" +
               std::to_string(k_min_disk_request_bytes_per_s) + ", 1e15]");
  }
  return ok_status();
}

// Reads the object at `j`, refusing keys that are not in `allowed`.
Status check_keys(const Json& j, const std::string& where, std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) return bad(where + " must be an object");
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) return bad("unknown key \"" + where + (where.empty() ? "" : ".") + key + "\"");
  }
  return ok_status();
}

template <typename T>
Status read(const Json& j, std::string_view key, const std::string& where, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return ok_status();  // missing keys keep their default
  const std::string field = where + (where.empty() ? "" : ".") + std::string(key);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return bad(field + " must be a string");
    out = it->template get<std::string>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!it->is_number()) return bad(field + " must be a number");
    out = it->template get<T>();
  } else {
    if (!it->is_number_integer() && !it->is_number_unsigned()) return bad(field + " must be an integer");
    if (it->is_number_integer() && it->template get<std::int64_t>() < 0 && std::is_unsigned_v<T>) {
      return bad(field + " must not be negative");
    }
    if (it->is_number_unsigned() && it->template get<std::uint64_t>() > std::numeric_limits<T>::max()) {
      return bad(field + " is too large");
    }
    out = it->template get<T>();
  }
  return ok_status();
}

#define SLUICE_TRY(expr)                         \
  do {                                           \
    if (Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

// The "disk" object (parse_profile stays under the function-length limit).
Status read_disk(const Json& d, SimProfile& p) {
  SLUICE_TRY(
      check_keys(d, "disk",
                 {"read_latency_ns", "write_latency_ns", "sync_latency_ns", "metadata_latency_ns",
                  "request_occupancy_ns", "read_bandwidth_factor", "write_bandwidth_factor", "read_request_bytes_per_s",
                  "write_request_bytes_per_s", "batch_occupancy_ns", "channels", "channel_stripe_bytes"}));
  SLUICE_TRY(read(d, "read_latency_ns", "disk", p.disk_read_latency_ns));
  SLUICE_TRY(read(d, "write_latency_ns", "disk", p.disk_write_latency_ns));
  SLUICE_TRY(read(d, "sync_latency_ns", "disk", p.disk_sync_latency_ns));
  SLUICE_TRY(read(d, "metadata_latency_ns", "disk", p.disk_metadata_latency_ns));
  SLUICE_TRY(read(d, "request_occupancy_ns", "disk", p.disk_request_occupancy_ns));
  SLUICE_TRY(read(d, "read_bandwidth_factor", "disk", p.disk_read_bandwidth_factor));
  SLUICE_TRY(read(d, "write_bandwidth_factor", "disk", p.disk_write_bandwidth_factor));
  SLUICE_TRY(read(d, "read_request_bytes_per_s", "disk", p.disk_read_request_bytes_per_s));
  SLUICE_TRY(read(d, "write_request_bytes_per_s", "disk", p.disk_write_request_bytes_per_s));
  SLUICE_TRY(read(d, "batch_occupancy_ns", "disk", p.disk_batch_occupancy_ns));
  SLUICE_TRY(read(d, "channels", "disk", p.disk_channels));
  SLUICE_TRY(read(d, "channel_stripe_bytes", "disk", p.disk_channel_stripe_bytes));
  return ok_status();
}

// Where each default comes from (SimProfile::parameter_sources). The
// measurements named "the H200 machine" are scripts/gpu_machine/device_host_op_costs_run.sh
// on the project's GPU machine (16-core Intel Xeon VM, Linux 6.18, ext4 on
// virtio; sim/profiles/measurements/device_host_op_costs_h200_2026-11-29.txt).
constexpr std::array<std::pair<std::string_view, std::string_view>, 42> k_default_sources{{
    {"link_classes.pcie.bandwidth_factor",
     "identity: the topology's PCIe rates are already effective (PCI-SIG raw rate x 0.85 protocol efficiency, "
     "core/topology/hardware_figures.hpp)"},
    {"link_classes.pcie.latency_factor",
     "identity: the topology's PCIe hop latencies are hardware figures (hardware_figures.hpp)"},
    {"link_classes.memory.bandwidth_factor",
     "identity: the topology's memory links carry the CPUs' published memory bandwidth (hardware_figures.hpp)"},
    {"link_classes.memory.latency_factor", "identity: the topology's memory latency is a hardware figure"},
    {"link_classes.inter_socket.bandwidth_factor",
     "identity: the topology's socket links carry published xGMI / UPI rates (hardware_figures.hpp)"},
    {"link_classes.inter_socket.latency_factor", "identity: the topology's socket-link latency is a hardware figure"},
    {"link_classes.network.bandwidth_factor",
     "paper: LV08 (Velho, Schnorr, Casanova, Legrand, ACM TOMACS 23(4), 2013) 0.97 = TCP payload share of a "
     "1500-byte frame (1448/1500)"},
    {"link_classes.network.latency_factor",
     "identity: the topology's network latencies are end-to-end RDMA-class fabric figures (300 ns per link, "
     "hardware_figures.hpp); LV08's 13.01 folds WAN slow start in"},
    {"network.tcp_window_bytes", "SimGrid 3.32 documentation: network/TCP-gamma default 4 MiB"},
    {"network.message_overhead_bytes",
     "protocol headers: Ethernet 14 + IPv4 20 (RFC 791) + TCP with timestamps 32 (RFC 7323) bytes"},
    {"network.local_message_latency_ns",
     "measured: one-way 64-byte TCP message over 127.0.0.1 with TCP_NODELAY, median 8366 ns on the H200 machine "
     "(scripts/gpu_machine/host_op_costs.cpp loopback_tcp)"},
    {"disk.read_latency_ns", "data sheet: Intel SSD DC P4510, typical sequential read latency 77 us"},
    {"disk.write_latency_ns", "data sheet: Intel SSD DC P4510, typical sequential write latency 18 us"},
    {"disk.sync_latency_ns",
     "data sheet: Intel SSD DC P4510 has power-loss protection, so a flush is acknowledged from its cache: one "
     "more command round trip, the 18 us of its write latency"},
    {"disk.metadata_latency_ns",
     "measured: stat of a 1 MiB chunk file, median 1309 ns on the H200 machine (scripts/gpu_machine/host_op_costs.cpp "
     "chunk "
     "op=stat); a chunk's remove is charged the same (that machine's virtio disk took 425 us to unlink one)"},
    {"disk.request_occupancy_ns", "data sheet: Intel SSD DC P4510, 636,500 IOPS of 4 KiB random reads = 1571 ns"},
    {"disk.read_bandwidth_factor",
     "identity: the topology's drive rates are data-sheet sequential figures (machine_builders.cpp)"},
    {"disk.write_bandwidth_factor",
     "identity: the topology's drive rates are data-sheet sequential figures (machine_builders.cpp)"},
    {"disk.read_request_bytes_per_s",
     "data sheet: a sequential read reaches the drive's rated bandwidth, so none (0); make bench-f4 fits it on a "
     "virtual disk"},
    {"disk.write_request_bytes_per_s",
     "data sheet: a sequential write reaches the drive's rated bandwidth, so none (0); make bench-f4 fits it on a "
     "virtual disk"},
    {"disk.batch_occupancy_ns",
     "data sheet: a drive's rated IOPS at depth is already the occupancy, so none (0); make bench-f4 fits it on a "
     "virtual disk"},
    {"disk.channels",
     "data sheet: a drive's rated rates are the whole drive's (Intel SSD DC P4510: 636,500 IOPS and 3.2 GB/s at "
     "depth), so one resource (1); make bench-f4 sets channels for a virtual disk"},
    {"disk.channel_stripe_bytes",
     "definition: no effect with one channel; 16 KiB, a TLC NAND page (the unit one flash die reads or programs); "
     "F4 refitted at 4 to 256 KiB on the same fio runs (scripts/f4_stripes.sh, "
     "sim/profiles/measurements/f4_stripe_2026-11-30.txt): 16 and 32 KiB lowest on the VM, 16 KiB on the GPU host"},
    {"cpu.cores_per_node", "data sheet: AMD EPYC 7742, 64 cores (the DGX A100's socket)"},
    {"cpu.cost_ns_per_unit.meta_lookup",
     "seed: one Lustre MDT ~200,000 ops/s (docs/seeds.md#sharded-metadata), one rate for mdtest's operations: 5 us"},
    {"cpu.cost_ns_per_unit.meta_create",
     "seed: one Lustre MDT ~200,000 creates/s (docs/seeds.md#sharded-metadata): 5 us"},
    {"cpu.cost_ns_per_unit.meta_mkdir",
     "seed: one Lustre MDT ~200,000 ops/s (docs/seeds.md#sharded-metadata), one rate for mdtest's operations: 5 us"},
    {"cpu.cost_ns_per_unit.meta_stat", "seed: one Lustre MDT ~200,000 stats/s (docs/seeds.md#sharded-metadata): 5 us"},
    {"cpu.cost_ns_per_unit.meta_readdir_entry",
     "measured: readdir of a 20,000-entry ext4 directory (the MDT's backing file system), median 221 ns per entry "
     "on the H200 machine (scripts/gpu_machine/host_op_costs.cpp meta op=readdir_entry)"},
    {"cpu.cost_ns_per_unit.meta_unlink",
     "seed: one Lustre MDT ~200,000 ops/s (docs/seeds.md#sharded-metadata), one rate for mdtest's operations: 5 us"},
    {"cpu.cost_ns_per_unit.meta_rename",
     "seed: one Lustre MDT ~200,000 ops/s (docs/seeds.md#sharded-metadata), one rate for mdtest's operations: 5 us"},
    {"cpu.cost_ns_per_unit.meta_setattr",
     "seed: one Lustre MDT ~200,000 ops/s (docs/seeds.md#sharded-metadata), one rate for mdtest's operations: 5 us"},
    {"cpu.cost_ns_per_unit.storage_request",
     "assumption, not yet measured: ~1 us of server CPU per chunk request (decode, queue, reply); a "
     "per-request CPU measurement of the storage server would replace it"},
    {"cpu.cost_ns_per_unit.client_request", "assumption, not yet measured: ~0.5 us of client CPU per request issued"},
    {"cpu.cost_ns_per_unit.workload_step", "definition: one unit is 1 ns of the workload's own compute"},
    {"memory.memory_op_bytes_per_s",
     "measured: ISA-L crc32_iscsi (core/proto/crc32c) over 64 MiB, one thread, median 11.39 GB/s on the H200 "
     "machine (scripts/gpu_machine/host_op_costs.cpp crc32c)"},
    {"memory.same_location_copy_bytes_per_s",
     "measured: memcpy of 256 MiB, one thread, median 10.66 GB/s on the H200 machine "
     "(scripts/gpu_machine/host_op_costs.cpp "
     "memcpy)"},
    {"staging.cpu_copies",
     "seed: the BeeGFS classic path copies each byte once on the CPU, kernel buffer -> user buffer, before "
     "cudaMemcpy (docs/seeds.md#beegfs-and-gpudirect-storage)"},
    {"staging.cpu_copy_bytes_per_s",
     "measured: single-thread pread of a page-cached file, 5.9 GB/s on the H200 machine "
     "(docs/seeds.md#machines-available-to-the-project)"},
    {"page_cache.dirty_ratio",
     "documentation: vm.dirty_ratio = 20 in BeeGFS's storage tuning guide (doc.beegfs.io, Storage Node Tuning), "
     "also the Linux default (Documentation/admin-guide/sysctl/vm.rst)"},
    {"page_cache.copy_bytes_per_s",
     "measured: one thread's copy between a user buffer and the page cache, a single-thread pread of a "
     "page-cached file at 5.9 GB/s on the H200 machine (docs/seeds.md#machines-available-to-the-project)"},
    {"page_cache.read_ahead_bytes",
     "documentation: read_ahead_kb = 4096 on the storage servers' block devices in BeeGFS's storage tuning guide "
     "(doc.beegfs.io, Storage Node Tuning)"},
}};

// The parameter keys of the object `j` (a profile's sections), depth first.
void collect_keys(const Json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      collect_keys(value, path, out);
    } else {
      out.push_back(path);
    }
  }
}

}  // namespace

std::vector<std::string> parameter_keys() {
  Json j = Json::parse(to_json(SimProfile{}));
  for (const char* meta : {"format", "version", "name", "source", "sources"}) j.erase(meta);
  std::vector<std::string> keys;
  collect_keys(j, "", keys);
  return keys;
}

SimProfile default_profile() {
  SimProfile p;
  p.source.note = "documented defaults: \"sources\" gives the source of every number";
  for (const auto& [key, text] : k_default_sources) p.parameter_sources.emplace(key, text);
  return p;
}

namespace {

// The profile's "source" object (ProfileSource).
Status read_source(const Json& s, ProfileSource& source) {
  SLUICE_TRY(check_keys(s, "source", {"kind", "machine", "date", "scenario", "fit_error_pct", "note"}));
  SLUICE_TRY(read(s, "kind", "source", source.kind));
  SLUICE_TRY(read(s, "machine", "source", source.machine));
  SLUICE_TRY(read(s, "date", "source", source.date));
  SLUICE_TRY(read(s, "scenario", "source", source.scenario));
  SLUICE_TRY(read(s, "fit_error_pct", "source", source.fit_error_pct));
  SLUICE_TRY(read(s, "note", "source", source.note));
  return ok_status();
}

Status read_sources(const Json& j, SimProfile& p) {
  if (!j.is_object()) return bad("sources must be an object");
  const std::vector<std::string> keys = parameter_keys();
  for (const auto& [key, value] : j.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return bad("sources: \"" + key + "\" names no parameter");
    }
    if (!value.is_string() || value.get<std::string>().empty()) return bad("sources." + key + " must be a text");
    p.parameter_sources[key] = value.get<std::string>();
  }
  return ok_status();
}

}  // namespace

Status validate(const SimProfile& p) {
  if (p.name.empty()) return bad("name is empty");
  for (std::size_t c = 0; c < p.link_classes.size(); ++c) {
    const std::string where = "link_classes." + std::string(k_class_names[c]);
    SLUICE_TRY(check_factor(p.link_classes[c].bandwidth_factor, where + ".bandwidth_factor"));
    SLUICE_TRY(check_factor(p.link_classes[c].latency_factor, where + ".latency_factor"));
  }
  if (!std::isfinite(p.tcp_window_bytes) || p.tcp_window_bytes < 1) {
    return bad("network.tcp_window_bytes must be >= 1");
  }
  if (p.message_overhead_bytes > proto::k_max_message_bytes) return bad("network.message_overhead_bytes is too large");
  SLUICE_TRY(check_latency(p.local_message_latency_ns, "network.local_message_latency_ns"));
  SLUICE_TRY(check_latency(p.disk_read_latency_ns, "disk.read_latency_ns"));
  SLUICE_TRY(check_latency(p.disk_write_latency_ns, "disk.write_latency_ns"));
  SLUICE_TRY(check_latency(p.disk_sync_latency_ns, "disk.sync_latency_ns"));
  SLUICE_TRY(check_latency(p.disk_metadata_latency_ns, "disk.metadata_latency_ns"));
  SLUICE_TRY(check_latency(p.disk_request_occupancy_ns, "disk.request_occupancy_ns"));
  SLUICE_TRY(check_latency(p.disk_batch_occupancy_ns, "disk.batch_occupancy_ns"));
  SLUICE_TRY(check_factor(p.disk_read_bandwidth_factor, "disk.read_bandwidth_factor"));
  SLUICE_TRY(check_factor(p.disk_write_bandwidth_factor, "disk.write_bandwidth_factor"));
  SLUICE_TRY(check_optional_rate(p.disk_read_request_bytes_per_s, "disk.read_request_bytes_per_s"));
  SLUICE_TRY(check_optional_rate(p.disk_write_request_bytes_per_s, "disk.write_request_bytes_per_s"));
  if (p.disk_channels == 0 || p.disk_channels > k_max_disk_channels) {
    return bad("disk.channels = " + std::to_string(p.disk_channels) + " is outside [1, " +
               std::to_string(k_max_disk_channels) + "]");
  }
  if (p.disk_channel_stripe_bytes < k_min_disk_channel_stripe_bytes ||
      p.disk_channel_stripe_bytes > k_max_disk_channel_stripe_bytes) {
    return bad("disk.channel_stripe_bytes = " + std::to_string(p.disk_channel_stripe_bytes) + " is outside [" +
               std::to_string(k_min_disk_channel_stripe_bytes) + ", " +
               std::to_string(k_max_disk_channel_stripe_bytes) + "]");
  }
  if (p.cpu_cores_per_node == 0 || p.cpu_cores_per_node > k_max_cores_per_node) {
    return bad("cpu.cores_per_node must be in [1, " + std::to_string(k_max_cores_per_node) + "]");
  }
  for (std::size_t k = 0; k < p.cost_ns_per_unit.size(); ++k) {
    SLUICE_TRY(check_latency(p.cost_ns_per_unit[k],
                             "cpu.cost_ns_per_unit." + std::string(to_string(static_cast<CostKind>(k)))));
  }
  SLUICE_TRY(check_rate(p.memory_op_bytes_per_s, "memory.memory_op_bytes_per_s"));
  SLUICE_TRY(check_rate(p.same_location_copy_bytes_per_s, "memory.same_location_copy_bytes_per_s"));
  if (p.staging_cpu_copies > k_max_staging_cpu_copies) {
    return bad("staging.cpu_copies = " + std::to_string(p.staging_cpu_copies) + " exceeds " +
               std::to_string(k_max_staging_cpu_copies));
  }
  SLUICE_TRY(check_rate(p.staging_cpu_copy_bytes_per_s, "staging.cpu_copy_bytes_per_s"));
  if (!(p.page_cache_dirty_ratio >= 0 && p.page_cache_dirty_ratio <= 1)) {
    return bad("page_cache.dirty_ratio must be in [0, 1]");
  }
  SLUICE_TRY(check_rate(p.page_cache_copy_bytes_per_s, "page_cache.copy_bytes_per_s"));
  if (p.page_cache_read_ahead_bytes > k_max_read_ahead_bytes) {
    return bad("page_cache.read_ahead_bytes = " + std::to_string(p.page_cache_read_ahead_bytes) + " exceeds " +
               std::to_string(k_max_read_ahead_bytes));
  }
  return ok_status();
}

namespace {

// The host-memory sections: memory, staging, page_cache.
Status read_host_memory(const Json& j, SimProfile& p) {
  if (auto m = j.find("memory"); m != j.end()) {
    SLUICE_TRY(check_keys(*m, "memory", {"memory_op_bytes_per_s", "same_location_copy_bytes_per_s"}));
    SLUICE_TRY(read(*m, "memory_op_bytes_per_s", "memory", p.memory_op_bytes_per_s));
    SLUICE_TRY(read(*m, "same_location_copy_bytes_per_s", "memory", p.same_location_copy_bytes_per_s));
  }
  if (auto st = j.find("staging"); st != j.end()) {
    SLUICE_TRY(check_keys(*st, "staging", {"cpu_copies", "cpu_copy_bytes_per_s"}));
    SLUICE_TRY(read(*st, "cpu_copies", "staging", p.staging_cpu_copies));
    SLUICE_TRY(read(*st, "cpu_copy_bytes_per_s", "staging", p.staging_cpu_copy_bytes_per_s));
  }
  if (auto pc = j.find("page_cache"); pc != j.end()) {
    SLUICE_TRY(check_keys(*pc, "page_cache", {"dirty_ratio", "copy_bytes_per_s", "read_ahead_bytes"}));
    SLUICE_TRY(read(*pc, "dirty_ratio", "page_cache", p.page_cache_dirty_ratio));
    SLUICE_TRY(read(*pc, "copy_bytes_per_s", "page_cache", p.page_cache_copy_bytes_per_s));
    SLUICE_TRY(read(*pc, "read_ahead_bytes", "page_cache", p.page_cache_read_ahead_bytes));
  }
  return ok_status();
}

}  // namespace

Result<SimProfile> parse_profile(std::string_view json_text) {
  if (json_text.size() > k_max_profile_bytes) {
    return bad("file of " + std::to_string(json_text.size()) + " bytes exceeds k_max_profile_bytes");
  }
  Result<Json> parsed = base::parse_json_text(json_text);
  if (!parsed.ok()) return bad(parsed.status().message());
  const Json& j = *parsed;
  SLUICE_TRY(check_keys(j, "",
                        {"format", "version", "name", "source", "link_classes", "network", "disk", "cpu", "memory",
                         "staging", "page_cache", "sources"}));
  std::string format;
  SLUICE_TRY(read(j, "format", "", format));
  if (format != k_profile_format) {
    return bad("\"format\" must be \"" + std::string(k_profile_format) + "\", got \"" + format + "\"");
  }
  int version = 0;
  SLUICE_TRY(read(j, "version", "", version));
  if (version != k_profile_version) {
    return bad("version " + std::to_string(version) + " is not " + std::to_string(k_profile_version));
  }
  SimProfile p = default_profile();
  SLUICE_TRY(read(j, "name", "", p.name));
  if (auto s = j.find("source"); s != j.end()) {
    SLUICE_TRY(read_source(*s, p.source));
  }
  if (auto lc = j.find("link_classes"); lc != j.end()) {
    SLUICE_TRY(check_keys(*lc, "link_classes", {"pcie", "memory", "inter_socket", "network"}));
    for (std::size_t c = 0; c < k_class_names.size(); ++c) {
      auto one = lc->find(k_class_names[c]);
      if (one == lc->end()) continue;
      const std::string where = "link_classes." + std::string(k_class_names[c]);
      SLUICE_TRY(check_keys(*one, where, {"bandwidth_factor", "latency_factor"}));
      SLUICE_TRY(read(*one, "bandwidth_factor", where, p.link_classes[c].bandwidth_factor));
      SLUICE_TRY(read(*one, "latency_factor", where, p.link_classes[c].latency_factor));
    }
  }
  if (auto n = j.find("network"); n != j.end()) {
    SLUICE_TRY(check_keys(*n, "network", {"tcp_window_bytes", "message_overhead_bytes", "local_message_latency_ns"}));
    SLUICE_TRY(read(*n, "tcp_window_bytes", "network", p.tcp_window_bytes));
    SLUICE_TRY(read(*n, "message_overhead_bytes", "network", p.message_overhead_bytes));
    SLUICE_TRY(read(*n, "local_message_latency_ns", "network", p.local_message_latency_ns));
  }
  if (auto d = j.find("disk"); d != j.end()) {
    SLUICE_TRY(read_disk(*d, p));
  }
  if (auto c = j.find("cpu"); c != j.end()) {
    SLUICE_TRY(check_keys(*c, "cpu", {"cores_per_node", "cost_ns_per_unit"}));
    SLUICE_TRY(read(*c, "cores_per_node", "cpu", p.cpu_cores_per_node));
    if (auto costs = c->find("cost_ns_per_unit"); costs != c->end()) {
      if (!costs->is_object()) return bad("cpu.cost_ns_per_unit must be an object");
      for (const auto& [key, value] : costs->items()) {
        std::size_t k = 0;
        while (k < p.cost_ns_per_unit.size() && to_string(static_cast<CostKind>(k)) != key) ++k;
        if (k == p.cost_ns_per_unit.size()) return bad("unknown key \"cpu.cost_ns_per_unit." + key + "\"");
        SLUICE_TRY(read(*costs, key, "cpu.cost_ns_per_unit", p.cost_ns_per_unit[k]));
      }
    }
  }
  SLUICE_TRY(read_host_memory(j, p));
  if (auto src = j.find("sources"); src != j.end()) {
    SLUICE_TRY(read_sources(*src, p));
  }
  SLUICE_TRY(validate(p));
  return p;
}

#undef SLUICE_TRY

std::string to_json(const SimProfile& p) {
  Json j;
  j["format"] = k_profile_format;
  j["version"] = k_profile_version;
  j["name"] = p.name;
  j["source"] = {{"kind", p.source.kind},
                 {"machine", p.source.machine},
                 {"date", p.source.date},
                 {"scenario", p.source.scenario},
                 {"fit_error_pct", p.source.fit_error_pct},
                 {"note", p.source.note}};
  for (std::size_t c = 0; c < k_class_names.size(); ++c) {
    j["link_classes"][std::string(k_class_names[c])] = {{"bandwidth_factor", p.link_classes[c].bandwidth_factor},
                                                        {"latency_factor", p.link_classes[c].latency_factor}};
  }
  j["network"] = {{"tcp_window_bytes", p.tcp_window_bytes},
                  {"message_overhead_bytes", p.message_overhead_bytes},
                  {"local_message_latency_ns", p.local_message_latency_ns}};
  j["disk"] = {{"read_latency_ns", p.disk_read_latency_ns},
               {"write_latency_ns", p.disk_write_latency_ns},
               {"sync_latency_ns", p.disk_sync_latency_ns},
               {"metadata_latency_ns", p.disk_metadata_latency_ns},
               {"request_occupancy_ns", p.disk_request_occupancy_ns},
               {"read_bandwidth_factor", p.disk_read_bandwidth_factor},
               {"write_bandwidth_factor", p.disk_write_bandwidth_factor},
               {"read_request_bytes_per_s", p.disk_read_request_bytes_per_s},
               {"write_request_bytes_per_s", p.disk_write_request_bytes_per_s},
               {"batch_occupancy_ns", p.disk_batch_occupancy_ns},
               {"channels", p.disk_channels},
               {"channel_stripe_bytes", p.disk_channel_stripe_bytes}};
  j["cpu"]["cores_per_node"] = p.cpu_cores_per_node;
  for (std::size_t k = 0; k < p.cost_ns_per_unit.size(); ++k) {
    j["cpu"]["cost_ns_per_unit"][std::string(to_string(static_cast<CostKind>(k)))] = p.cost_ns_per_unit[k];
  }
  j["memory"] = {{"memory_op_bytes_per_s", p.memory_op_bytes_per_s},
                 {"same_location_copy_bytes_per_s", p.same_location_copy_bytes_per_s}};
  j["staging"] = {{"cpu_copies", p.staging_cpu_copies}, {"cpu_copy_bytes_per_s", p.staging_cpu_copy_bytes_per_s}};
  j["page_cache"] = {{"dirty_ratio", p.page_cache_dirty_ratio},
                     {"copy_bytes_per_s", p.page_cache_copy_bytes_per_s},
                     {"read_ahead_bytes", p.page_cache_read_ahead_bytes}};
  if (!p.parameter_sources.empty()) j["sources"] = p.parameter_sources;
  return j.dump(2) + "\n";
}

Result<SimProfile> load_profile_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(StatusCode::not_found, "sim profile: cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  Result<SimProfile> p = parse_profile(text.str());
  if (!p.ok()) return error(p.status().code(), path + ": " + p.status().message());
  return p;
}

Result<SimProfile> load_profile(std::string_view name, const std::vector<std::string>& search_dirs) {
  if (name == "default") return default_profile();
  std::string looked;
  for (const auto& dir : search_dirs) {
    const std::string path = dir + "/" + std::string(name) + ".json";
    std::ifstream probe(path);
    if (probe) return load_profile_file(path);
    looked += (looked.empty() ? "" : ", ") + path;
  }
  return error(StatusCode::not_found, "sim profile \"" + std::string(name) + "\" not found (looked in: " +
                                          (looked.empty() ? std::string("no directories") : looked) + ")");
}

}  // namespace sluice::sim
