// The SPSC ring on its own: records in order across the wrap, back-pressure,
// the sleep/wake flags and the bounds checks against a corrupt producer.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "transports/shm/shm_ring.hpp"

namespace sluice::transport::shm {
namespace {

constexpr std::size_t k_capacity = 4096;

class RingPair {
 public:
  RingPair() : memory_(ShmRing::footprint_bytes(k_capacity) + k_cache_line_bytes) {
    // Align the control block as a page-aligned segment would be.
    auto addr = reinterpret_cast<std::uintptr_t>(memory_.data());
    base_ = memory_.data() + ((k_cache_line_bytes - addr % k_cache_line_bytes) % k_cache_line_bytes);
    producer = ShmRing(base_, k_capacity, true);
    consumer = ShmRing(base_, k_capacity, false);
  }
  std::byte* base() { return base_; }

  ShmRing producer;
  ShmRing consumer;

 private:
  std::vector<std::byte> memory_;
  std::byte* base_ = nullptr;
};

bool push(ShmRing& ring, std::uint16_t kind, std::size_t bytes, std::uint8_t fill) {
  std::byte* at = ring.reserve(kind, bytes);
  if (at == nullptr) return false;
  std::memset(at, fill, bytes);
  ring.commit();
  return true;
}

TEST(ShmRing, DeliversRecordsInOrderAcrossTheWrap) {
  RingPair ring;
  // 700-byte records do not divide the ring: the producer has to pad.
  int next_expected = 0;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(push(ring.producer, 1 + i % 3, 700, static_cast<std::uint8_t>(i))) << i;
    RingRecord r;
    bool has = false;
    ASSERT_TRUE(ring.consumer.peek(r, has).ok());
    ASSERT_TRUE(has);
    EXPECT_EQ(r.kind, 1 + next_expected % 3);
    ASSERT_EQ(r.payload.size(), 700u);
    EXPECT_EQ(r.payload[0], std::byte(static_cast<std::uint8_t>(next_expected)));
    EXPECT_EQ(r.payload[699], std::byte(static_cast<std::uint8_t>(next_expected)));
    ring.consumer.release();
    ++next_expected;
  }
  EXPECT_TRUE(ring.consumer.empty());
}

TEST(ShmRing, RefusesARecordWhenFullAndTakesItAfterARelease) {
  RingPair ring;
  int pushed = 0;
  while (push(ring.producer, 1, 1000, 7)) ++pushed;
  EXPECT_EQ(pushed, 4);  // 4 x 1008 bytes fit in 4096, a fifth does not
  EXPECT_TRUE(ring.producer.arm_producer(1000)) << "still full: the producer may sleep";
  RingRecord r;
  bool has = false;
  ASSERT_TRUE(ring.consumer.peek(r, has).ok());
  ASSERT_TRUE(has);
  EXPECT_TRUE(ring.consumer.release()) << "the producer was waiting: the consumer must wake it";
  EXPECT_FALSE(ring.producer.arm_producer(1000)) << "room appeared";
  EXPECT_TRUE(push(ring.producer, 1, 1000, 8));
}

TEST(ShmRing, WakesASleepingConsumerOnceAndNeverAnAwakeOne) {
  RingPair ring;
  EXPECT_TRUE(ring.consumer.arm_consumer()) << "empty: the consumer may sleep";
  ASSERT_NE(ring.producer.reserve(2, 16), nullptr);
  EXPECT_TRUE(ring.producer.commit()) << "the consumer sleeps: ring its doorbell";
  ASSERT_NE(ring.producer.reserve(2, 16), nullptr);
  EXPECT_FALSE(ring.producer.commit()) << "already woken once";
  EXPECT_FALSE(ring.consumer.arm_consumer()) << "records are waiting: do not sleep";
  ASSERT_NE(ring.producer.reserve(2, 16), nullptr);
  EXPECT_FALSE(ring.producer.commit()) << "arm_consumer saw records and cleared its flag";
}

TEST(ShmRing, ReportsACorruptHeaderInsteadOfReadingPastTheRing) {
  RingPair ring;
  std::byte* at = ring.producer.reserve(3, 64);
  ASSERT_NE(at, nullptr);
  ring.producer.commit();
  // Overwrite the header with a length past the end of the data area.
  RecordHeader bad{static_cast<std::uint32_t>(k_capacity), 3, 0};
  std::memcpy(ring.base() + sizeof(RingControl), &bad, sizeof bad);
  RingRecord r;
  bool has = false;
  const Status st = ring.consumer.peek(r, has);
  EXPECT_EQ(st.code(), StatusCode::corrupt) << st.to_string();
  EXPECT_FALSE(has);
}

TEST(ShmRing, ReportsATailTooFarAhead) {
  RingPair ring;
  reinterpret_cast<RingControl*>(ring.base())->tail.store(k_capacity * 3);
  RingRecord r;
  bool has = false;
  EXPECT_EQ(ring.consumer.peek(r, has).code(), StatusCode::corrupt);
}

TEST(ShmRing, MaxPayloadFitsOnceTheConsumerCaughtUp) {
  RingPair ring;
  const std::size_t max = ring.producer.max_payload_bytes();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(push(ring.producer, 1, max, 1)) << i;
    RingRecord r;
    bool has = false;
    ASSERT_TRUE(ring.consumer.peek(r, has).ok());
    ASSERT_TRUE(has);
    EXPECT_EQ(r.payload.size(), max);
    ring.consumer.release();
  }
}

}  // namespace
}  // namespace sluice::transport::shm
