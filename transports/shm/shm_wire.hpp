// What the shm transport writes: the hand-shake datagrams on the Unix socket
// and the records in the rings. All fixed-size, trivially copyable structs in
// host byte order (both ends run on one host); copied with memcpy, never
// dereferenced in place, since the ring is shared with another process.
#pragma once

#include <cstdint>
#include <type_traits>

namespace sluice::transport::shm {

inline constexpr std::uint32_t k_shm_magic = 0x4D485353;  // "SSHM"
inline constexpr std::uint16_t k_shm_wire_version = 1;

// Connector -> acceptor, on the Unix socket, with two descriptors attached
// (SCM_RIGHTS): the memfd of the channel's segment and the connector's
// doorbell eventfd.
struct ShmHello {
  std::uint32_t magic = k_shm_magic;
  std::uint16_t version = k_shm_wire_version;
  std::uint16_t reserved = 0;
  std::uint64_t local_id = 0;       // the connector's TransportConfig::local_id
  std::uint64_t instance = 0;       // the connector transport's nonce
  std::uint64_t peer = 0;           // the connector's PeerId for this group
  std::uint32_t rail = 0;           // the connector's local rail
  std::uint32_t channels = 0;       // channels in the group (the connector's rails)
  std::uint64_t pid = 0;            // informational: the receiver trusts SO_PEERCRED
  std::uint64_t probe_address = 0;  // 8 readable bytes in the connector, to test access
  std::uint64_t probe_value = 0;    // what they hold
  std::uint64_t ring_bytes = 0;     // data bytes of each ring in the segment
};

// Acceptor -> connector, with the acceptor's doorbell eventfd attached when ok.
struct ShmHelloReply {
  std::uint32_t magic = k_shm_magic;
  std::uint16_t version = k_shm_wire_version;
  std::uint16_t status = 0;  // StatusCode; non-zero: refused, text follows
  std::uint64_t local_id = 0;
  std::uint64_t pid = 0;  // informational: the receiver trusts SO_PEERCRED
  std::uint64_t probe_address = 0;
  std::uint64_t probe_value = 0;
  char text[200] = {};  // why refused
};

// Ring record kinds (0 is the ring's padding).
enum class ShmRecord : std::uint16_t {
  message_first = 1,  // ShmMessageHead + the frame's first bytes
  message_more = 2,   // further bytes of the frame
  put = 3,            // ShmBulk: serve by copying from the sender's address
  get = 4,            // ShmBulk: serve by copying to the sender's address
  ack = 5,            // ShmAck + error text
};

struct ShmMessageHead {
  std::uint64_t tag = 0;
  std::uint64_t frame_bytes = 0;
};

struct ShmBulk {
  std::uint64_t op = 0;          // the initiator's operation id, echoed in the ack
  std::uint64_t remote_key = 0;  // the region on the serving side
  std::uint64_t remote_offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t address = 0;  // the initiator's bytes (put: source, get: destination)
};

struct ShmAck {
  std::uint64_t op = 0;
  std::uint32_t status = 0;      // StatusCode
  std::uint32_t text_bytes = 0;  // error text that follows
};

static_assert(std::is_trivially_copyable_v<ShmHello> && std::is_trivially_copyable_v<ShmHelloReply>);
static_assert(std::is_trivially_copyable_v<ShmBulk> && std::is_trivially_copyable_v<ShmAck>);

}  // namespace sluice::transport::shm
