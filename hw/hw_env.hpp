// HwEnv: the Env of core/env.hpp on real hardware, one per service.
//
// - now(): the steady clock, in ns since the world started.
// - Events come one at a time from the service's own ServiceLoop thread.
// - send(): encoded with proto::encode_into (so a message over the wire
//   limits fails here as in SimEnv) and carried by the node's transport, or,
//   between services of one node, decoded straight into the receiver's loop.
//   The world's message hook (HwWorldConfig::message_hook), if set, decides
//   its fate first: dropped (send still answers ok, as a lost packet would),
//   delayed (sent later from this service's loop, dead or alive, like a
//   message held up in the network) or sent several times. Messages sent
//   from the service's own loop thread wait in an outbox until the loop's
//   turn ends (ServiceLoop::set_turn_end: the queue ran dry, or
//   k_max_loop_items_per_turn items), then leave in the order sent, each
//   run to one other node in one transport call (tcp: one sendmsg for
//   many). Sends from other threads leave at once.
// - transfer() and storage_io(): real bytes through the node's transport and
//   storage targets (see hw_node.hpp); completions arrive from the node's
//   dispatcher thread. A one-sided transfer counts how it got the remote
//   region's key: transfer.rdma_key_carried (from the spec, no round trip)
//   or transfer.rdma_key_fallback (the transport asks the owner).
// - remote_access(): the transport's key of a registered region (host,
//   pinned, or GPU registered by pointer) for the NIC's rail (a verbs
//   transport: the MR's address and rkey on that rail's device), granted to
//   the node; unavailable on a transport that needs no
//   keys (tcp, shm) and for GPU memory left on the bounce path.
// - compute(): the real work already happened, so it completes at once;
//   except CostKind::workload_step, an emulated accelerator's compute (a
//   training step, DLIO's computation_time), which no work here stands for:
//   it completes after `units` ns, on the timer heap, as DLIO sleeps.
// - timer(): the loop's timer heap, on the steady clock.
// - checksum()/fill()/verify(): real bytes, on the service's thread (CRC32C
//   by ISA-L, the core's pattern); a verify mismatch is `corrupt` naming the
//   first wrong byte and the range.
// - alloc()/free(): real, aligned, registered regions of the node (host and
//   pinned; GPU through hw_backends/cuda's installed operations, else
//   unavailable). fill/verify/checksum of GPU ranges run on the GPU. A GPU
//   region is registered with the transport by pointer (peer memory) where
//   it declares CUDA regions, else left to bounce (hw_node.hpp); each
//   allocation counts where it went (memory.gpu_region_{peer_memory,bounce})
//   and a declared way that failed (memory.gpu_peer_memory_fallback).
// Every operation returns its OpId at once and completes exactly once, after
// the handler that started it has returned (completions are queued events).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.hpp"
#include "hw/hw_node.hpp"
#include "hw/service_loop.hpp"

namespace sluice::hw {

// Control messages a remote node's transport could not take (a peer process
// gone or unreachable): lost as on a network, counted under this name.
inline constexpr std::string_view k_metric_messages_undeliverable = "net.messages_undeliverable";

class HwWorld;

class HwEnv final : public Env, public Metrics {
 public:
  HwEnv(HwWorld& world, HwNode& node, ServiceLoop& loop, Endpoint self, Rng rng)
      : world_(world), node_(node), loop_(loop), self_(self), rng_(rng) {}

  Endpoint self() const override { return self_; }
  TimeNs now() const override { return loop_.now(); }
  TimeNs wall_ns() const override;
  Rng& rng() override { return rng_; }
  Metrics& metrics() override { return *this; }
  void log(LogLevel level, std::string_view message) override;

  [[nodiscard]] Status send(Endpoint to, proto::Message message) override;
  OpId transfer(const TransferSpec& spec) override;
  OpId storage_io(const StorageIoSpec& spec) override;
  OpId compute(CostKind kind, std::uint64_t units) override;
  bool compute_charges_time() const override { return false; }  // the real work already happened
  OpId timer(TimeNs delay_ns) override;
  OpId checksum(const MemHandle& range) override;
  OpId fill(const MemHandle& range, const PatternSpec& pattern) override;
  OpId verify(const MemHandle& range, const PatternSpec& pattern) override;
  Result<MemHandle> alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes) override;
  void free(const MemHandle& region) override;
  Result<MemHandle> open_window(const MemHandle& range) override;
  void close_window(const MemHandle& window) override;
  Result<proto::RdmaRegionDesc> remote_access(const MemHandle& range, std::uint32_t nic, NodeId grantee) override;
  bool transport_reaches(const MemHandle& range) override;

  // Metrics (thread-safe: the world reads them from other threads).
  void count(std::string_view name, double delta) override;
  void sample(std::string_view name, double value) override;
  double counter(std::string_view name) const;
  std::map<std::string, double, std::less<>> counters() const;
  std::vector<double> samples(std::string_view name) const;
  // The id the next operation will get (any thread): operations with a
  // smaller id were started before this call (HwWorld::kill uses it).
  OpId next_op_id() const { return next_op_.load(); }
  // Sends what the outbox holds (the loop's turn-end hook; loop thread only),
  // after calling the before-send hook when there is something to send.
  void flush_outbox();
  // Called before the outbox's messages leave (HwWorld::before_messages_leave).
  void set_before_send(std::function<void()> fn) { before_send_ = std::move(fn); }

 private:
  // A new operation's id, noted in the loop's ledger (each completes once).
  OpId next_op();
  OpId complete_now(Completion c);
  // Carries an encoded frame to `to` (after the message hook decided).
  Status deliver(Endpoint to, std::vector<std::byte> frame);
  // Hands the transfer to the node (and its transport); op completes through its loop.
  void post_transfer(OpId op, const TransferSpec& spec);

  HwWorld& world_;
  HwNode& node_;
  ServiceLoop& loop_;
  Endpoint self_;
  Rng rng_;
  std::atomic<OpId> next_op_{1};
  // A message sent and not yet handed on: to another node (frame), or
  // decoded for a service of this node (local_loop, local).
  struct Outgoing {
    Endpoint to;
    std::vector<std::byte> frame;
    ServiceLoop* local_loop = nullptr;
    std::optional<proto::Message> local;
  };
  std::vector<Outgoing> outbox_;  // the loop thread's, or under a send from another thread
  std::function<void()> before_send_;
  mutable std::mutex metrics_mu_;
  std::map<std::string, double, std::less<>> counters_;
  std::map<std::string, std::vector<double>, std::less<>> samples_;
};

}  // namespace sluice::hw
