// Helpers for the transport tests: a bounded event pump (no sleeps: it waits
// on the transport's completion fd, a bounded number of rounds), frames built
// by hand, and byte checks through CRC32C.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/common/pattern.hpp"
#include "core/proto/codec.hpp"
#include "core/proto/crc32c.hpp"
#include "core/proto/wire_limits.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::testing {

// Upper bound on one wait for an event. Not a timing assertion: a healthy run
// is woken by the completion fd long before; the bound only turns a hang into a
// failure.
inline constexpr int k_wait_round_ms = 200;
inline constexpr int k_wait_rounds = 50;

// Takes events from one transport; events a wait does not match are kept for
// later waits, in order.
class EventPump {
 public:
  explicit EventPump(Transport& transport) : transport_(transport) {}

  std::optional<TransportEvent> wait_for(const std::function<bool(const TransportEvent&)>& match) {
    for (int round = 0; round <= k_wait_rounds; ++round) {
      for (auto it = backlog_.begin(); it != backlog_.end(); ++it) {
        if (match(*it)) {
          TransportEvent found = std::move(*it);
          backlog_.erase(it);
          return found;
        }
      }
      std::vector<TransportEvent> fresh;
      if (transport_.poll(fresh, k_max_poll_events) == 0) {
        pollfd pfd{transport_.completion_fd(), POLLIN, 0};
        ::poll(&pfd, 1, k_wait_round_ms);
        continue;
      }
      for (auto& e : fresh) backlog_.push_back(std::move(e));
    }
    return std::nullopt;
  }

  std::optional<OpDone> wait_op(std::uint64_t cookie) {
    auto e = wait_for([cookie](const TransportEvent& ev) {
      const auto* done = std::get_if<OpDone>(&ev);
      return done != nullptr && done->cookie == cookie;
    });
    if (!e) return std::nullopt;
    return std::get<OpDone>(std::move(*e));
  }

  template <class T>
  std::optional<T> wait_kind() {
    auto e = wait_for([](const TransportEvent& ev) { return std::holds_alternative<T>(ev); });
    if (!e) return std::nullopt;
    return std::get<T>(std::move(*e));
  }

  // Everything available now, without waiting.
  std::vector<TransportEvent> drain() {
    std::vector<TransportEvent> out(std::make_move_iterator(backlog_.begin()), std::make_move_iterator(backlog_.end()));
    backlog_.clear();
    transport_.poll(out, k_max_poll_events);
    return out;
  }

 private:
  Transport& transport_;
  std::deque<TransportEvent> backlog_;
};

// A frame with a valid header (magic, version, Ack type, CRCs) and a payload
// of pattern bytes: what a transport must carry without decoding it.
inline std::vector<std::byte> make_frame(std::uint32_t payload_bytes, std::uint64_t seed) {
  std::vector<std::byte> frame(proto::k_frame_header_bytes + payload_bytes);
  fill_pattern(std::span(frame).subspan(proto::k_frame_header_bytes), seed, 0);
  const auto put = [&frame](std::size_t at, std::uint64_t value, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) frame[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
  };
  put(0, proto::k_frame_magic, 4);
  put(4, proto::k_wire_version, 2);
  put(6, static_cast<std::uint16_t>(proto::MessageType::ack), 2);
  put(8, payload_bytes, 4);
  put(12, proto::crc32c(std::span<const std::byte>(frame).subspan(proto::k_frame_header_bytes)), 4);
  put(16, proto::crc32c(std::span<const std::byte>(frame).first(16)), 4);
  return frame;
}

inline std::uint32_t crc_of(std::span<const std::byte> bytes) { return proto::crc32c(bytes); }

}  // namespace sluice::transport::testing
