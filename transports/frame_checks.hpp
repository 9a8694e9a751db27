// The checks a transport applies to a control frame handed to
// send_message()/send_messages() before queueing it (transports/transport.hpp:
// invalid_argument for a bad frame, again for a full queue). Shared by the
// transports that queue frames per peer (tcp: message_item, ucx: queue_frame),
// each error starting "<transport> send_message: " as before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.hpp"
#include "core/proto/codec.hpp"

namespace sluice::transport {

// `frame` is one whole proto frame: at most `max_bytes` (the transport's
// limit, named `max_name` in the error), a header that decodes, and exactly
// as long as its header says. invalid_argument saying which, else ok.
inline Status check_outgoing_frame(std::string_view transport, std::span<const std::byte> frame,
                                   std::uint64_t max_bytes, std::string_view max_name) {
  const std::string what = std::string(transport) + " send_message: ";
  if (frame.size() > max_bytes) {
    return error(StatusCode::invalid_argument, what + "frame of " + std::to_string(frame.size()) + " bytes over " +
                                                   std::string(max_name) + " " + std::to_string(max_bytes));
  }
  Result<proto::FrameHeader> header = proto::parse_header(frame);
  if (!header.ok()) {
    return error(StatusCode::invalid_argument, what + "not a valid frame: " + header.status().message());
  }
  if (header->frame_bytes() != frame.size()) {
    return error(StatusCode::invalid_argument, what + "frame header says " + std::to_string(header->frame_bytes()) +
                                                   " bytes, got " + std::to_string(frame.size()));
  }
  return ok_status();
}

// Room for `frame_bytes` more in a peer's queue of `queued_bytes` under
// TransportConfig::max_queued_message_bytes (`max_queued`): again naming the peer, else ok.
inline Status check_message_queue_room(std::string_view transport, std::string_view peer_label,
                                       std::uint64_t queued_bytes, std::uint64_t frame_bytes,
                                       std::uint64_t max_queued) {
  if (queued_bytes + frame_bytes <= max_queued) return ok_status();
  return error(StatusCode::again, std::string(transport) + " send_message: " + std::string(peer_label) + " has " +
                                      std::to_string(queued_bytes) + " bytes queued (max_queued_message_bytes " +
                                      std::to_string(max_queued) + ")");
}

}  // namespace sluice::transport
