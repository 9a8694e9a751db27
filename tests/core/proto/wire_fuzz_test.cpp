// A bounded, seeded mutation loop over encoded frames. Half of the mutants get
// their CRCs and payload length rewritten so that they reach the field
// decoder instead of stopping at the checksum. Properties:
// - decode never crashes (run under ASan+UBSan with SLUICE_SANITIZE=ON);
// - decoding allocates no single block larger than a small multiple of the frame;
// - the encoding is canonical: whatever decodes re-encodes to the same bytes.
#include <gtest/gtest.h>

#include <cstdint>

#include "alloc_tracker.hpp"
#include "core/common/rng.hpp"
#include "core/proto/codec.hpp"
#include "proto_test_support.hpp"

namespace sluice::proto {
namespace {

constexpr int k_iterations = 20'000;
constexpr std::uint64_t k_seed = 0x5EED'F00D;
// Decoded containers may take up to ~3x their wire bytes (e.g. a DirEntryDesc
// is 56 bytes in memory and 21 on the wire), plus small fixed allocations.
constexpr std::size_t k_alloc_factor = 4;
constexpr std::size_t k_alloc_slack_bytes = 512;

void mutate(std::vector<std::byte>& frame, Rng& rng) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng.uniform(n)); };
  switch (rng.uniform(6)) {
    case 0:  // flip one bit
      if (!frame.empty()) frame[pick(frame.size())] ^= static_cast<std::byte>(1u << rng.uniform(8));
      break;
    case 1:  // overwrite a byte, favouring the extremes that lengths and enums trip on
      if (!frame.empty()) {
        const std::uint8_t values[] = {0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF};
        frame[pick(frame.size())] = rng.uniform(2) == 0 ? static_cast<std::byte>(values[rng.uniform(6)])
                                                        : static_cast<std::byte>(rng.uniform(256));
      }
      break;
    case 2:  // truncate
      frame.resize(pick(frame.size() + 1));
      break;
    case 3:  // insert bytes
      frame.insert(frame.begin() + static_cast<std::ptrdiff_t>(pick(frame.size() + 1)), 1 + pick(8),
                   static_cast<std::byte>(rng.uniform(256)));
      break;
    case 4:  // delete bytes
      if (!frame.empty()) {
        const std::size_t at = pick(frame.size());
        const std::size_t n = std::min<std::size_t>(1 + pick(8), frame.size() - at);
        frame.erase(frame.begin() + static_cast<std::ptrdiff_t>(at),
                    frame.begin() + static_cast<std::ptrdiff_t>(at + n));
      }
      break;
    default:  // set a little-endian u32 (a length or count) to a hostile value
      if (frame.size() >= 4) {
        const std::uint32_t values[] = {0xFFFFFFFFu, 0x80000000u, k_max_message_bytes, 65536, 4097, 256};
        testing::put_le32(frame, pick(frame.size() - 3), values[rng.uniform(6)]);
      }
      break;
  }
}

TEST(WireFuzz, RandomMutationsNeverCrashAndDecodedFramesAreCanonical) {
  const auto samples = testing::sample_messages();
  std::vector<std::vector<std::byte>> frames;
  for (const Message& m : samples) frames.push_back(testing::encode_valid(m));

  Rng rng(k_seed);
  int decoded_ok = 0;
  int reached_fields = 0;
  for (int i = 0; i < k_iterations; ++i) {
    std::vector<std::byte> frame = frames[rng.uniform(frames.size())];
    const auto mutations = 1 + rng.uniform(4);
    for (std::uint64_t j = 0; j < mutations; ++j) mutate(frame, rng);
    const bool resealed = frame.size() >= k_frame_header_bytes && rng.uniform(2) == 0;
    if (resealed) testing::reseal(frame);

    std::size_t largest = 0;
    Result<Message> result = Status(StatusCode::internal, "not run");
    {
      testing::AllocTracker tracker;
      result = decode(frame);
      largest = tracker.largest_bytes();
    }
    ASSERT_LE(largest, k_alloc_factor * frame.size() + k_alloc_slack_bytes)
        << "iteration " << i << " (seed " << k_seed << ")";
    if (resealed && (result.ok() || result.status().message().find("(at byte") != std::string::npos)) {
      ++reached_fields;
    }
    if (!result.ok()) {
      const StatusCode code = result.status().code();
      ASSERT_TRUE(code == StatusCode::corrupt || code == StatusCode::invalid_argument)
          << "iteration " << i << ": " << result.status().to_string();
      ASSERT_FALSE(result.status().message().empty());
      continue;
    }
    ++decoded_ok;
    std::vector<std::byte> again;
    const Status encoded = encode_into(*result, again);
    ASSERT_TRUE(encoded.ok()) << "iteration " << i << ": " << encoded.to_string();
    ASSERT_EQ(again, frame) << "iteration " << i << ": " << message_name(*result) << " is not canonical";
  }
  RecordProperty("decoded_ok", decoded_ok);
  RecordProperty("reached_fields", reached_fields);
  // The loop must exercise both outcomes, or it proves little.
  EXPECT_GT(decoded_ok, 500);
  EXPECT_GT(reached_fields, 3000);
}

}  // namespace
}  // namespace sluice::proto
