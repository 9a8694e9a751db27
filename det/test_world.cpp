#include "det/test_world.hpp"

#include <algorithm>
#include <cstring>

#include "core/common/assert.hpp"
#include "core/faults/fault_control.hpp"
#include "core/common/pattern.hpp"
#include "core/common/percentile.hpp"
#include "core/proto/codec.hpp"
#include "core/proto/crc32c.hpp"

namespace sluice::testing {

static_assert(FaultWorld<TestWorld>, "TestWorld keeps the World contract (core/world.hpp)");

// ---- Distribution ---------------------------------------------------------

double Distribution::sum() const {
  double s = 0;
  for (double v : values) s += v;
  return s;
}

double Distribution::percentile(double p) const {
  if (values.empty()) return 0;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  return percentile_of_sorted(sorted, p / 100.0);  // core/common/percentile.hpp's one definition
}

// ---- TestEnv ----------------------------------------------------------------

TimeNs TestEnv::now() const { return world_.now_ns_; }

void TestEnv::log(LogLevel level, std::string_view message) {
  static constexpr const char* k_level_names[] = {"debug", "info", "warn", "error"};
  world_.logs_.push_back(std::to_string(world_.now_ns_) + " " + k_level_names[static_cast<int>(level)] + " " +
                         self_.to_string() + " " + std::string(message));
}

Status TestEnv::send(Endpoint to, proto::Message message) {
  if (world_.services_.find(to) == world_.services_.end()) {
    return error(StatusCode::unavailable, "send to unknown endpoint " + to.to_string());
  }
  if (world_.config_.roundtrip_messages_through_codec) {
    const std::vector<std::byte> frame = proto::encode(message);
    Result<proto::Message> decoded = proto::decode(frame);
    if (!decoded.ok()) {
      return error(StatusCode::internal, "message does not survive its own codec: " + decoded.status().to_string());
    }
    message = std::move(decoded).value();
  }
  ++world_.messages_sent_;
  // Whole-world faults (fault plans) first: a partition or a lost message
  // never reaches the per-message rules.
  if (world_.partitioned(self_.node, to.node) ||
      (world_.loss_probability_ > 0.0 && world_.fault_rng_.uniform01() < world_.loss_probability_)) {
    ++world_.messages_dropped_;
    return ok_status();
  }
  TimeNs delay = world_.config_.message_latency_ns + world_.extra_delay_ns_;
  std::uint32_t copies = 1;
  if (world_.message_hook_) {
    const MessageFate fate = world_.message_hook_(self_, to, message);
    copies = fate.drop ? 0 : std::min(fate.copies, k_max_message_copies);
    delay += fate.extra_delay_ns;
  }
  if (copies == 0) {
    ++world_.messages_dropped_;
    return ok_status();
  }
  for (std::uint32_t c = 0; c < copies; ++c) {
    TestWorld::Pending p;
    p.at_ns = world_.now_ns_ + delay + c;  // a duplicate arrives just after the original
    p.to = to;
    p.event = Delivery{self_, message};
    world_.push(std::move(p));
  }
  return ok_status();
}

Result<proto::RdmaRegionDesc> TestEnv::remote_access(const MemHandle& range, std::uint32_t nic, NodeId grantee) {
  if (!world_.config_.rdma_keys) return Env::remote_access(range, nic, grantee);
  if (Status s = world_.check_range(range, self_.node, "remote access range"); !s.ok()) return s;
  // No revocation to model: region ids are never reused here, and a key of
  // a freed region fails the check in transfer() (its region is gone).
  return world_.rdma_key_of(range.node, range.region, nic);
}

proto::RdmaRegionDesc TestWorld::rdma_key_of(NodeId node, std::uint32_t region, std::uint32_t nic) const {
  // One address per region (a virtual address), one rkey per (region, NIC):
  // an MR per device, as on real NICs.
  std::uint64_t state = config_.seed ^ ((std::uint64_t{node} << 32) | region);
  const std::uint64_t base = splitmix64(state);
  std::uint64_t nic_state = base ^ nic;
  proto::RdmaRegionDesc key;
  key.nic = nic;
  key.rkey = static_cast<std::uint32_t>(splitmix64(nic_state));
  key.address = 0x00007F0000000000ull | (base & 0x000000FFFFFFF000ull);
  auto n = nodes_.find(node);
  if (n != nodes_.end()) {
    auto r = n->second.regions.find(region);
    if (r != n->second.regions.end()) key.length = r->second.length;
  }
  return key;
}

OpId TestEnv::transfer(const TransferSpec& spec) {
  const auto& cfg = world_.config_;
  if (world_.transfer_observer_) world_.transfer_observer_(self_, spec);
  const bool one_sided =
      (spec.mode == TransferMode::rdma_write || spec.mode == TransferMode::rdma_read) && spec.src.node != spec.dst.node;
  if (cfg.rdma_keys && one_sided) count(spec.remote_region ? k_metric_rdma_key_carried : k_metric_rdma_key_fallback, 1);
  const bool local = spec.mode == TransferMode::local_copy || spec.src.node == spec.dst.node;
  const TimeNs at = world_.now_ns_ + cfg.transfer_latency_ns +
                    transfer_time_ns(spec.src.length, local ? cfg.local_copy_bytes_per_s : cfg.transfer_bytes_per_s) +
                    (world_.transfer_hook_ ? world_.transfer_hook_(self_, spec) : 0);
  return world_.schedule_completion(self_, at, [w = &world_, self = self_, spec](Completion& c) {
    if (spec.src.length != spec.dst.length) {
      c.status = error(StatusCode::invalid_argument,
                       "transfer lengths differ: " + spec.src.to_string() + " -> " + spec.dst.to_string());
      return;
    }
    if (Status s = w->check_range(spec.src, spec.src.node, "transfer source"); !s.ok()) {
      c.status = s;
      return;
    }
    if (Status s = w->check_range(spec.dst, spec.dst.node, "transfer destination"); !s.ok()) {
      c.status = s;
      return;
    }
    if (w->partitioned(spec.src.node, spec.dst.node)) {
      c.status = error(StatusCode::unavailable, "transfer " + spec.src.to_string() + " -> " + spec.dst.to_string() +
                                                    ": the nodes are partitioned");
      return;
    }
    if (w->config_.rdma_keys && spec.remote_region && spec.src.node != spec.dst.node) {
      // The remote end's NIC checks the carried key, as an HCA checks an rkey.
      const bool remote_is_dst = spec.dst.node != self.node;
      const MemHandle& remote = remote_is_dst ? spec.dst : spec.src;
      const std::uint32_t remote_nic = remote_is_dst ? spec.dst_nic : spec.src_nic;
      const proto::RdmaRegionDesc& key = *spec.remote_region;
      if (key != w->rdma_key_of(remote.node, remote.region, remote_nic) || remote.offset > key.length ||
          remote.length > key.length - remote.offset) {
        c.status = error(StatusCode::invalid_argument,
                         "transfer " + spec.src.to_string() + " -> " + spec.dst.to_string() +
                             ": remote access error: the carried key (nic " + std::to_string(key.nic) + ", rkey " +
                             std::to_string(key.rkey) + ") is not region " + std::to_string(remote.region) +
                             "'s key on NIC " + std::to_string(remote_nic) + " of node " + std::to_string(remote.node) +
                             " or does not cover the range");
        return;
      }
    }
    if (w->config_.move_bytes) {
      auto src = w->bytes(spec.src);
      auto dst = w->bytes(spec.dst);
      std::memmove(dst.data(), src.data(), src.size());
    }
    c.bytes = spec.src.length;
  });
}

namespace {

constexpr std::uint64_t k_test_crc_block_bytes = 4096;  // as hw_backends' k_crc_block_bytes

std::uint32_t block_crc(const std::vector<std::byte>& object, std::uint64_t block) {
  const std::uint64_t begin = block * k_test_crc_block_bytes;
  const std::uint64_t end = std::min<std::uint64_t>(object.size(), begin + k_test_crc_block_bytes);
  return proto::crc32c(std::span<const std::byte>(object.data() + begin, end - begin));
}

}  // namespace

OpId TestEnv::storage_io(const StorageIoSpec& spec) {
  auto& cfg = world_.config_;
  auto it = world_.targets_.find(spec.target);
  if (it == world_.targets_.end() || it->second.node != self_.node) {
    return world_.schedule_completion(self_, world_.now_ns_, [spec](Completion& c) {
      c.status = error(StatusCode::not_found, "storage target " + std::to_string(spec.target) + " is not on this node");
    });
  }
  TestWorld::Target& target = it->second;
  TimeNs service_ns = cfg.storage_latency_ns;
  if (spec.op == StorageOp::read) service_ns += transfer_time_ns(spec.buffer.length, cfg.storage_read_bytes_per_s);
  if (spec.op == StorageOp::write) service_ns += transfer_time_ns(spec.buffer.length, cfg.storage_write_bytes_per_s);
  if (auto slow = world_.disk_slowdown_.find(spec.target); slow != world_.disk_slowdown_.end()) {
    service_ns = static_cast<TimeNs>(static_cast<double>(service_ns) * slow->second);
  }
  const TimeNs start = std::max(world_.now_ns_, target.busy_until_ns);
  target.busy_until_ns = start + service_ns;
  return world_.schedule_completion(self_, target.busy_until_ns, [w = &world_, spec](Completion& c) {
    auto& objects = w->targets_[spec.target].objects;
    const bool needs_buffer = spec.op == StorageOp::read || spec.op == StorageOp::write;
    if (needs_buffer) {
      if (Status s = w->check_range(spec.buffer, w->targets_[spec.target].node, "storage buffer"); !s.ok()) {
        c.status = s;
        return;
      }
    }
    switch (spec.op) {
      case StorageOp::read: w->stored_read(spec, c); break;
      case StorageOp::write: w->stored_write(spec, c); break;
      case StorageOp::remove:
        objects.erase(spec.file_id);
        w->targets_[spec.target].block_crcs.erase(spec.file_id);
        w->targets_[spec.target].sizes.erase(spec.file_id);
        break;
      case StorageOp::stat: {
        const auto& sizes = w->targets_[spec.target].sizes;
        auto found = sizes.find(spec.file_id);
        c.bytes = found == sizes.end() ? 0 : found->second;
        break;
      }
      case StorageOp::allocate: w->targets_[spec.target].sizes.try_emplace(spec.file_id, 0); break;
      case StorageOp::punch: w->stored_punch(spec); break;
      case StorageOp::flush: break;  // TestEnv has no page cache: nothing is dirty
    }
  });
}

OpId TestEnv::compute(CostKind kind, std::uint64_t units) {
  const TimeNs cost = world_.config_.cost_ns_per_unit[static_cast<std::size_t>(kind)] * static_cast<TimeNs>(units);
  // workload_step is accelerator time, which overlaps the service's CPU work.
  if (kind == CostKind::workload_step) return world_.schedule_completion(self_, world_.now_ns_ + cost, {});
  const TimeNs start = std::max(world_.now_ns_, cpu_busy_until_ns_);
  cpu_busy_until_ns_ = start + cost;
  return world_.schedule_completion(self_, cpu_busy_until_ns_, {});
}

OpId TestEnv::timer(TimeNs delay_ns) {
  return world_.schedule_completion(self_, world_.now_ns_ + std::max<TimeNs>(delay_ns, 0), {});
}

OpId TestEnv::checksum(const MemHandle& range) {
  const TimeNs at = world_.now_ns_ + transfer_time_ns(range.length, world_.config_.memory_op_bytes_per_s);
  return world_.schedule_completion(self_, at, [w = &world_, range, me = self_](Completion& c) {
    if (Status s = w->check_range(range, me.node, "checksum range"); !s.ok()) {
      c.status = s;
      return;
    }
    c.bytes = range.length;
    if (w->config_.move_bytes) {
      c.crc32c = proto::crc32c(w->bytes(range));
      c.crc_valid = true;
    }
  });
}

OpId TestEnv::fill(const MemHandle& range, const PatternSpec& pattern) {
  const TimeNs at = world_.now_ns_ + transfer_time_ns(range.length, world_.config_.memory_op_bytes_per_s);
  return world_.schedule_completion(self_, at, [w = &world_, range, pattern, me = self_](Completion& c) {
    if (Status s = w->check_range(range, me.node, "fill range"); !s.ok()) {
      c.status = s;
      return;
    }
    if (w->config_.move_bytes) fill_pattern(w->bytes(range), pattern.seed, pattern.stream_offset);
    c.bytes = range.length;
  });
}

OpId TestEnv::verify(const MemHandle& range, const PatternSpec& pattern) {
  const TimeNs at = world_.now_ns_ + transfer_time_ns(range.length, world_.config_.memory_op_bytes_per_s);
  return world_.schedule_completion(self_, at, [w = &world_, range, pattern, me = self_](Completion& c) {
    if (Status s = w->check_range(range, me.node, "verify range"); !s.ok()) {
      c.status = s;
      return;
    }
    if (w->config_.move_bytes) {
      if (auto bad = first_pattern_mismatch(w->bytes(range), pattern.seed, pattern.stream_offset)) {
        c.status = error(StatusCode::corrupt, "byte " + std::to_string(pattern.stream_offset + *bad) +
                                                  " differs from the pattern (seed " + std::to_string(pattern.seed) +
                                                  ") in " + range.to_string());
        return;
      }
    }
    c.bytes = range.length;
  });
}

Result<MemHandle> TestEnv::alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes) {
  auto& node = world_.nodes_[self_.node];
  if (bytes == 0) return error(StatusCode::invalid_argument, "alloc of 0 bytes");
  if (node.allocated_bytes + bytes > world_.config_.node_memory_limit_bytes) {
    return error(StatusCode::no_space, "node " + std::to_string(self_.node) + " memory limit " +
                                           std::to_string(world_.config_.node_memory_limit_bytes) + " bytes reached");
  }
  const std::uint32_t id = node.next_region++;
  TestWorld::Region region;
  region.kind = kind;
  region.device = device;
  region.length = bytes;
  region.owner = self_;
  if (world_.config_.move_bytes) region.bytes.assign(bytes, std::byte{0});
  node.regions.emplace(id, std::move(region));
  node.allocated_bytes += bytes;
  return MemHandle{self_.node, kind, device, id, 0, bytes};
}

void TestEnv::free(const MemHandle& region) {
  auto& node = world_.nodes_[region.node];
  auto it = node.regions.find(region.region);
  if (it == node.regions.end()) return;
  if (it->second.parent == 0) node.allocated_bytes -= it->second.length;
  node.regions.erase(it);
}

Result<MemHandle> TestEnv::open_window(const MemHandle& range) {
  if (Status s = world_.check_range(range, self_.node, "window range"); !s.ok()) return s;
  auto& node = world_.nodes_[self_.node];
  const TestWorld::Region& of = node.regions.at(range.region);
  TestWorld::Region window;
  window.kind = of.kind;
  window.device = of.device;
  window.length = range.length;
  window.owner = self_;
  window.parent = of.parent != 0 ? of.parent : range.region;  // a window of a window names the region
  window.parent_offset = of.parent_offset + range.offset;
  const std::uint32_t id = node.next_region++;
  node.regions.emplace(id, std::move(window));
  return MemHandle{self_.node, range.kind, range.device, id, 0, range.length};
}

// Transfers are checked and their bytes moved when they complete: one into
// or out of a closed window fails then, moving nothing.
void TestEnv::close_window(const MemHandle& window) { free(window); }

void TestEnv::count(std::string_view name, double delta) {
  auto it = world_.counters_.find(name);
  if (it == world_.counters_.end()) it = world_.counters_.emplace(std::string(name), 0.0).first;
  it->second += delta;
}

void TestEnv::sample(std::string_view name, double value) {
  auto it = world_.samples_.find(name);
  if (it == world_.samples_.end()) it = world_.samples_.emplace(std::string(name), Distribution{}).first;
  it->second.values.push_back(value);
}

// ---- TestWorld ----------------------------------------------------------------

// The fault Rng's stream number: any constant apart from the services'
// (node << 32 | index) streams.
static constexpr std::uint64_t k_fault_rng_stream = 0xFA17'0000'0000'0000ULL;

TestWorld::TestWorld(TestWorldConfig config)
    : config_(config), root_rng_(config.seed), fault_rng_(Rng(config.seed).fork(k_fault_rng_stream)) {}
TestWorld::~TestWorld() = default;

void TestWorld::add_entry(Endpoint ep, std::unique_ptr<TestEnv> env, std::unique_ptr<Service> service,
                          ServiceFactory factory) {
  Entry e;
  e.env = std::move(env);
  e.service = std::move(service);
  e.factory = std::move(factory);
  Service* s = e.service.get();
  services_.emplace(ep, std::move(e));
  nodes_[ep.node];
  if (started_) s->start();
}

Endpoint TestWorld::endpoint_of(const Service& service) const {
  for (const auto& [ep, e] : services_) {
    if (e.service.get() == &service) return ep;
  }
  return {};
}

Env& TestWorld::env_of(const Service& service) {
  for (auto& [ep, e] : services_) {
    if (e.service.get() == &service) return *e.env;
  }
  SLUICE_ASSERT_MSG(false, "service not in this world");
  return *services_.begin()->second.env;
}

void TestWorld::add_target(TargetId target, NodeId node) {
  targets_[target].node = node;
  nodes_[node];
}

NodeId TestWorld::node_of_target(TargetId target) const {
  auto it = targets_.find(target);
  return it == targets_.end() ? k_no_id : it->second.node;
}

void TestWorld::start() {
  if (started_) return;
  started_ = true;
  for (auto& [ep, e] : services_) e.service->start();
}

TestWorld::Entry* TestWorld::entry(Endpoint ep) {
  auto it = services_.find(ep);
  return it == services_.end() ? nullptr : &it->second;
}

void TestWorld::push(Pending p) {
  p.seq = next_seq_++;
  if (Entry* e = entry(p.to)) p.incarnation = e->incarnation;
  queue_.push(std::move(p));
}

OpId TestWorld::schedule_completion(Endpoint to, TimeNs at_ns, std::function<void(Completion&)> effect) {
  const OpId op = next_op_++;
  if (Entry* e = entry(to)) e->ledger.started(op);
  Pending p;
  p.at_ns = at_ns;
  p.to = to;
  Completion c;
  c.op = op;
  p.event = c;
  if (effect) {
    p.before = [effect = std::move(effect)](Event& ev) { effect(std::get<Completion>(ev)); };
  }
  push(std::move(p));
  return op;
}

bool TestWorld::step() {
  if (queue_.empty()) return false;
  Pending p = queue_.top();
  queue_.pop();
  now_ns_ = std::max(now_ns_, p.at_ns);
  Entry* e = entry(p.to);
  if (e == nullptr || !e->alive || e->incarnation != p.incarnation) {
    if (std::holds_alternative<Delivery>(p.event)) ++messages_dropped_;
    return true;
  }
  if (const auto* c = std::get_if<Completion>(&p.event)) e->ledger.completed(c->op);
  if (p.before) p.before(p.event);
  e->service->on_event(p.event);
  return true;
}

std::uint64_t TestWorld::run_until_idle(std::uint64_t max_events) {
  start();
  std::uint64_t n = 0;
  while (n < max_events && step()) ++n;
  return n;
}

bool TestWorld::run_until(const std::function<bool()>& done, std::uint64_t max_events) {
  start();
  for (std::uint64_t n = 0; n < max_events && !done(); ++n) {
    if (!step()) break;
  }
  return done();
}

void TestWorld::run_for(TimeNs duration_ns) {
  start();
  const TimeNs until = now_ns_ + duration_ns;
  while (!queue_.empty() && queue_.top().at_ns <= until) step();
  now_ns_ = until;
}

void TestWorld::kill(Endpoint service) {
  if (Entry* e = entry(service)) {
    e->alive = false;
    ++e->incarnation;
    e->ledger.forget_all();
  }
}

void TestWorld::revive(Endpoint service) {
  if (Entry* e = entry(service)) e->alive = true;
}

bool TestWorld::alive(Endpoint service) const {
  auto it = services_.find(service);
  return it != services_.end() && it->second.alive;
}

Status TestWorld::restart(Endpoint service) {
  Entry* e = entry(service);
  if (e == nullptr) return error(StatusCode::not_found, "restart: no service at " + service.to_string());
  if (!e->factory) {
    return error(StatusCode::unavailable,
                 "restart of " + e->service->name() + ": it was built from arguments that cannot be copied");
  }
  ++e->incarnation;  // what the old instance started, and messages already sent to it, are dropped
  e->ledger.forget_all();
  auto& node = nodes_[service.node];
  for (auto it = node.regions.begin(); it != node.regions.end();) {
    if (it->second.owner == service) {
      if (it->second.parent == 0) node.allocated_bytes -= it->second.length;
      it = node.regions.erase(it);
    } else {
      ++it;
    }
  }
  // A new Env too: the old one's CPU queue belongs to the dead process.
  e->env = std::make_unique<TestEnv>(
      *this, service, root_rng_.fork((std::uint64_t{service.node} << 32 | service.service) ^ (e->incarnation << 20)));
  e->service = e->factory(*e->env);
  e->alive = true;
  if (started_) e->service->start();
  return ok_status();
}

void TestWorld::set_disk_slowdown(TargetId target, double factor) {
  if (factor <= 1.0) {
    disk_slowdown_.erase(target);
  } else {
    disk_slowdown_[target] = factor;
  }
}

bool TestWorld::partitioned(NodeId a, NodeId b) const { return faults::partitioned(partitions_, a, b); }

void TestWorld::set_message_faults(double loss_probability, TimeNs extra_delay_ns) {
  loss_probability_ = std::clamp(loss_probability, 0.0, 1.0);
  extra_delay_ns_ = std::max<TimeNs>(extra_delay_ns, 0);
}

void TestWorld::stored_read(const StorageIoSpec& spec, Completion& c) {
  const auto& sizes = targets_[spec.target].sizes;
  auto size_it = sizes.find(spec.file_id);
  const std::uint64_t size = size_it == sizes.end() ? 0 : size_it->second;
  std::uint64_t n = 0;
  if (spec.object_offset < size) n = std::min<std::uint64_t>(spec.buffer.length, size - spec.object_offset);
  auto obj = targets_[spec.target].objects.find(spec.file_id);
  if (config_.move_bytes && n > 0) {
    // The CRCs at rest of every block the read returns.
    const auto& crcs = targets_[spec.target].block_crcs[spec.file_id];
    for (std::uint64_t b = spec.object_offset / k_test_crc_block_bytes;
         b <= (spec.object_offset + n - 1) / k_test_crc_block_bytes; ++b) {
      if (b >= crcs.size() || !crcs[b]) continue;  // never written
      if (block_crc(obj->second, b) != *crcs[b]) {
        c.status = error(StatusCode::corrupt, "target " + std::to_string(spec.target) + " object " +
                                                  std::to_string(spec.file_id) + " block " + std::to_string(b) +
                                                  " changed at rest (CRC32C differs from the one recorded)");
        return;
      }
    }
  }
  if (config_.move_bytes) {
    auto dst = bytes(spec.buffer);
    if (n > 0) std::memcpy(dst.data(), obj->second.data() + spec.object_offset, n);
    c.crc32c = proto::crc32c(std::span<const std::byte>(dst.data(), n));
    c.crc_valid = true;
  }
  c.bytes = n;
}

void TestWorld::stored_write(const StorageIoSpec& spec, Completion& c) {
  const std::uint64_t end = spec.object_offset + spec.buffer.length;
  if (config_.move_bytes) {
    auto src = bytes(spec.buffer);
    if (spec.crc32c && proto::crc32c(src) != *spec.crc32c) {
      c.status = error(StatusCode::corrupt, "target " + std::to_string(spec.target) + ": refused a write to object " +
                                                std::to_string(spec.file_id) +
                                                " whose bytes differ from the CRC32C they must have");
      return;
    }
    auto& obj = targets_[spec.target].objects[spec.file_id];
    const std::uint64_t old_size = obj.size();
    if (obj.size() < end) obj.resize(end);
    std::memcpy(obj.data() + spec.object_offset, src.data(), src.size());
    if (!src.empty()) {
      auto& crcs = targets_[spec.target].block_crcs[spec.file_id];
      const std::uint64_t last = (end - 1) / k_test_crc_block_bytes;
      if (crcs.size() <= last) crcs.resize(last + 1);
      // From the old end on: zeros filled a gap in the old last block too.
      const std::uint64_t first = std::min(old_size, spec.object_offset) / k_test_crc_block_bytes;
      for (std::uint64_t b = first; b <= last; ++b) {
        const std::uint64_t bs = b * k_test_crc_block_bytes;
        if (bs >= old_size && bs + k_test_crc_block_bytes <= spec.object_offset) continue;  // all gap: unwritten
        crcs[b] = block_crc(obj, b);
      }
    }
    c.crc32c = proto::crc32c(src);
    c.crc_valid = true;
  }
  auto& size = targets_[spec.target].sizes[spec.file_id];
  size = std::max(size, end);
  c.bytes = spec.buffer.length;
}

void TestWorld::stored_punch(const StorageIoSpec& spec) {
  Target& target = targets_[spec.target];
  auto obj = target.objects.find(spec.file_id);
  if (!config_.move_bytes || obj == target.objects.end()) return;
  const std::uint64_t size = obj->second.size();
  const std::uint64_t begin = std::min(spec.object_offset, size);
  const std::uint64_t end = spec.length > size - begin ? size : begin + spec.length;
  if (begin == end) return;
  std::memset(obj->second.data() + begin, 0, end - begin);
  // The blocks it touched hold what the object holds now.
  auto& crcs = target.block_crcs[spec.file_id];
  for (std::uint64_t b = begin / k_test_crc_block_bytes; b <= (end - 1) / k_test_crc_block_bytes; ++b) {
    if (b < crcs.size() && crcs[b]) crcs[b] = block_crc(obj->second, b);
  }
}

Status TestWorld::check_range(const MemHandle& range, NodeId expected_node, const char* what) const {
  std::optional<std::uint64_t> region_length;
  if (auto n = nodes_.find(range.node); n != nodes_.end()) {
    if (auto r = n->second.regions.find(range.region); r != n->second.regions.end()) region_length = r->second.length;
  }
  return sluice::check_range(range, expected_node, region_length, what);
}

std::vector<std::byte>* TestWorld::region_bytes(NodeId node, std::uint32_t region) {
  auto n = nodes_.find(node);
  if (n == nodes_.end()) return nullptr;
  auto r = n->second.regions.find(region);
  return r == n->second.regions.end() ? nullptr : &r->second.bytes;
}

std::span<std::byte> TestWorld::bytes(const MemHandle& range) {
  std::uint32_t region = range.region;
  std::uint64_t offset = range.offset;
  if (auto n = nodes_.find(range.node); n != nodes_.end()) {
    if (auto r = n->second.regions.find(region); r != n->second.regions.end() && r->second.parent != 0) {
      offset += r->second.parent_offset;  // a window: the bytes are its region's
      region = r->second.parent;
    }
  }
  auto* v = region_bytes(range.node, region);
  SLUICE_ASSERT_MSG(v != nullptr && offset + range.length <= v->size(), "a range within a live allocation");
  return {v->data() + offset, range.length};
}

const std::vector<std::byte>* TestWorld::object_bytes(TargetId target, FileId file_id) const {
  auto t = targets_.find(target);
  if (t == targets_.end()) return nullptr;
  auto o = t->second.objects.find(file_id);
  return o == t->second.objects.end() ? nullptr : &o->second;
}

std::size_t TestWorld::object_count(TargetId target) const {
  auto t = targets_.find(target);
  return t == targets_.end() ? 0 : t->second.sizes.size();
}

std::uint64_t TestWorld::allocated_bytes(NodeId node) const {
  auto n = nodes_.find(node);
  return n == nodes_.end() ? 0 : n->second.allocated_bytes;
}

double TestWorld::counter(std::string_view name) const {
  auto it = counters_.find(name);
  return it == counters_.end() ? 0.0 : it->second;
}

const Distribution* TestWorld::samples(std::string_view name) const {
  auto it = samples_.find(name);
  return it == samples_.end() ? nullptr : &it->second;
}

}  // namespace sluice::testing
