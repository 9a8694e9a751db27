#include "core/services/invariants.hpp"

#include <string>

#include "core/common/assert.hpp"

namespace sluice::invariants {

void mirror_log(std::uint64_t epoch, std::uint64_t acked, std::size_t log_records, std::uint64_t next) {
  if (epoch == 0) return;
  SLUICE_ASSERT_MSG(acked + log_records + 1 == next, "mirror stream: " + std::to_string(acked) + " acknowledged + " +
                                                         std::to_string(log_records) + " in the log must be the " +
                                                         std::to_string(next - 1) + " records given sequences");
}

void mirror_ack(std::uint64_t end_sequence, std::uint64_t next) {
  SLUICE_ASSERT_MSG(end_sequence < next, "mirror stream: acknowledgement up to " + std::to_string(end_sequence) +
                                             ", but only " + std::to_string(next - 1) + " records were sent");
}

void mirror_apply(std::uint64_t applied, std::uint64_t sequence) {
  SLUICE_ASSERT_MSG(sequence == applied + 1, "mirror secondary: record " + std::to_string(sequence) +
                                                 " applied after record " + std::to_string(applied));
}

void kept_replies(std::uint64_t oldest, std::uint64_t next, std::size_t max) {
  SLUICE_ASSERT_MSG(oldest <= next && next - oldest <= max, "meta: kept replies " + std::to_string(oldest) + " .. " +
                                                                std::to_string(next) + " (exclusive), more than the " +
                                                                std::to_string(max) + " allowed or out of order");
}

void maps_version(std::uint64_t applied, std::uint64_t accepted) {
  SLUICE_ASSERT_MSG(accepted >= applied,
                    "maps version " + std::to_string(accepted) + " accepted after version " + std::to_string(applied));
}

void reply_once(bool callback_present, RequestId id) {
  SLUICE_ASSERT_MSG(callback_present, "rpc: call " + std::to_string(id) + " answered twice");
}

void inflight_chunks(std::uint32_t inflight, int delta, std::uint32_t max) {
  SLUICE_ASSERT_MSG(delta > 0 ? inflight < max : inflight > 0,
                    "client: " + std::to_string(inflight) + " chunk requests in flight " +
                        (delta > 0 ? "(the maximum) before another starts" : "before one ends") + ", max " +
                        std::to_string(max));
}

}  // namespace sluice::invariants
