#include "core/layout/stripe_pattern.hpp"

#include <algorithm>
#include "core/common/assert.hpp"
#include <unordered_set>

namespace sluice {

std::string_view to_string(StripeFlavor flavor) {
  switch (flavor) {
    case StripeFlavor::beegfs: return "beegfs";
    case StripeFlavor::lustre: return "lustre";
  }
  return "unknown";
}

namespace {

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string field_error(std::string_view field, std::uint64_t value, std::string_view rule) {
  std::string s = "stripe pattern: ";
  s += field;
  s += "=";
  s += std::to_string(value);
  s += " ";
  s += rule;
  return s;
}

}  // namespace

Status StripePattern::validate(StripeFlavor flavor, std::uint64_t chunk_bytes,
                               const std::vector<std::uint32_t>& targets) {
  if (chunk_bytes < k_min_chunk_bytes) {
    return error(
        StatusCode::invalid_argument,
        field_error("chunk_bytes", chunk_bytes, "is below the minimum of " + std::to_string(k_min_chunk_bytes)));
  }
  if (flavor == StripeFlavor::beegfs) {
    if (!is_power_of_two(chunk_bytes)) {
      return error(StatusCode::invalid_argument,
                   field_error("chunk_bytes", chunk_bytes, "is not a power of two (BeeGFS rule)"));
    }
    if (chunk_bytes > k_max_chunk_bytes_beegfs) {
      return error(StatusCode::invalid_argument,
                   field_error("chunk_bytes", chunk_bytes,
                               "exceeds the BeeGFS maximum of " + std::to_string(k_max_chunk_bytes_beegfs)));
    }
  } else {
    if (chunk_bytes % k_min_chunk_bytes != 0) {
      return error(StatusCode::invalid_argument,
                   field_error("chunk_bytes", chunk_bytes, "is not a multiple of 65536 (Lustre rule)"));
    }
    if (chunk_bytes > k_max_chunk_bytes_lustre) {
      return error(StatusCode::invalid_argument,
                   field_error("chunk_bytes", chunk_bytes,
                               "exceeds the Lustre maximum of " + std::to_string(k_max_chunk_bytes_lustre)));
    }
  }
  if (targets.empty()) {
    return error(StatusCode::invalid_argument, field_error("stripe_count", 0, "must be at least 1"));
  }
  if (targets.size() > k_max_stripe_count) {
    return error(
        StatusCode::invalid_argument,
        field_error("stripe_count", targets.size(), "exceeds the maximum of " + std::to_string(k_max_stripe_count)));
  }
  std::unordered_set<std::uint32_t> seen;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::string field = "targets[" + std::to_string(i) + "]";
    if (targets[i] == k_no_id) {
      return error(StatusCode::invalid_argument, field_error(field, targets[i], "is the reserved k_no_id"));
    }
    if (!seen.insert(targets[i]).second) {
      // One object per target and file: a repeated target would put two
      // stripes at the same object offsets.
      return error(StatusCode::invalid_argument, field_error(field, targets[i], "repeats an earlier target"));
    }
  }
  return ok_status();
}

Result<StripePattern> StripePattern::raid0(StripeFlavor flavor, std::uint64_t chunk_bytes,
                                           std::vector<TargetId> targets) {
  if (Status s = validate(flavor, chunk_bytes, targets); !s.ok()) return s;
  return StripePattern(flavor, false, chunk_bytes, std::move(targets));
}

Result<StripePattern> StripePattern::buddy_mirror(std::uint64_t chunk_bytes, std::vector<GroupId> groups) {
  if (Status s = validate(StripeFlavor::beegfs, chunk_bytes, groups); !s.ok()) {
    return error(s.code(), "buddy-mirrored " + s.message());
  }
  return StripePattern(StripeFlavor::beegfs, true, chunk_bytes, std::move(groups));
}

StripeLocation StripePattern::locate(std::uint64_t file_offset) const {
  const std::uint64_t count = targets_.size();
  StripeLocation loc;
  loc.chunk_index = file_offset / chunk_bytes_;
  loc.offset_in_chunk = file_offset % chunk_bytes_;
  loc.stripe_set = loc.chunk_index / count;
  loc.target_position = static_cast<std::uint32_t>(loc.chunk_index % count);
  loc.target = targets_[loc.target_position];
  loc.object_offset = loc.stripe_set * chunk_bytes_ + loc.offset_in_chunk;
  return loc;
}

std::uint64_t StripePattern::file_offset_of(std::uint32_t target_position, std::uint64_t object_offset) const {
  SLUICE_ASSERT(target_position < targets_.size());
  const std::uint64_t stripe_set = object_offset / chunk_bytes_;
  SLUICE_ASSERT(stripe_set <= (UINT64_MAX - stripe_width_bytes()) / stripe_width_bytes());
  const std::uint64_t offset_in_chunk = object_offset % chunk_bytes_;
  return stripe_set * stripe_width_bytes() + target_position * chunk_bytes_ + offset_in_chunk;
}

Result<std::vector<StripePiece>> StripePattern::map_range(std::uint64_t file_offset, std::uint64_t length) const {
  if (length == 0) return std::vector<StripePiece>{};
  if (file_offset > k_max_file_bytes || length > k_max_file_bytes - file_offset) {
    return error(StatusCode::invalid_argument,
                 "stripe map: range offset=" + std::to_string(file_offset) + " length=" + std::to_string(length) +
                     " ends past the largest file offset " + std::to_string(k_max_file_bytes));
  }
  const std::uint64_t end = file_offset + length;
  const std::uint64_t first_chunk = file_offset / chunk_bytes_;
  const std::uint64_t last_chunk = (end - 1) / chunk_bytes_;
  const std::uint64_t piece_count = last_chunk - first_chunk + 1;
  if (piece_count > k_max_pieces_per_map) {
    return error(StatusCode::invalid_argument,
                 "stripe map: range offset=" + std::to_string(file_offset) + " length=" + std::to_string(length) +
                     " spans " + std::to_string(piece_count) + " chunks, more than k_max_pieces_per_map=" +
                     std::to_string(k_max_pieces_per_map) + "; split the request");
  }
  std::vector<StripePiece> pieces;
  pieces.reserve(static_cast<std::size_t>(piece_count));
  std::uint64_t pos = file_offset;
  while (pos < end) {
    const StripeLocation loc = locate(pos);
    const std::uint64_t chunk_end = (loc.chunk_index + 1) * chunk_bytes_;
    StripePiece piece;
    piece.file_offset = pos;
    piece.length = std::min(end, chunk_end) - pos;
    piece.target = loc.target;
    piece.target_position = loc.target_position;
    piece.object_offset = loc.object_offset;
    piece.chunk_index = loc.chunk_index;
    pieces.push_back(piece);
    pos += piece.length;
  }
  return pieces;
}

std::uint64_t StripePattern::object_size(std::uint64_t file_size, std::uint32_t target_position) const {
  SLUICE_ASSERT(target_position < targets_.size());
  const std::uint64_t width = stripe_width_bytes();
  const std::uint64_t full_sets = file_size / width;
  const std::uint64_t rest = file_size % width;
  const std::uint64_t position_start = target_position * chunk_bytes_;
  std::uint64_t tail = 0;
  if (rest > position_start) tail = std::min(rest - position_start, chunk_bytes_);
  return full_sets * chunk_bytes_ + tail;
}

std::vector<std::uint64_t> StripePattern::object_sizes(std::uint64_t file_size) const {
  std::vector<std::uint64_t> sizes(targets_.size());
  for (std::uint32_t p = 0; p < sizes.size(); ++p) sizes[p] = object_size(file_size, p);
  return sizes;
}

Result<std::uint64_t> StripePattern::file_size_from_object_sizes(const std::vector<std::uint64_t>& object_sizes) const {
  if (object_sizes.size() != targets_.size()) {
    return error(StatusCode::invalid_argument, "stripe pattern: got " + std::to_string(object_sizes.size()) +
                                                   " object sizes for " + std::to_string(targets_.size()) + " stripes");
  }
  // An object can hold at most its share of a k_max_file_bytes file.
  const std::uint64_t max_object_bytes = object_size(k_max_file_bytes, 0);
  std::uint64_t file_size = 0;
  for (std::uint32_t p = 0; p < object_sizes.size(); ++p) {
    const std::uint64_t size = object_sizes[p];
    if (size == 0) continue;
    if (size > max_object_bytes) {
      return error(StatusCode::invalid_argument, "stripe pattern: object_sizes[" + std::to_string(p) +
                                                     "]=" + std::to_string(size) +
                                                     " puts a byte past the largest file offset");
    }
    const std::uint64_t last_byte = file_offset_of(p, size - 1);
    if (last_byte >= k_max_file_bytes) {
      return error(StatusCode::invalid_argument, "stripe pattern: object_sizes[" + std::to_string(p) +
                                                     "]=" + std::to_string(size) +
                                                     " puts a byte past the largest file offset");
    }
    file_size = std::max(file_size, last_byte + 1);
  }
  return file_size;
}

std::string StripePattern::to_string() const {
  std::string s = buddy_mirrored_ ? "buddymirror/" : "raid0/";
  s += sluice::to_string(flavor_);
  s += " chunk=" + std::to_string(chunk_bytes_);
  s += buddy_mirrored_ ? " groups=[" : " targets=[";
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(targets_[i]);
  }
  s += "]";
  return s;
}

}  // namespace sluice
