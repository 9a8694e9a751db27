// HwFaultWorld: sl.run's fault plan (core/faults) on `--backend hw`, the
// world surface that faults::WorldFaultControl and faults::run_with_faults
// drive, over one HwWorld:
// - kill: the service stops handling events (HwWorld::kill); revive: it
//   comes back as a fresh instance at its endpoint (HwWorld::restart), with
//   its chunk files;
// - slow_disk: every target is wrapped in a FaultyStorageBackend
//   (hw_backends/faulty_storage_backend.hpp) whose slowdown holds each
//   completion for (factor - 1) x its real service time;
// - partition and message_loss: the world's message hook drops control
//   messages between cut nodes, drops each with the loss probability (drawn
//   from the run's seed) and delays the others by the extra delay. Bulk
//   transfers move over the transport's own connections, which the hook
//   cannot cut: on one machine's loopback a partition is a control-plane
//   partition (the packet-level one is the netns emulation's,
//   scenarios/netns/link_faults.hpp).
//
// Use: make it before the world, put hook() and wrap() into the world's
// config, attach() the world once it is made; then the driver's thread (the
// owner's) calls the rest. hook() runs on service threads: its state is
// under a mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/common/rng.hpp"
#include "hw_backends/faulty_storage_backend.hpp"
#include "hw/hw_world.hpp"

namespace sluice::scenario {

class HwFaultWorld {
 public:
  explicit HwFaultWorld(std::uint64_t seed);

  // For HwWorldConfig::message_hook and ::wrap_storage_backend.
  MessageHook hook();
  std::function<std::unique_ptr<hw::StorageBackend>(TargetId, std::unique_ptr<hw::StorageBackend>)> wrap();
  void attach(hw::HwWorld& world) { world_ = &world; }

  // What run_with_faults and WorldFaultControl call (owner's thread).
  TimeNs now() const { return world_->now(); }
  void run_for(TimeNs duration_ns) { world_->run_for(duration_ns); }
  void kill(Endpoint service) { world_->kill(service); }
  [[nodiscard]] Status restart(Endpoint service) { return world_->restart(service); }
  [[nodiscard]] Status set_disk_slowdown(TargetId target, double factor);
  void set_partitions(std::vector<std::vector<NodeId>> partitions);
  void set_message_faults(double loss_probability, TimeNs extra_delay_ns);

  // Control messages the hook dropped (partition or loss) and delayed.
  std::uint64_t messages_dropped() const;
  std::uint64_t messages_delayed() const;
  // Storage completions a slow disk held, over every target.
  std::uint64_t completions_slowed() const;
  // Forgets the targets' backends before the world frees them (HwWorld::stop);
  // set_disk_slowdown then answers not_found.
  void detach_backends();

 private:
  struct State {
    std::mutex mu;
    Rng rng;
    std::vector<std::vector<NodeId>> partitions;
    double loss_probability = 0.0;
    TimeNs extra_delay_ns = 0;
    std::uint64_t dropped = 0;
    std::uint64_t delayed = 0;
    std::map<TargetId, hw::FaultyStorageBackend*> backends;  // filled by wrap() on the owner's thread
    explicit State(std::uint64_t seed) : rng(seed) {}
  };

  std::shared_ptr<State> state_;
  std::uint64_t seed_;
  hw::HwWorld* world_ = nullptr;
};

}  // namespace sluice::scenario
