#include "core/world.hpp"

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

void CompletionLedger::started(OpId op) {
  SLUICE_ASSERT_MSG(outstanding_.insert(op).second, "Env contract: op " + std::to_string(op) + " handed out twice");
}

void CompletionLedger::completed(OpId op) {
  SLUICE_ASSERT_MSG(outstanding_.erase(op) == 1, "Env contract: a completion of op " + std::to_string(op) +
                                                     ", which is not outstanding (completed twice, or never started)");
}

}  // namespace sluice
