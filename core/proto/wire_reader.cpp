#include "core/proto/wire_reader.hpp"

namespace sluice::proto {

WireReader::WireReader(std::span<const std::byte> payload, std::size_t frame_offset, std::string_view message_name)
    : payload_(payload), frame_offset_(frame_offset), message_name_(message_name) {}

void WireReader::operator()(const char* name, std::string& value, std::uint32_t max_bytes) {
  if (!status_.ok()) return;
  path_.push(name);
  const std::size_t at = pos_;
  std::uint32_t length = 0;
  if (read_fixed(length)) {
    if (length > max_bytes) {
      fail(at, "string length " + std::to_string(length) + " exceeds the limit " + std::to_string(max_bytes));
    } else if (length > remaining_bytes()) {
      fail(at, "string length " + std::to_string(length) + " runs past the end of the payload (" +
                   std::to_string(remaining_bytes()) + " bytes remain)");
    } else if (length == 0) {
      value.clear();
    } else {
      value.assign(reinterpret_cast<const char*>(payload_.data() + pos_), length);
      pos_ += length;
    }
  }
  path_.pop();
}

void WireReader::expect_end() {
  if (!status_.ok() || remaining_bytes() == 0) return;
  fail(pos_, std::to_string(remaining_bytes()) + " bytes left over after the last field");
}

void WireReader::fail(std::size_t payload_offset, const std::string& problem) {
  if (!status_.ok()) return;
  status_ = Status(StatusCode::corrupt, path_.render(message_name_) + ": " + problem + " (at byte " +
                                            std::to_string(frame_offset_ + payload_offset) + " of the frame)");
}

}  // namespace sluice::proto
