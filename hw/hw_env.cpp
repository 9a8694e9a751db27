#include "hw/hw_env.hpp"

#include <time.h>

#include <algorithm>

#include "core/common/pattern.hpp"
#include "core/proto/codec.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "hw/hw_world.hpp"

namespace sluice::hw {

TimeNs HwEnv::wall_ns() const {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return TimeNs{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

void HwEnv::log(LogLevel level, std::string_view message) {
  static constexpr const char* k_level_names[] = {"debug", "info", "warn", "error"};
  world_.log(std::to_string(now()) + " " + k_level_names[static_cast<int>(level)] + " " + self_.to_string() + " " +
             std::string(message));
}

OpId HwEnv::next_op() {
  const OpId op = next_op_.fetch_add(1);
  loop_.note_started(op);
  return op;
}

OpId HwEnv::complete_now(Completion c) {
  const OpId op = next_op();
  c.op = op;
  loop_.push(Event(std::move(c)));  // delivered after the current handler returns
  return op;
}

Status HwEnv::send(Endpoint to, proto::Message message) {
  std::vector<std::byte> frame;
  Status encoded = proto::encode_into(message, frame);
  if (!encoded.ok()) return encoded;
  if (world_.loop_of(to) == nullptr)
    return error(StatusCode::unavailable, "send to unknown endpoint " + to.to_string());
  world_.note_message_sent();
  const MessageFate fate = world_.message_fate(self_, to, message);
  if (fate.drop || fate.copies == 0) {
    world_.note_message_dropped();
    return ok_status();
  }
  const std::uint32_t copies = std::min(fate.copies, k_max_message_copies);
  if (fate.extra_delay_ns > 0) {
    // Held up "in the network": counted in flight until it leaves, so that
    // the world is not idle while it waits.
    for (std::uint32_t c = 0; c < copies; ++c) {
      world_.note_in_flight(+1);
      loop_.run_at(now() + fate.extra_delay_ns + c, [this, to, frame] {
        deliver(to, frame).ignore();  // as on a network: the sender learnt "sent" already
        world_.note_in_flight(-1);
      });
    }
    return ok_status();
  }
  for (std::uint32_t c = 1; c < copies; ++c) {
    if (Status s = deliver(to, frame); !s.ok()) return s;
  }
  return deliver(to, std::move(frame));
}

Status HwEnv::deliver(Endpoint to, std::vector<std::byte> frame) {
  ServiceLoop* loop = world_.loop_of(to);
  if (loop == nullptr) return error(StatusCode::unavailable, "send to unknown endpoint " + to.to_string());
  Outgoing out{to, std::move(frame), nullptr, {}};
  if (to.node == self_.node) {
    // Same node: no socket, but the same bytes a peer would decode.
    Result<proto::Message> decoded = proto::decode(out.frame);
    if (!decoded.ok()) {
      return error(StatusCode::internal, "message does not survive its own codec: " + decoded.status().to_string());
    }
    out.local_loop = loop;
    out.local = std::move(decoded).value();
  }
  // From the loop's own thread every message, to this node or another, waits
  // for the turn's end, so that all leave in the order sent: a message to a
  // service of this node must not overtake one sent before it elsewhere
  // (the receiver may act on it towards that same place: mount.stress read
  // stale bytes when only remote messages waited).
  outbox_.push_back(std::move(out));
  if (!loop_.on_loop_thread()) flush_outbox();
  return ok_status();
}

void HwEnv::flush_outbox() {
  if (outbox_.empty()) return;
  if (before_send_) before_send_();
  std::vector<HwNode::Outgoing> run;
  std::size_t begin = 0;
  while (begin < outbox_.size()) {
    if (outbox_[begin].local_loop != nullptr) {
      outbox_[begin].local_loop->push(Event(Delivery{self_, std::move(*outbox_[begin].local)}));
      ++begin;
      continue;
    }
    // A run of messages to one other node, in the order sent: one transport call.
    const NodeId node = outbox_[begin].to.node;
    run.clear();
    for (; begin < outbox_.size() && outbox_[begin].local_loop == nullptr && outbox_[begin].to.node == node; ++begin) {
      run.push_back(HwNode::Outgoing{outbox_[begin].to, std::move(outbox_[begin].frame)});
    }
    Status failure;
    const std::size_t sent = node_.send_all(self_, node, run, &failure);
    // Env's contract (core/env.hpp): an error only for what is known at once;
    // delivery is not promised. A peer the transport cannot reach (its process
    // killed and not back yet: the connection refused or lost) loses the
    // message as a network would; the sender's timeouts and retries deal
    // with it, as with a message dropped on the way. Counted; the transport
    // logs the lost connections.
    if (sent < run.size()) count(k_metric_messages_undeliverable, static_cast<double>(run.size() - sent));
  }
  outbox_.clear();
}

OpId HwEnv::transfer(const TransferSpec& spec) {
  const OpId op = next_op();
  if (const TimeNs delay = world_.transfer_delay(self_, spec); delay > 0) {
    // A data-path fault: posted later, counted in flight meanwhile so that the world is not idle.
    world_.note_in_flight(+1);
    loop_.run_at(now() + delay, [this, op, spec] {
      post_transfer(op, spec);
      world_.note_in_flight(-1);
    });
    return op;
  }
  post_transfer(op, spec);
  return op;
}

void HwEnv::post_transfer(OpId op, const TransferSpec& spec) {
  switch (node_.transfer(loop_, op, spec)) {
    case HwNode::RemoteKeyUse::not_needed: break;
    case HwNode::RemoteKeyUse::carried: count(k_metric_rdma_key_carried, 1); break;
    case HwNode::RemoteKeyUse::fallback: count(k_metric_rdma_key_fallback, 1); break;
  }
}

OpId HwEnv::storage_io(const StorageIoSpec& spec) {
  const OpId op = next_op();
  node_.storage_io(loop_, op, spec);
  return op;
}

OpId HwEnv::compute(CostKind kind, std::uint64_t units) {
  // A workload's step is an emulated accelerator's time, which no work of this process stands for.
  if (kind == CostKind::workload_step) return timer(static_cast<TimeNs>(units));
  return complete_now(Completion{});
}

OpId HwEnv::timer(TimeNs delay_ns) {
  const OpId op = next_op();
  loop_.add_timer(now() + std::max<TimeNs>(delay_ns, 0), op);
  return op;
}

OpId HwEnv::checksum(const MemHandle& range) {
  Completion c;
  Result<std::span<std::byte>> bytes = node_.resolve(range, "checksum range");
  const GpuMemoryOps* gpu = node_.gpu_memory();
  if (!bytes.ok()) {
    c.status = bytes.status();
  } else if (range.kind == MemKind::gpu) {  // GPU bytes: copied out through pinned staging, CRC on the host
    Result<std::uint32_t> crc = gpu == nullptr
                                    ? Result<std::uint32_t>(error(StatusCode::unavailable, "no CUDA backend"))
                                    : gpu->crc32c(range.device, bytes->data(), range.length);
    if (!crc.ok()) {
      c.status = Status(crc.status().code(), "checksum " + range.to_string() + ": " + crc.status().message());
    } else {
      c.bytes = range.length;
      c.crc32c = *crc;
      c.crc_valid = true;
    }
  } else {
    c.bytes = range.length;
    c.crc32c = proto::crc32c(*bytes);
    c.crc_valid = true;
  }
  return complete_now(std::move(c));
}

OpId HwEnv::fill(const MemHandle& range, const PatternSpec& pattern) {
  Completion c;
  Result<std::span<std::byte>> bytes = node_.resolve(range, "fill range");
  const GpuMemoryOps* gpu = node_.gpu_memory();
  if (!bytes.ok()) {
    c.status = bytes.status();
  } else if (range.kind == MemKind::gpu) {  // written by a kernel on the GPU
    c.status = gpu == nullptr
                   ? error(StatusCode::unavailable, "no CUDA backend")
                   : gpu->fill(range.device, bytes->data(), range.length, pattern.seed, pattern.stream_offset);
    if (c.status.ok()) c.bytes = range.length;
  } else {
    fill_pattern(*bytes, pattern.seed, pattern.stream_offset);
    c.bytes = range.length;
  }
  return complete_now(std::move(c));
}

OpId HwEnv::verify(const MemHandle& range, const PatternSpec& pattern) {
  Completion c;
  Result<std::span<std::byte>> bytes = node_.resolve(range, "verify range");
  const GpuMemoryOps* gpu = node_.gpu_memory();
  std::optional<std::size_t> gpu_bad;
  if (bytes.ok() && range.kind == MemKind::gpu) {  // checked by a kernel on the GPU
    Result<std::optional<std::uint64_t>> found =
        gpu == nullptr
            ? Result<std::optional<std::uint64_t>>(error(StatusCode::unavailable, "no CUDA backend"))
            : gpu->find_mismatch(range.device, bytes->data(), range.length, pattern.seed, pattern.stream_offset);
    if (!found.ok()) {
      c.status = Status(found.status().code(), "verify " + range.to_string() + ": " + found.status().message());
      return complete_now(std::move(c));
    }
    gpu_bad = *found;
  }
  if (!bytes.ok()) {
    c.status = bytes.status();
  } else if (auto bad = range.kind == MemKind::gpu
                            ? gpu_bad
                            : first_pattern_mismatch(*bytes, pattern.seed, pattern.stream_offset)) {
    c.status = error(StatusCode::corrupt, "byte " + std::to_string(pattern.stream_offset + *bad) +
                                              " differs from the pattern (seed " + std::to_string(pattern.seed) +
                                              ") in " + range.to_string());
  } else {
    c.bytes = range.length;
  }
  return complete_now(std::move(c));
}

Result<MemHandle> HwEnv::alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes) {
  GpuRegistration how;
  Result<MemHandle> region = node_.alloc(kind, device, bytes, &how);
  if (region.ok() && kind == MemKind::gpu) {
    switch (how.path) {
      case GpuRegistration::Path::peer_memory: count(k_metric_gpu_region_peer_memory, 1); break;
      case GpuRegistration::Path::bounce: count(k_metric_gpu_region_bounce, 1); break;
    }
    if (how.peer_memory_failed) count(k_metric_gpu_peer_memory_fallback, 1);
  }
  return region;
}

void HwEnv::free(const MemHandle& region) { node_.free(region); }

Result<MemHandle> HwEnv::open_window(const MemHandle& range) { return node_.open_window(range); }

void HwEnv::close_window(const MemHandle& window) { node_.close_window(window); }

Result<proto::RdmaRegionDesc> HwEnv::remote_access(const MemHandle& range, std::uint32_t nic, NodeId grantee) {
  return node_.remote_access(range, nic, grantee);
}

bool HwEnv::transport_reaches(const MemHandle& range) {
  return range.kind != MemKind::gpu || node_.gpu_registered(range);
}

void HwEnv::count(std::string_view name, double delta) {
  std::lock_guard lock(metrics_mu_);
  auto it = counters_.find(name);
  if (it == counters_.end()) it = counters_.emplace(std::string(name), 0.0).first;
  it->second += delta;
}

void HwEnv::sample(std::string_view name, double value) {
  std::lock_guard lock(metrics_mu_);
  auto it = samples_.find(name);
  if (it == samples_.end()) it = samples_.emplace(std::string(name), std::vector<double>{}).first;
  it->second.push_back(value);
}

double HwEnv::counter(std::string_view name) const {
  std::lock_guard lock(metrics_mu_);
  auto it = counters_.find(name);
  return it == counters_.end() ? 0.0 : it->second;
}

std::map<std::string, double, std::less<>> HwEnv::counters() const {
  std::lock_guard lock(metrics_mu_);
  return counters_;
}

std::vector<double> HwEnv::samples(std::string_view name) const {
  std::lock_guard lock(metrics_mu_);
  auto it = samples_.find(name);
  return it == samples_.end() ? std::vector<double>{} : it->second;
}

}  // namespace sluice::hw
