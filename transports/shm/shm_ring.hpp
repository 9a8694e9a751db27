// A bounded single-producer single-consumer byte ring of records, living in
// shared memory so that two processes (or two transports of one process) can
// use it without locks.
//
// Layout (in the shared segment): a RingControl block, then `capacity` data
// bytes. head and tail are byte counters that only grow; the producer owns
// tail, the consumer owns head. A record is an 8-byte RecordHeader followed by
// its payload, padded to 8 bytes; a record never wraps: when it does not fit
// before the end of the data area, the producer writes a pad record up to the
// end and starts again at 0 (the layout of the Linux perf ring and of
// LMAX-style byte rings).
//
// Sleeping without missed wake-ups: a side that finds nothing to do sets its
// `waiting` flag, issues a full fence and looks once more; the other side
// publishes, fences and reads the flag (Dekker's pattern with seq_cst fences).
// Whoever reads a set flag clears it and rings the other side's doorbell
// (an eventfd), so a sleeper is woken at most once per sleep.
//
// Trust: the other side may be another process that is buggy or gone; every
// header read from the ring is bounds-checked, and a bad one makes peek()
// return corrupt instead of reading outside the segment.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/common/status.hpp"

namespace sluice::transport::shm {

inline constexpr std::size_t k_ring_alignment_bytes = 8;
inline constexpr std::size_t k_cache_line_bytes = 64;

struct RecordHeader {
  std::uint32_t payload_bytes = 0;
  std::uint16_t kind = 0;
  std::uint16_t reserved = 0;
};
static_assert(sizeof(RecordHeader) == k_ring_alignment_bytes);

// Record kind 0 is the ring's own padding; users number theirs from 1.
inline constexpr std::uint16_t k_record_pad = 0;

struct RingControl {
  alignas(k_cache_line_bytes) std::atomic<std::uint64_t> head{0};  // consumer
  alignas(k_cache_line_bytes) std::atomic<std::uint64_t> tail{0};  // producer
  alignas(k_cache_line_bytes) std::atomic<std::uint32_t> consumer_waiting{0};
  alignas(k_cache_line_bytes) std::atomic<std::uint32_t> producer_waiting{0};
  alignas(k_cache_line_bytes) std::uint64_t capacity = 0;  // set once by the creator
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "ring counters must be lock-free to be shared");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "ring flags must be lock-free to be shared");

struct RingRecord {
  std::uint16_t kind = 0;
  std::span<const std::byte> payload;
};

// One side's view of a ring. Each process maps the segment and makes its own
// ShmRing over it; the producer-side and consumer-side methods must each be
// called by one thread at a time (the transport's lock sees to that).
class ShmRing {
 public:
  // Bytes a ring of `capacity` data bytes takes in the segment.
  static constexpr std::size_t footprint_bytes(std::size_t capacity) { return sizeof(RingControl) + capacity; }

  ShmRing() = default;
  // Over memory at `base` of footprint_bytes(capacity). `initialise` (the
  // creator only) writes the control block. capacity must be a power of two
  // and >= 4 KiB.
  ShmRing(std::byte* base, std::size_t capacity, bool initialise);

  std::size_t capacity() const { return capacity_; }
  // The largest payload a record may carry: half the ring less a header, so
  // a record always fits once the consumer has caught up.
  std::size_t max_payload_bytes() const { return capacity_ / 2 - sizeof(RecordHeader); }

  // ---- producer ----
  // Room for one record of payload_bytes, or nullptr when the ring is full
  // (payload_bytes over max_payload_bytes() is a bug, asserted). The record
  // becomes visible at commit(); a second reserve() before it is a bug.
  std::byte* reserve(std::uint16_t kind, std::size_t payload_bytes);
  // Publishes the reserved record. True when the consumer sleeps and must be
  // woken through its doorbell.
  bool commit();
  // Before the producer sleeps waiting for room: true when there is still no
  // room for payload_bytes (sleep; the consumer will ring), false when room
  // appeared meanwhile (retry now).
  bool arm_producer(std::size_t payload_bytes);

  // ---- consumer ----
  // The oldest record, ok with nothing when empty (kind stays 0 and payload
  // empty: check has_record), corrupt when the producer wrote a bad header.
  Status peek(RingRecord& out, bool& has_record);
  // Frees the record returned by the last peek(). True when the producer
  // waits for room and must be woken.
  bool release();
  // Before the consumer sleeps: true when the ring is still empty (sleep),
  // false when a record arrived meanwhile.
  bool arm_consumer();
  bool empty() const;

 private:
  bool fits(std::size_t payload_bytes, std::uint64_t head) const;

  RingControl* control_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t pending_tail_ = 0;  // producer: tail after the reserved record
  bool reserved_ = false;
  std::uint64_t peeked_head_ = 0;  // consumer: head after the peeked record
  bool peeked_ = false;
};

}  // namespace sluice::transport::shm
