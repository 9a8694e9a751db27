// FaultRules: the message and transfer rules a test adds while a world
// runs, and the hooks (core/world.hpp) that apply them with the one rule
// loop. The hooks lock: HwWorld calls them from service threads. A hook made
// here must not outlive its FaultRules.
#pragma once

#include <mutex>
#include <vector>

#include "core/world.hpp"

namespace sluice::testing {

class FaultRules {
 public:
  void add(MessageRule rule) {
    std::lock_guard lock(mutex_);
    messages_.push_back(std::move(rule));
  }
  void add(TransferRule rule) {
    std::lock_guard lock(mutex_);
    transfers_.push_back(std::move(rule));
  }
  void clear() {
    std::lock_guard lock(mutex_);
    messages_.clear();
    transfers_.clear();
  }
  MessageHook message_hook() {
    return [this](const Endpoint& from, const Endpoint& to, const proto::Message& m) {
      std::lock_guard lock(mutex_);
      return apply_message_rules(messages_, from, to, m);
    };
  }
  TransferHook transfer_hook() {
    return [this](const Endpoint& self, const TransferSpec& spec) {
      std::lock_guard lock(mutex_);
      return apply_transfer_rules(transfers_, self, spec);
    };
  }

 private:
  std::mutex mutex_;
  std::vector<MessageRule> messages_;
  std::vector<TransferRule> transfers_;
};

}  // namespace sluice::testing
