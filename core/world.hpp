// The World: what hosts services and runs them, next to the Env (env.hpp),
// which is what one service sees of it.
//
// Three worlds exist: TestWorld (det/test_world.hpp, virtual time,
// bytes in vectors), sim::SimRuntime (sim/sim_runtime.hpp, SimGrid's model of
// a cluster) and hw::HwWorld (hw/hw_world.hpp, real threads, transports and
// drives). A service is written once against Env and runs in each; tests,
// the fault driver (core/faults) and the shared services suite are written
// once against this contract and drive each.
//
// Contract (the World concept below states it for the compiler):
// - add_service<S>(node, args...) builds S(Env&, args...) on a new endpoint
//   of `node` and keeps a restart factory (restart_factory below) made from
//   copies of the arguments; the world owns the service.
// - kill(ep): the service handles nothing more; messages to it are dropped;
//   completions of operations it started are dropped, also after revive(ep).
//   restart(ep): a fresh instance from the factory at the same endpoint (a
//   crashed process coming back); unavailable when the service was built from
//   move-only arguments, not_found for an unknown endpoint.
// - Every message a service sends passes the world's message hook (if set):
//   it may drop, delay or duplicate it (MessageFate). Every transfer passes
//   the transfer hook: extra time before its bytes move. Tests express
//   faults as rules (MessageRule, TransferRule) applied by one rule loop
//   (apply_message_rules, apply_transfer_rules) in every world;
//   det/fault_rules.hpp keeps them behind a lock for HwWorld.
// - run_until(done) runs until done() holds, nothing is left to happen, or
//   the world's bound passes; run_for(d) lets d of the world's time pass;
//   now() reads the world's clock (virtual in TestWorld and SimRuntime, real
//   in HwWorld).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/env.hpp"

namespace sluice {

// ---- message and transfer hooks ---------------------------------------------

// What a hook decides for one message.
struct MessageFate {
  bool drop = false;          // lost: send() still answers ok
  TimeNs extra_delay_ns = 0;  // delivered this much later
  std::uint32_t copies = 1;   // 2: duplicated (copy c arrives c ns after the original); 0 drops
  // Bytes the message stands for but does not carry (size-only modelling in
  // SimRuntime: e.g. the entries of a readdir page a benchmark does not
  // materialise), added to its wire size on the network. Other worlds ignore it.
  std::uint64_t extra_bytes = 0;
};
// Copies of one message a hook may ask for (more are clamped to it).
inline constexpr std::uint32_t k_max_message_copies = 16;

// Called for every message a service sends, before it leaves. In HwWorld it
// runs on the sending service's thread, concurrently from several: a hook
// must be thread-safe.
using MessageHook = std::function<MessageFate(const Endpoint& from, const Endpoint& to, const proto::Message& m)>;
// Extra time before a transfer `self` started begins to move its bytes (0:
// none). Tests use it to make a reply outlive its RPC timeout (issue 26).
using TransferHook = std::function<TimeNs(const Endpoint& self, const TransferSpec& spec)>;

// ---- fault rules: the one rule loop -----------------------------------------

enum class FaultAction : std::uint8_t { drop, delay, duplicate };

// A rule on messages. The first rule that matches and has uses left decides
// a message's fate (one rule per message) and uses one up.
struct MessageRule {
  // Matches (from, to, message); empty matches every message.
  std::function<bool(const Endpoint& from, const Endpoint& to, const proto::Message&)> match;
  FaultAction action = FaultAction::drop;
  TimeNs delay_ns = 0;          // for delay
  std::uint64_t remaining = 1;  // how many more messages it applies to
};

// A rule on the data path: a transfer started by a service that `match`
// accepts begins to move its bytes delay_ns late.
struct TransferRule {
  // Matches (the service starting the transfer, the transfer); empty: every one.
  std::function<bool(const Endpoint& self, const TransferSpec& spec)> match;
  TimeNs delay_ns = 0;
  std::uint64_t remaining = 1;  // how many more transfers it applies to
};

// The fate the first matching rule with uses left gives a message (using one up).
MessageFate apply_message_rules(std::vector<MessageRule>& rules, const Endpoint& from, const Endpoint& to,
                                const proto::Message& message);
// The delay the first matching rule with uses left gives a transfer (using one up).
TimeNs apply_transfer_rules(std::vector<TransferRule>& rules, const Endpoint& self, const TransferSpec& spec);

// ---- services and their restart ---------------------------------------------

using ServiceFactory = std::function<std::unique_ptr<Service>(Env&)>;

// What restart() rebuilds a service from: S(env, copies of args...). Empty
// when an argument cannot be copied (such a service cannot restart).
template <typename S, typename... Args>
ServiceFactory restart_factory(const Args&... args) {
  if constexpr ((std::is_copy_constructible_v<std::decay_t<Args>> && ...)) {
    return [... copies = std::decay_t<Args>(args)](Env& env) -> std::unique_ptr<Service> {
      return std::make_unique<S>(env, copies...);
    };
  } else {
    return {};
  }
}

// ---- the Env contract at a world's seam --------------------------------------

// Every operation a service started completes exactly once (env.hpp). A
// world keeps one ledger per service: started() when it hands out an OpId,
// completed() when it delivers that op's Completion to the service (both
// assert: an id given twice, a completion for an op not outstanding: lost
// or delivered twice). forget_all() when the service is killed or restarted:
// the old incarnation's completions are dropped, not delivered.
//
// It runs on every operation of every world (6% of a metadata server
// thread's samples as a std::unordered_set, make bench-meta under perf), so
// the outstanding ids live in one flat table: open addressing, linear
// probing, deletion by shifting the probe chain back (no tombstones), at
// most half full. Id 0 (issued by no world, but allowed) is kept apart.
class CompletionLedger {
 public:
  void started(OpId op);
  void completed(OpId op);
  void forget_all();
  std::size_t outstanding() const { return size_; }

 private:
  static constexpr std::size_t k_min_slots = 16;
  std::size_t home(OpId op) const;  // op's first slot
  void grow();

  std::vector<OpId> slots_;  // 0 = empty; a power of two long, or empty
  std::size_t size_ = 0;     // ids outstanding, 0 included
  bool zero_outstanding_ = false;
};

// ---- the contract -----------------------------------------------------------

template <class W>
concept World = requires(W& w, const W& cw, Endpoint ep, const Service& s, TimeNs t, std::function<bool()> done,
                         MessageHook message_hook, TransferHook transfer_hook) {
  { w.kill(ep) } -> std::same_as<void>;
  { w.revive(ep) } -> std::same_as<void>;
  { cw.alive(ep) } -> std::same_as<bool>;
  { w.restart(ep) } -> std::same_as<Status>;
  { cw.endpoint_of(s) } -> std::same_as<Endpoint>;
  { w.env_of(s) } -> std::same_as<Env&>;
  { cw.now() } -> std::same_as<TimeNs>;
  { w.run_for(t) } -> std::same_as<void>;
  { w.run_until(done) } -> std::same_as<bool>;
  { w.set_message_hook(message_hook) } -> std::same_as<void>;
  { w.set_transfer_hook(transfer_hook) } -> std::same_as<void>;
  { cw.counter(std::string_view{}) } -> std::same_as<double>;
};

// What a fault plan drives (core/faults: WorldFaultControl, run_with_faults):
// a service killed or restarted, whole-world faults, and the clock. Every
// World with the three setters has it; so do adapters that put a world's
// faults behind other mechanisms (scenarios/runner/hw_fault_world.hpp). The
// setters return void, or a Status where a world may refuse a fault it
// cannot inject (HwWorld).
template <class W>
concept FaultPrimitives = requires(W& w, const W& cw, Endpoint ep, TargetId target, TimeNs t,
                                   std::vector<std::vector<NodeId>> partitions) {
  { w.kill(ep) } -> std::same_as<void>;
  { w.restart(ep) } -> std::same_as<Status>;
  w.set_disk_slowdown(target, 1.0);
  w.set_partitions(partitions);
  w.set_message_faults(0.0, t);
  { cw.now() } -> std::same_as<TimeNs>;
  { w.run_for(t) } -> std::same_as<void>;
};

// A world a fault plan can drive directly.
template <class W>
concept FaultWorld = World<W> && FaultPrimitives<W>;

}  // namespace sluice
