#include "scenarios/runner/hw_fault_world.hpp"

#include <algorithm>
#include <string>

#include "core/faults/fault_control.hpp"

namespace sluice::scenario {
namespace {

// Streams of the run's seed: the loss draws, and each target's fault backend.
constexpr std::uint64_t k_loss_rng_stream = 0x1055'0000ULL;
constexpr std::uint64_t k_disk_rng_stream = 0xD15C'0000ULL;

}  // namespace

HwFaultWorld::HwFaultWorld(std::uint64_t seed)
    : state_(std::make_shared<State>(Rng(seed).fork(k_loss_rng_stream).next_u64())), seed_(seed) {}

MessageHook HwFaultWorld::hook() {
  return [state = state_](const Endpoint& from, const Endpoint& to, const proto::Message&) {
    MessageFate fate;
    std::lock_guard<std::mutex> lock(state->mu);
    if (faults::partitioned(state->partitions, from.node, to.node) ||
        (state->loss_probability > 0.0 && state->rng.uniform01() < state->loss_probability)) {
      fate.drop = true;
      ++state->dropped;
      return fate;
    }
    if (state->extra_delay_ns > 0) {
      fate.extra_delay_ns = state->extra_delay_ns;
      ++state->delayed;
    }
    return fate;
  };
}

std::function<std::unique_ptr<hw::StorageBackend>(TargetId, std::unique_ptr<hw::StorageBackend>)> HwFaultWorld::wrap() {
  return [state = state_, seed = seed_](
             TargetId target, std::unique_ptr<hw::StorageBackend> inner) -> std::unique_ptr<hw::StorageBackend> {
    // No fault but a slowdown is ever set on these: the real backend's
    // paths run, a slow disk only holds completions.
    Result<std::unique_ptr<hw::FaultyStorageBackend>> b =
        hw::FaultyStorageBackend::create(std::move(inner), {}, Rng(seed).fork(k_disk_rng_stream + target).next_u64());
    if (!b.ok()) return nullptr;  // HwNode::add_target reports a null wrap as an error
    std::lock_guard<std::mutex> lock(state->mu);
    state->backends[target] = b->get();
    return std::move(b).value();
  };
}

Status HwFaultWorld::set_disk_slowdown(TargetId target, double factor) {
  hw::FaultyStorageBackend* backend = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->backends.find(target);
    if (it != state_->backends.end()) backend = it->second;
  }
  if (backend == nullptr)
    return error(StatusCode::not_found, "slow_disk: target " + std::to_string(target) + " has no backend");
  return backend->set_slowdown(std::max(factor, 1.0));
}

void HwFaultWorld::set_partitions(std::vector<std::vector<NodeId>> partitions) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->partitions = std::move(partitions);
}

void HwFaultWorld::set_message_faults(double loss_probability, TimeNs extra_delay_ns) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->loss_probability = std::clamp(loss_probability, 0.0, 1.0);
  state_->extra_delay_ns = std::max<TimeNs>(extra_delay_ns, 0);
}

std::uint64_t HwFaultWorld::messages_dropped() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->dropped;
}

std::uint64_t HwFaultWorld::messages_delayed() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->delayed;
}

void HwFaultWorld::detach_backends() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->backends.clear();
}

std::uint64_t HwFaultWorld::completions_slowed() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::uint64_t n = 0;
  for (const auto& [target, backend] : state_->backends) n += backend->fault_stats().slowed;
  return n;
}

}  // namespace sluice::scenario
