#include "hw/hw_node.hpp"

#include "core/common/assert.hpp"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include "core/proto/codec.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "hw/hw_world.hpp"

namespace sluice::hw {
namespace {

// A host region's size rounded up to the direct-I/O alignment (what alloc asks aligned_alloc for).
std::uint64_t rounded_host_bytes(std::uint64_t bytes) {
  return (bytes + k_direct_io_alignment_bytes - 1) / k_direct_io_alignment_bytes * k_direct_io_alignment_bytes;
}

constexpr std::uint64_t k_wake_id = ~std::uint64_t{0};
constexpr std::uint64_t k_transport_id = ~std::uint64_t{0} - 1;
constexpr int k_dispatch_batch = 64;
constexpr std::size_t k_poll_batch = 256;

// The tag of a control frame: which service sent it, and to which.
std::uint64_t frame_tag(ServiceIndex from, ServiceIndex to) { return (std::uint64_t{from} << 32) | to; }

}  // namespace

HwNode::HwNode(HwWorld& world, NodeId id) : world_(world), id_(id) {}

const GpuMemoryOps* HwNode::gpu_memory() const { return world_.config().gpu_memory; }

std::uint64_t HwNode::wire_key(std::uint32_t region) const { return world_.region_wire_key(id_, region); }

HwNode::~HwNode() {
  stop();
  const GpuMemoryOps* gpu = gpu_memory();
  for (auto& [region_id, region] : regions_) {
    if (region.window) continue;  // the memory is its region's
    if (region.kind == MemKind::gpu) {
      if (gpu != nullptr) gpu->free(region.device, region.data);
    } else {
      std::free(region.data);
    }
  }
  for (auto& [bytes, data] : pooled_) std::free(data);
}

Status HwNode::open() {
  const HwWorldConfig& config = world_.config();
  transport::TransportConfig tc;
  tc.local_id = id_;
  if (config.node_network) {
    Result<NodeNetwork> network = config.node_network(id_);
    if (!network.ok())
      return error(network.status().code(), "node " + std::to_string(id_) + ": " + network.status().message());
    if (network->rail_addresses.empty())
      return error(StatusCode::invalid_argument, "node " + std::to_string(id_) + ": no rail address");
    tc.rail_addresses = network->rail_addresses;
    tc.netns = network->netns;
    world_.log("node " + std::to_string(id_) + ": network namespace " + tc.netns + ", rails " +
               tc.rail_addresses.front() +
               (tc.rail_addresses.size() > 1 ? " and " + std::to_string(tc.rail_addresses.size() - 1) + " more" : ""));
  } else {
    Result<std::vector<std::string>> rails =
        transport::loopback_rail_addresses(config.transport, config.rails_per_node);
    if (!rails.ok()) return rails.status();
    tc.rail_addresses = *rails;
  }
  tc.connections_per_rail = config.connections_per_rail;
  tc.shared_secret = config.shared_secret;
  tc.require_grants = true;  // the core grants every region it hands a peer (Env::remote_access)
  tc.log = [this](std::string_view line) {
    // A normal shutdown closes every connection: peers lost then are not news.
    if (world_.shutting_down()) return;
    world_.log("node " + std::to_string(id_) + ": " + std::string(line));
  };
  Result<std::unique_ptr<transport::Transport>> t = transport::create_transport(config.transport, tc);
  if (!t.ok()) return t.status();
  transport_ = std::move(t).value();
  address_ = transport_->listen_address();
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return error(StatusCode::io_error, "node " + std::to_string(id_) + ": eventfd failed");
  return ok_status();
}

transport::PeerAddress HwNode::address() const { return down_ ? transport::PeerAddress{} : address_; }

Status HwNode::add_target(TargetId target, const StorageTargetConfig& config) {
  Result<std::unique_ptr<StorageBackend>> b = create_storage_backend(world_.config().storage_backend, config);
  if (!b.ok()) return b.status();
  std::unique_ptr<StorageBackend> backend = std::move(b).value();
  if (world_.config().wrap_storage_backend) backend = world_.config().wrap_storage_backend(target, std::move(backend));
  if (!backend)
    return error(StatusCode::internal, "target " + std::to_string(target) + ": the backend wrapper returned none");
  world_.log("node " + std::to_string(id_) + ": target " + std::to_string(target) + " at " + config.directory + ": " +
             std::string(backend->name()) + ", " + backend->io_path());
  targets_.emplace(target, std::move(backend));
  return ok_status();
}

void HwNode::start() {
  if (dispatcher_.joinable() || !transport_) return;
  dispatcher_ = std::thread([this] {
    ::pthread_setname_np(::pthread_self(), ("disp:node" + std::to_string(id_)).substr(0, 15).c_str());
    dispatch();
  });
}

void HwNode::stop() {
  if (dispatcher_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
    dispatcher_.join();
  }
  // Closing the transport drops every connection: peers see this node vanish.
  down_ = true;
  transport_.reset();
  targets_.clear();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
}

// ---- memory -------------------------------------------------------------------

Result<MemHandle> HwNode::alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes,
                                GpuRegistration* gpu_registration) {
  const std::string where = "node " + std::to_string(id_) + " alloc";
  if (bytes == 0) return error(StatusCode::invalid_argument, where + " of 0 bytes");
  const GpuMemoryOps* gpu = gpu_memory();
  if (kind == MemKind::gpu && gpu == nullptr) {
    return error(
        StatusCode::unavailable,
        where +
            ": GPU memory needs the CUDA backend (HwWorldConfig::gpu_memory: hw_backends/cuda gpu_memory_ops()), "
            "which this program did not install");
  }
  const std::uint64_t limit = world_.config().node_memory_limit_bytes;
  {
    std::lock_guard lock(mu_);
    if (allocated_bytes_ + bytes > limit) {
      return error(StatusCode::no_space, where + ": node memory limit " + std::to_string(limit) + " bytes reached");
    }
  }
  if (kind == MemKind::gpu) {
    // cudaMalloc'd, then registered with the transport where it reaches GPU
    // memory, so a storage server can put chunks straight into it; else it
    // stays on the bounce path ("GPU regions" in hw_node.hpp).
    Result<std::byte*> data = gpu->alloc(device, bytes);
    if (!data.ok()) return Status(data.status().code(), where + ": " + data.status().message());
    std::uint32_t region_id = 0;
    {
      std::lock_guard lock(mu_);
      region_id = next_region_++;
      regions_.emplace(region_id, Region{*data, bytes, kind, device});
      allocated_bytes_ += bytes;
    }
    const GpuRegistration how = register_gpu_region(region_id, *data, bytes, device);
    if (gpu_registration != nullptr) *gpu_registration = how;
    return MemHandle{id_, kind, device, region_id, 0, bytes};
  }
  const std::uint64_t rounded = rounded_host_bytes(bytes);
  std::byte* data = nullptr;
  {
    std::lock_guard lock(mu_);
    if (auto it = pooled_.find(rounded); it != pooled_.end()) {
      data = it->second;
      pooled_bytes_ -= rounded;
      pooled_.erase(it);
    }
  }
  if (data == nullptr) data = static_cast<std::byte*>(std::aligned_alloc(k_direct_io_alignment_bytes, rounded));
  if (data == nullptr) return error(StatusCode::no_space, where + ": out of host memory for " + std::to_string(bytes));
  std::memset(data, 0, rounded);  // a region starts zeroed, reused or not: no bytes of an earlier one show through
  std::uint32_t region_id = 0;
  {
    std::lock_guard lock(mu_);
    region_id = next_region_++;
    regions_.emplace(region_id, Region{data, bytes, kind, device});
    allocated_bytes_ += bytes;
  }
  Status registered =
      transport_->register_region(wire_key(region_id), std::span<std::byte>(data, bytes), transport::RegionKind::host);
  if (!registered.ok()) {
    std::lock_guard lock(mu_);
    regions_.erase(region_id);
    allocated_bytes_ -= bytes;
    std::free(data);
    return registered;
  }
  return MemHandle{id_, kind, device, region_id, 0, bytes};
}

void HwNode::free(const MemHandle& region) {
  std::byte* data = nullptr;
  Region freed;
  {
    std::lock_guard lock(mu_);
    auto it = regions_.find(region.region);
    if (it == regions_.end()) return;
    data = it->second.data;
    freed = it->second;
    allocated_bytes_ -= it->second.length;
    regions_.erase(it);
  }
  if (freed.kind == MemKind::gpu) {
    // As below: transfers into a registered region end before it goes, the memory last.
    if (freed.registered && transport_) transport_->deregister_region(wire_key(region.region)).ignore();
    if (const GpuMemoryOps* gpu = gpu_memory()) gpu->free(freed.device, data);
    return;
  }
  // Waits for incoming transfers into the region to finish, then releases it.
  if (transport_) transport_->deregister_region(wire_key(region.region)).ignore();  // absent only after stop()
  const std::uint64_t rounded = rounded_host_bytes(freed.length);
  {
    std::lock_guard lock(mu_);
    if (pooled_bytes_ + rounded <= k_pooled_host_bytes) {
      pooled_.emplace(rounded, data);
      pooled_bytes_ += rounded;
      return;
    }
  }
  std::free(data);
}

Result<MemHandle> HwNode::open_window(const MemHandle& range) {
  Result<std::span<std::byte>> bytes = resolve(range, "window range");
  if (!bytes.ok()) return bytes.status();
  if (!transport_) return error(StatusCode::unavailable, "node " + std::to_string(id_) + " is stopped");
  std::uint32_t window_id = 0;
  bool gpu_registered_parent = false;
  {
    std::lock_guard lock(mu_);
    const Region& of = regions_.at(range.region);
    gpu_registered_parent = of.kind == MemKind::gpu && of.registered;
    window_id = next_region_++;
    Region window{bytes->data(), range.length, range.kind, range.device};
    window.window = true;
    regions_.emplace(window_id, window);
  }
  if (range.kind == MemKind::gpu) {
    // Reached by the transport only where its region is (GPUDirect RDMA);
    // otherwise transfers bounce, as for the region itself.
    if (gpu_registered_parent) register_gpu_region(window_id, bytes->data(), range.length, range.device);
  } else {
    Status registered = transport_->register_region(wire_key(window_id), *bytes, transport::RegionKind::host);
    if (!registered.ok()) {
      std::lock_guard lock(mu_);
      regions_.erase(window_id);
      return registered;
    }
    std::lock_guard lock(mu_);
    regions_.at(window_id).registered = true;
  }
  return MemHandle{id_, range.kind, range.device, window_id, 0, range.length};
}

void HwNode::close_window(const MemHandle& window) {
  Region closed;
  {
    std::lock_guard lock(mu_);
    auto it = regions_.find(window.region);
    if (it == regions_.end() || !it->second.window) return;
    closed = it->second;
    regions_.erase(it);
  }
  // The fence: waits for an incoming transfer moving bytes now; later ones find no key.
  if (closed.registered && transport_) transport_->deregister_region(wire_key(window.region)).ignore();
}

std::uint64_t HwNode::allocated_bytes() const {
  std::lock_guard lock(mu_);
  return allocated_bytes_;
}

Result<std::span<std::byte>> HwNode::resolve(const MemHandle& range, std::string_view what) const {
  std::lock_guard lock(mu_);
  auto it = regions_.find(range.region);
  const bool found = range.node == id_ && it != regions_.end();
  if (Status s = check_range(range, id_, found ? std::optional<std::uint64_t>(it->second.length) : std::nullopt, what);
      !s.ok()) {
    return s;
  }
  return std::span<std::byte>(it->second.data + range.offset, range.length);
}

// ---- operations -------------------------------------------------------------------

std::uint64_t HwNode::route(ServiceLoop& loop, OpId op) {
  in_flight_ops_.fetch_add(1);
  std::lock_guard lock(mu_);
  const std::uint64_t cookie = next_cookie_++;
  routes_.emplace(cookie, Route{&loop, op});
  return cookie;
}

void HwNode::complete(std::uint64_t cookie, Completion c) {
  Route r;
  {
    std::lock_guard lock(mu_);
    auto it = routes_.find(cookie);
    if (it == routes_.end()) return;
    r = it->second;
    routes_.erase(it);
  }
  c.op = r.op;
  r.loop->push(Event(std::move(c)));
  in_flight_ops_.fetch_sub(1);  // after the push: an idle check never sees neither
}

std::uint32_t HwNode::rail_of(std::uint32_t nic) {
  const std::uint32_t rails = world_.config().rails_per_node;
  if (nic == k_no_id) return 0;
  if (nic >= rails) {
    bool first = false;
    {
      std::lock_guard lock(mu_);
      first = !rail_wrap_logged_;
      rail_wrap_logged_ = true;
    }
    if (first) {
      world_.log("node " + std::to_string(id_) + ": NIC " + std::to_string(nic) + " maps to rail " +
                 std::to_string(nic % rails) + " (this node has " + std::to_string(rails) + " rails)");
    }
    return nic % rails;
  }
  return nic;
}

Result<transport::PeerId> HwNode::peer_for(NodeId node) {
  {
    std::lock_guard lock(mu_);
    auto it = peers_.find(node);
    if (it != peers_.end()) return it->second;
  }
  Result<transport::PeerAddress> address = world_.address_of(node);
  if (!address.ok()) return address.status();
  if (!transport_) return error(StatusCode::unavailable, "node " + std::to_string(id_) + " is stopped");
  Result<transport::PeerId> peer = transport_->connect(*address);
  if (!peer.ok()) return peer.status();
  std::lock_guard lock(mu_);
  if (auto down = std::find(early_down_.begin(), early_down_.end(), *peer); down != early_down_.end()) {
    early_down_.erase(down);  // lost before it was filed: the next use connects afresh
    return error(StatusCode::unavailable, "node " + std::to_string(id_) + ": the connection to node " +
                                              std::to_string(node) + " failed at once");
  }
  auto [it, inserted] = peers_.emplace(node, *peer);
  if (!inserted) transport_->disconnect(*peer).ignore();  // another thread connected first; keep one
  return it->second;
}

void HwNode::post_or_defer(std::function<Status()> post, std::uint64_t cookie) {
  const Status st = post();
  if (st.ok()) return;
  if (st.code() == StatusCode::again) {
    std::lock_guard lock(mu_);
    deferred_.emplace_back(std::move(post), cookie);
    return;
  }
  Completion c;
  c.status = st;
  complete(cookie, std::move(c));
}

void HwNode::retry_deferred() {
  std::vector<std::pair<std::function<Status()>, std::uint64_t>> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(deferred_);
  }
  for (auto& [post, cookie] : pending) post_or_defer(std::move(post), cookie);
}

HwNode::RemoteKeyUse HwNode::transfer(ServiceLoop& loop, OpId op, const TransferSpec& spec) {
  const std::uint64_t cookie = route(loop, op);
  const auto fail = [&](Status st) {
    Completion c;
    c.status = std::move(st);
    complete(cookie, std::move(c));
    return RemoteKeyUse::not_needed;
  };
  if (spec.src.length != spec.dst.length) {
    return fail(error(StatusCode::invalid_argument,
                      "transfer lengths differ: " + spec.src.to_string() + " -> " + spec.dst.to_string()));
  }
  const bool src_here = spec.src.node == id_;
  const bool dst_here = spec.dst.node == id_;
  if (src_here && dst_here) {
    Result<std::span<std::byte>> src = resolve(spec.src, "transfer source");
    if (!src.ok()) return fail(src.status());
    Result<std::span<std::byte>> dst = resolve(spec.dst, "transfer destination");
    if (!dst.ok()) return fail(dst.status());
    if (spec.src.kind == MemKind::gpu || spec.dst.kind == MemKind::gpu) {
      // cudaMemcpy between a GPU region and host/pinned memory (or GPU to GPU).
      const GpuMemoryOps* gpu = gpu_memory();
      const std::uint16_t device = spec.dst.kind == MemKind::gpu ? spec.dst.device : spec.src.device;
      Status copied = gpu == nullptr ? error(StatusCode::unavailable, "GPU transfer without the CUDA backend")
                                     : gpu->copy(device, dst->data(), src->data(), src->size());
      if (!copied.ok())
        return fail(Status(copied.code(), "transfer " + spec.src.to_string() + " -> " + spec.dst.to_string() + ": " +
                                              copied.message()));
    } else {
      std::memmove(dst->data(), src->data(), src->size());
    }
    Completion c;
    c.bytes = spec.src.length;
    complete(cookie, std::move(c));
    return RemoteKeyUse::not_needed;
  }
  if (!src_here && !dst_here) {
    return fail(error(StatusCode::invalid_argument, "transfer " + spec.src.to_string() + " -> " + spec.dst.to_string() +
                                                        " touches neither end on node " + std::to_string(id_)));
  }
  const MemHandle& local = src_here ? spec.src : spec.dst;
  const MemHandle& remote = src_here ? spec.dst : spec.src;
  Result<std::span<std::byte>> local_bytes = resolve(local, src_here ? "transfer source" : "transfer destination");
  if (!local_bytes.ok()) return fail(local_bytes.status());
  if (local.kind == MemKind::gpu && !gpu_registered(local)) {
    return fail(error(StatusCode::unavailable, "transfer " + spec.src.to_string() + " -> " + spec.dst.to_string() +
                                                   ": GPU memory is not registered with the transport "
                                                   "(the plan must bounce through pinned memory)"));
  }
  if (spec.src.length == 0) {
    Completion c;
    complete(cookie, std::move(c));
    return RemoteKeyUse::not_needed;
  }
  Result<transport::PeerId> peer = peer_for(remote.node);
  if (!peer.ok()) return fail(peer.status());
  transport::BulkRequest r;
  r.peer = *peer;
  r.rail = rail_of(src_here ? spec.src_nic : spec.dst_nic);
  r.local_key = wire_key(local.region);
  r.local_offset = local.offset;
  r.remote_key = world_.region_wire_key(remote.node, remote.region);
  r.remote_offset = remote.offset;
  r.bytes = spec.src.length;
  r.cookie = cookie;
  transport::Transport* t = transport_.get();
  const transport::Capabilities& caps = t->capabilities();
  RemoteKeyUse key_use = RemoteKeyUse::not_needed;
  if (caps.rdma_write || caps.rdma_read) {
    // Our rail r reaches the peer's rail r (same rail count on every node).
    const std::uint32_t key_rail = spec.remote_region ? rail_of(spec.remote_region->nic) : k_no_id;
    if (spec.remote_region && key_rail == r.rail) {
      r.remote_access = transport::RemoteRegionAccess{spec.remote_region->address, spec.remote_region->rkey,
                                                      spec.remote_region->length};
      key_use = RemoteKeyUse::carried;
    } else {
      key_use = RemoteKeyUse::fallback;
      bool first = false;
      {
        std::lock_guard lock(mu_);
        bool& logged = spec.remote_region ? key_rail_logged_ : no_key_logged_;
        first = !logged;
        logged = true;
      }
      if (first) {
        world_.log("node " + std::to_string(id_) + ": transfer " + spec.src.to_string() + " -> " +
                   spec.dst.to_string() + " asks node " + std::to_string(remote.node) +
                   " for its RDMA key (fallback, counted in " + std::string(k_metric_rdma_key_fallback) + "): " +
                   (spec.remote_region ? "the carried key is for rail " + std::to_string(key_rail) +
                                             ", the transfer reaches rail " + std::to_string(r.rail)
                                       : std::string("no key carried")));
      }
    }
  }
  post_or_defer([t, r, src_here] { return src_here ? t->put(r) : t->get(r); }, cookie);
  return key_use;
}

GpuRegistration HwNode::register_gpu_region(std::uint32_t region_id, std::byte* data, std::uint64_t bytes,
                                            std::uint16_t device) {
  GpuRegistration how;
  if (!transport_) return how;
  const transport::Capabilities& caps = transport_->capabilities();
  const std::span<std::byte> range(data, bytes);
  const std::string region_text = "node " + std::to_string(id_) + ": GPU region " + std::to_string(region_id) +
                                  " of GPU " + std::to_string(device) + " (" + std::to_string(bytes) + " bytes)";
  const std::string transport_name(transport_->name());
  if (caps.reaches(transport::RegionKind::cuda)) {
    const Status registered = transport_->register_region(wire_key(region_id), range, transport::RegionKind::cuda);
    if (registered.ok()) {
      std::lock_guard lock(mu_);
      regions_.at(region_id).registered = true;
      how.path = GpuRegistration::Path::peer_memory;
      return how;
    }
    how.peer_memory_failed = true;
    log_gpu_fallback_once(gpu_peer_memory_fallback_logged_,
                          region_text + " not registered with transport " + transport_name + " by pointer (" +
                              registered.to_string() +
                              "): transfers to and from it must bounce through pinned memory (counted in " +
                              std::string(k_metric_gpu_peer_memory_fallback) + ")");
  }
  return how;
}

void HwNode::log_gpu_fallback_once(bool& logged, const std::string& line) {
  {
    std::lock_guard lock(mu_);
    if (logged) return;
    logged = true;
  }
  world_.log(line);
}

bool HwNode::gpu_registered(const MemHandle& range) {
  std::lock_guard lock(mu_);
  auto it = regions_.find(range.region);
  return it != regions_.end() && it->second.kind == MemKind::gpu && it->second.registered;
}

Result<proto::RdmaRegionDesc> HwNode::remote_access(const MemHandle& range, std::uint32_t nic, NodeId grantee) {
  Result<std::span<std::byte>> bytes = resolve(range, "remote access range");
  if (!bytes.ok()) return bytes.status();
  if (range.kind == MemKind::gpu && !gpu_registered(range)) {
    return error(StatusCode::unavailable,
                 "remote access to " + range.to_string() + ": GPU memory is not registered with the transport");
  }
  if (!transport_) return error(StatusCode::unavailable, "node " + std::to_string(id_) + " is stopped");
  Result<transport::RemoteRegionAccess> access =
      transport_->remote_access(wire_key(range.region), rail_of(nic), grantee);
  if (!access.ok()) return access.status();
  return proto::RdmaRegionDesc{nic, access->rkey, access->address, access->length};
}

void HwNode::storage_io(ServiceLoop& loop, OpId op, const StorageIoSpec& spec) {
  const std::uint64_t cookie = route(loop, op);
  Completion failure;
  auto it = targets_.find(spec.target);
  if (it == targets_.end()) {
    failure.status = error(StatusCode::not_found,
                           "storage target " + std::to_string(spec.target) + " is not on node " + std::to_string(id_));
    return complete(cookie, std::move(failure));
  }
  StorageRequest request;
  request.op = spec.op;
  request.file_id = spec.file_id;
  request.object_offset = spec.object_offset;
  request.sync = spec.sync;
  request.cookie = cookie;
  request.expected_crc32c = spec.crc32c;
  request.length = spec.length;
  if (spec.op == StorageOp::read || spec.op == StorageOp::write) {
    Result<std::span<std::byte>> buffer = resolve(spec.buffer, "storage buffer");
    if (!buffer.ok()) {
      failure.status = buffer.status();
      return complete(cookie, std::move(failure));
    }
    if (spec.buffer.kind == MemKind::gpu) {
      failure.status = error(StatusCode::invalid_argument, "storage I/O into GPU memory " + spec.buffer.to_string() +
                                                               ": stage through pinned memory (hw_backends/cuda "
                                                               "bounce pipeline, or cuFile in hw_backends/gds)");
      return complete(cookie, std::move(failure));
    }
    request.buffer = *buffer;
  }
  StorageBackend* backend = it->second.get();
  const TargetId target = spec.target;
  post_or_defer(
      [backend, request, target]() -> Status {
        const Status st = backend->submit(request);
        if (st.ok() || st.code() == StatusCode::again) return st;
        return Status(st.code(), "target " + std::to_string(target) + ": " + st.message());
      },
      cookie);
}

std::size_t HwNode::send_all(Endpoint from, NodeId to_node, std::span<Outgoing> frames, Status* failure) {
  Result<transport::PeerId> peer = peer_for(to_node);
  if (!peer.ok()) {
    *failure = peer.status();
    return 0;
  }
  std::vector<transport::Transport::OutgoingMessage> messages;
  messages.reserve(frames.size());
  for (Outgoing& f : frames) {
    SLUICE_ASSERT(f.to.node == to_node);
    messages.push_back({frame_tag(from.service, f.to.service), std::move(f.frame)});
  }
  world_.note_in_flight(static_cast<std::int64_t>(messages.size()));
  const std::size_t sent = transport_->send_messages(*peer, messages, failure);
  world_.note_in_flight(-static_cast<std::int64_t>(messages.size() - sent));
  return sent;
}

// ---- dispatcher -----------------------------------------------------------------

void HwNode::on_transport_event(transport::TransportEvent& event) {
  // Consecutive messages are handed over together; anything else first hands
  // over those before it, so every loop sees the transport's order.
  if (!std::holds_alternative<transport::MessageReceived>(event)) hand_over_deliveries();
  if (auto* done = std::get_if<transport::OpDone>(&event)) {
    Completion c;
    c.status = std::move(done->status);
    c.bytes = done->bytes;
    complete(done->cookie, std::move(c));
  } else if (auto* m = std::get_if<transport::MessageReceived>(&event)) {
    const Endpoint from{static_cast<NodeId>(m->remote_id), static_cast<ServiceIndex>(m->tag >> 32)};
    const Endpoint to{id_, static_cast<ServiceIndex>(m->tag & 0xFFFFFFFFu)};
    ServiceLoop* loop = world_.loop_of(to);
    Result<proto::Message> decoded =
        loop == nullptr ? Result<proto::Message>(error(StatusCode::not_found, "")) : proto::decode(m->frame);
    if (loop == nullptr) {
      world_.log("node " + std::to_string(id_) + ": message from " + from.to_string() + " for unknown service " +
                 to.to_string() + " dropped");
    } else if (!decoded.ok()) {
      world_.log("node " + std::to_string(id_) + ": undecodable frame from " + from.to_string() +
                 " dropped: " + decoded.status().message());
    } else {
      auto batch = std::find_if(pending_deliveries_.begin(), pending_deliveries_.end(),
                                [loop](const auto& p) { return p.first == loop; });
      if (batch == pending_deliveries_.end())
        batch = pending_deliveries_.emplace(pending_deliveries_.end(), loop, std::vector<Event>{});
      batch->second.push_back(Event(Delivery{from, std::move(decoded).value()}));
      ++pending_delivery_count_;  // in flight until hand_over_deliveries
      return;
    }
    world_.note_in_flight(-1);  // dropped: no longer in the network
  } else if (auto* down = std::get_if<transport::PeerDown>(&event)) {
    std::lock_guard lock(mu_);
    auto it = std::find_if(peers_.begin(), peers_.end(), [&](const auto& p) { return p.second == down->peer; });
    if (it != peers_.end()) {
      peers_.erase(it);  // the next use connects afresh
    } else {
      early_down_.push_back(down->peer);  // perhaps one peer_for is about to file (see early_down_)
      if (early_down_.size() > k_max_early_down_peers) early_down_.pop_front();
    }
  }
}

void HwNode::hand_over_deliveries() {
  for (auto& [loop, batch] : pending_deliveries_) loop->push_all(batch);
  // After the pushes: an idle check never sees a message neither in flight nor queued.
  world_.note_in_flight(-pending_delivery_count_);
  pending_delivery_count_ = 0;
}

void HwNode::dispatch() {
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = k_wake_id;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd_, &ev);
  ev.data.u64 = k_transport_id;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, transport_->completion_fd(), &ev);
  for (const auto& [target, backend] : targets_) {
    ev.data.u64 = target;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, backend->completion_fd(), &ev);
  }
  std::array<epoll_event, k_dispatch_batch> ready{};
  std::vector<transport::TransportEvent> events;
  std::vector<StorageCompletion> done;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    const int n = ::epoll_wait(epoll_fd, ready.data(), k_dispatch_batch, -1);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = ready[static_cast<std::size_t>(i)].data.u64;
      if (id == k_wake_id) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd_, &count, sizeof count);
      } else if (id == k_transport_id) {
        events.clear();
        transport_->poll(events, k_poll_batch);
        for (auto& e : events) on_transport_event(e);
        hand_over_deliveries();
      } else {
        done.clear();
        targets_.at(static_cast<TargetId>(id))->poll(done, k_poll_batch);
        for (auto& s : done) {
          Completion c;
          c.status = std::move(s.status);
          c.bytes = s.bytes;
          c.crc32c = s.crc32c;
          c.crc_valid = s.crc_valid;
          complete(s.cookie, std::move(c));
        }
      }
    }
    retry_deferred();
  }
  ::close(epoll_fd);
}

}  // namespace sluice::hw
