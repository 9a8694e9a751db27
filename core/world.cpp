#include "core/world.hpp"

#include <algorithm>
#include <string>

#include "core/common/assert.hpp"

namespace sluice {

MessageFate apply_message_rules(std::vector<MessageRule>& rules, const Endpoint& from, const Endpoint& to,
                                const proto::Message& message) {
  MessageFate fate;
  for (MessageRule& rule : rules) {
    if (rule.remaining == 0) continue;
    if (rule.match && !rule.match(from, to, message)) continue;
    --rule.remaining;
    switch (rule.action) {
      case FaultAction::drop: fate.drop = true; break;
      case FaultAction::delay: fate.extra_delay_ns += rule.delay_ns; break;
      case FaultAction::duplicate: fate.copies = 2; break;
    }
    break;  // one rule per message
  }
  return fate;
}

TimeNs apply_transfer_rules(std::vector<TransferRule>& rules, const Endpoint& self, const TransferSpec& spec) {
  for (TransferRule& rule : rules) {
    if (rule.remaining == 0) continue;
    if (rule.match && !rule.match(self, spec)) continue;
    --rule.remaining;
    return rule.delay_ns;
  }
  return 0;
}

std::size_t CompletionLedger::home(OpId op) const {
  // Fibonacci hashing: consecutive ids (every world issues them in order)
  // spread over the table.
  return static_cast<std::size_t>((op * 0x9E3779B97F4A7C15ull) >> 17) & (slots_.size() - 1);
}

void CompletionLedger::grow() {
  std::vector<OpId> old = std::move(slots_);
  slots_.assign(std::max(k_min_slots, 2 * old.size()), 0);
  const std::size_t mask = slots_.size() - 1;
  for (OpId op : old) {
    if (op == 0) continue;
    std::size_t i = home(op);
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = op;
  }
}

void CompletionLedger::started(OpId op) {
  if (op == 0) {
    SLUICE_ASSERT_MSG(!zero_outstanding_, "Env contract: op 0 handed out twice");
    zero_outstanding_ = true;
    ++size_;
    return;
  }
  if (2 * (size_ + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = home(op);
  for (; slots_[i] != 0; i = (i + 1) & mask) {
    SLUICE_ASSERT_MSG(slots_[i] != op, "Env contract: op " + std::to_string(op) + " handed out twice");
  }
  slots_[i] = op;
  ++size_;
}

void CompletionLedger::completed(OpId op) {
  auto not_outstanding = [op] {
    return "Env contract: a completion of op " + std::to_string(op) +
           ", which is not outstanding (completed twice, or never started)";
  };
  if (op == 0) {
    SLUICE_ASSERT_MSG(zero_outstanding_, not_outstanding());
    zero_outstanding_ = false;
    --size_;
    return;
  }
  SLUICE_ASSERT_MSG(!slots_.empty(), not_outstanding());
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = home(op);
  while (slots_[i] != op) {
    SLUICE_ASSERT_MSG(slots_[i] != 0, not_outstanding());
    i = (i + 1) & mask;
  }
  // Shift back every later member of the probe chain that may move into
  // the hole: one whose home is not in the cyclic range (hole, its slot].
  for (std::size_t j = (i + 1) & mask; slots_[j] != 0; j = (j + 1) & mask) {
    const std::size_t k = home(slots_[j]);
    const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = 0;
  --size_;
}

void CompletionLedger::forget_all() {
  std::fill(slots_.begin(), slots_.end(), 0);
  size_ = 0;
  zero_outstanding_ = false;
}

}  // namespace sluice
