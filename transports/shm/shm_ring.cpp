#include "transports/shm/shm_ring.hpp"

#include <cstring>
#include <new>
#include <string>

#include "core/common/assert.hpp"

namespace sluice::transport::shm {
namespace {

constexpr std::size_t align_up(std::size_t n) {
  return (n + k_ring_alignment_bytes - 1) & ~(k_ring_alignment_bytes - 1);
}

constexpr std::size_t record_bytes(std::size_t payload_bytes) { return align_up(sizeof(RecordHeader) + payload_bytes); }

}  // namespace

ShmRing::ShmRing(std::byte* base, std::size_t capacity, bool initialise)
    : control_(reinterpret_cast<RingControl*>(base)), data_(base + sizeof(RingControl)), capacity_(capacity) {
  SLUICE_ASSERT_MSG(capacity >= 4096 && (capacity & (capacity - 1)) == 0, "a ring is a power of two of at least 4 KiB");
  if (initialise) {
    control_ = new (base) RingControl();
    control_->capacity = capacity;
  }
  pending_tail_ = control_->tail.load(std::memory_order_relaxed);
  peeked_head_ = control_->head.load(std::memory_order_relaxed);
}

bool ShmRing::fits(std::size_t payload_bytes, std::uint64_t head) const {
  const std::uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  const std::size_t at = tail & (capacity_ - 1);
  const std::size_t need =
      record_bytes(payload_bytes) + (capacity_ - at < record_bytes(payload_bytes) ? capacity_ - at : 0);
  const std::uint64_t used = tail - head;
  return used <= capacity_ && need <= capacity_ - used;
}

std::byte* ShmRing::reserve(std::uint16_t kind, std::size_t payload_bytes) {
  SLUICE_ASSERT_MSG(!reserved_ && payload_bytes <= max_payload_bytes() && kind != k_record_pad,
                    "one reservation at a time, of at most max_payload_bytes, never a pad record");
  const std::uint64_t head = control_->head.load(std::memory_order_acquire);
  if (!fits(payload_bytes, head)) return nullptr;
  std::uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  std::size_t at = tail & (capacity_ - 1);
  const std::size_t total = record_bytes(payload_bytes);
  if (capacity_ - at < total) {
    // Pad to the end; the consumer skips it. at is 8-aligned, so a header fits.
    const RecordHeader pad{static_cast<std::uint32_t>(capacity_ - at - sizeof(RecordHeader)), k_record_pad, 0};
    std::memcpy(data_ + at, &pad, sizeof pad);
    tail += capacity_ - at;
    at = 0;
  }
  const RecordHeader header{static_cast<std::uint32_t>(payload_bytes), kind, 0};
  std::memcpy(data_ + at, &header, sizeof header);
  pending_tail_ = tail + total;
  reserved_ = true;
  return data_ + at + sizeof(RecordHeader);
}

bool ShmRing::commit() {
  SLUICE_ASSERT_MSG(reserved_, "commit follows a reserve");
  reserved_ = false;
  control_->tail.store(pending_tail_, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (control_->consumer_waiting.load(std::memory_order_relaxed) == 0) return false;
  return control_->consumer_waiting.exchange(0, std::memory_order_acq_rel) != 0;
}

bool ShmRing::arm_producer(std::size_t payload_bytes) {
  control_->producer_waiting.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (fits(payload_bytes, control_->head.load(std::memory_order_acquire))) {
    control_->producer_waiting.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

Status ShmRing::peek(RingRecord& out, bool& has_record) {
  has_record = false;
  std::uint64_t head = control_->head.load(std::memory_order_relaxed);
  const std::uint64_t tail = control_->tail.load(std::memory_order_acquire);
  if (tail - head > capacity_) {
    return error(StatusCode::corrupt, "shm ring: tail " + std::to_string(tail) + " is more than the capacity " +
                                          std::to_string(capacity_) + " past head " + std::to_string(head));
  }
  for (int step = 0; step < 2 && head != tail; ++step) {
    const std::size_t at = head & (capacity_ - 1);
    RecordHeader header;
    std::memcpy(&header, data_ + at, sizeof header);
    const std::size_t total = record_bytes(header.payload_bytes);
    if (header.payload_bytes > capacity_ - at - sizeof(RecordHeader) || total > tail - head) {
      return error(StatusCode::corrupt, "shm ring: record of " + std::to_string(header.payload_bytes) +
                                            " bytes at offset " + std::to_string(at) + " overruns the ring");
    }
    if (header.kind == k_record_pad) {
      // Padding is consumed at once (the producer only pads up to the end).
      head += total;
      control_->head.store(head, std::memory_order_release);
      continue;
    }
    out.kind = header.kind;
    out.payload = std::span<const std::byte>(data_ + at + sizeof(RecordHeader), header.payload_bytes);
    peeked_head_ = head + total;
    peeked_ = true;
    has_record = true;
    return ok_status();
  }
  return ok_status();
}

bool ShmRing::release() {
  SLUICE_ASSERT_MSG(peeked_, "release follows a peek");
  peeked_ = false;
  control_->head.store(peeked_head_, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (control_->producer_waiting.load(std::memory_order_relaxed) == 0) return false;
  return control_->producer_waiting.exchange(0, std::memory_order_acq_rel) != 0;
}

bool ShmRing::arm_consumer() {
  control_->consumer_waiting.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!empty()) {
    control_->consumer_waiting.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

bool ShmRing::empty() const {
  return control_->head.load(std::memory_order_relaxed) == control_->tail.load(std::memory_order_acquire);
}

}  // namespace sluice::transport::shm
