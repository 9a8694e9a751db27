#include "core/layout/composite_layout.hpp"

#include <algorithm>
#include "core/common/assert.hpp"

namespace sluice {

namespace {

std::string component_field(std::size_t i, std::string_view field) {
  return "composite layout: components[" + std::to_string(i) + "]." + std::string(field);
}

std::string extent_to_string(std::uint64_t start, std::uint64_t end) {
  return "[" + std::to_string(start) + ", " + (end == k_extent_eof ? std::string("EOF") : std::to_string(end)) + ")";
}

}  // namespace

Status CompositeLayout::validate(const std::vector<LayoutComponent>& components) {
  if (components.empty()) {
    return error(StatusCode::invalid_argument, "composite layout: components is empty; at least one is needed");
  }
  if (components.size() > k_max_layout_components) {
    return error(StatusCode::invalid_argument,
                 "composite layout: " + std::to_string(components.size()) +
                     " components exceed k_max_layout_components=" + std::to_string(k_max_layout_components));
  }
  for (std::size_t i = 0; i < components.size(); ++i) {
    const LayoutComponent& c = components[i];
    const std::uint64_t expected_start = i == 0 ? 0 : components[i - 1].extent_end;
    if (c.extent_start != expected_start) {
      return error(StatusCode::invalid_argument,
                   component_field(i, "extent_start") + "=" + std::to_string(c.extent_start) +
                       (i == 0 ? " must be 0"
                               : " must equal the previous extent_end " + std::to_string(expected_start) +
                                     " (extents are contiguous and do not overlap)"));
    }
    if (c.extent_end <= c.extent_start) {
      return error(StatusCode::invalid_argument, component_field(i, "extent_end") + " makes the empty extent " +
                                                     extent_to_string(c.extent_start, c.extent_end));
    }
    if (c.extent_end == k_extent_eof) {
      if (i + 1 != components.size()) {
        return error(StatusCode::invalid_argument,
                     component_field(i, "extent_end") + " is EOF but only the last component may reach EOF");
      }
      continue;
    }
    if (c.extent_end > k_max_file_bytes) {
      return error(StatusCode::invalid_argument, component_field(i, "extent_end") + "=" + std::to_string(c.extent_end) +
                                                     " is past the largest file offset; use k_extent_eof");
    }
    if (c.extent_end % k_min_chunk_bytes != 0 || c.extent_end % c.pattern.chunk_bytes() != 0) {
      return error(StatusCode::invalid_argument, component_field(i, "extent_end") + "=" + std::to_string(c.extent_end) +
                                                     " is not a multiple of 65536 and of the component's chunk_bytes " +
                                                     std::to_string(c.pattern.chunk_bytes()));
    }
  }
  return ok_status();
}

Result<CompositeLayout> CompositeLayout::make(std::vector<LayoutComponent> components, ComponentObjectOffsets offsets) {
  if (Status s = validate(components); !s.ok()) return s;
  return CompositeLayout(std::move(components), offsets);
}

CompositeLayout CompositeLayout::plain(StripePattern pattern) {
  std::vector<LayoutComponent> components;
  components.push_back(LayoutComponent{0, k_extent_eof, std::move(pattern)});
  return CompositeLayout(std::move(components), ComponentObjectOffsets::file_offset);
}

std::uint64_t CompositeLayout::pattern_offset(const LayoutComponent& c, std::uint64_t file_offset) const {
  return offsets_ == ComponentObjectOffsets::file_offset ? file_offset : file_offset - c.extent_start;
}

Result<std::uint32_t> CompositeLayout::component_index_of(std::uint64_t file_offset) const {
  if (file_offset >= end_bytes()) {
    return error(StatusCode::invalid_argument, "composite layout: offset " + std::to_string(file_offset) +
                                                   " is past the last extent end " + std::to_string(end_bytes()));
  }
  // First component whose start is beyond the offset; the one before covers it.
  const auto it = std::upper_bound(components_.begin(), components_.end(), file_offset,
                                   [](std::uint64_t off, const LayoutComponent& c) { return off < c.extent_start; });
  return static_cast<std::uint32_t>(it - components_.begin() - 1);
}

Result<ComponentLocation> CompositeLayout::locate(std::uint64_t file_offset) const {
  const Result<std::uint32_t> index = component_index_of(file_offset);
  if (!index.ok()) return index.status();
  const LayoutComponent& c = components_[*index];
  return ComponentLocation{*index, c.pattern.locate(pattern_offset(c, file_offset))};
}

std::uint64_t CompositeLayout::file_offset_of(std::uint32_t component_index, std::uint32_t target_position,
                                              std::uint64_t object_offset) const {
  SLUICE_ASSERT(component_index < components_.size());
  const LayoutComponent& c = components_[component_index];
  const std::uint64_t pattern_off = c.pattern.file_offset_of(target_position, object_offset);
  return offsets_ == ComponentObjectOffsets::file_offset ? pattern_off : c.extent_start + pattern_off;
}

Result<std::vector<StripePiece>> CompositeLayout::map_range(std::uint64_t file_offset, std::uint64_t length) const {
  if (length == 0) return std::vector<StripePiece>{};
  if (file_offset > k_max_file_bytes || length > k_max_file_bytes - file_offset) {
    return error(StatusCode::invalid_argument, "composite layout: range offset=" + std::to_string(file_offset) +
                                                   " length=" + std::to_string(length) +
                                                   " ends past the largest file offset");
  }
  const std::uint64_t end = file_offset + length;
  if (end > end_bytes()) {
    return error(StatusCode::invalid_argument, "composite layout: range offset=" + std::to_string(file_offset) +
                                                   " length=" + std::to_string(length) +
                                                   " reaches past the last extent end " + std::to_string(end_bytes()));
  }
  const Result<std::uint32_t> first = component_index_of(file_offset);
  if (!first.ok()) return first.status();

  // Count first so that a huge range fails before anything is allocated.
  std::uint64_t piece_count = 0;
  for (std::size_t i = *first; i < components_.size() && components_[i].extent_start < end; ++i) {
    const LayoutComponent& c = components_[i];
    const std::uint64_t lo = pattern_offset(c, std::max(file_offset, c.extent_start));
    const std::uint64_t hi = pattern_offset(c, std::min(end, c.extent_end));
    piece_count += (hi - 1) / c.pattern.chunk_bytes() - lo / c.pattern.chunk_bytes() + 1;
  }
  if (piece_count > k_max_pieces_per_map) {
    return error(StatusCode::invalid_argument, "composite layout: range offset=" + std::to_string(file_offset) +
                                                   " length=" + std::to_string(length) + " spans " +
                                                   std::to_string(piece_count) +
                                                   " chunks, more than k_max_pieces_per_map; split the request");
  }

  std::vector<StripePiece> pieces;
  pieces.reserve(static_cast<std::size_t>(piece_count));
  for (std::size_t i = *first; i < components_.size() && components_[i].extent_start < end; ++i) {
    const LayoutComponent& c = components_[i];
    const std::uint64_t lo = std::max(file_offset, c.extent_start);
    const std::uint64_t hi = std::min(end, c.extent_end);
    Result<std::vector<StripePiece>> part = c.pattern.map_range(pattern_offset(c, lo), hi - lo);
    if (!part.ok()) return part.status();
    for (StripePiece piece : *part) {
      if (offsets_ == ComponentObjectOffsets::component_offset) piece.file_offset += c.extent_start;
      piece.component_index = static_cast<std::uint32_t>(i);
      pieces.push_back(piece);
    }
  }
  return pieces;
}

std::vector<std::vector<std::uint64_t>> CompositeLayout::object_sizes(std::uint64_t file_size) const {
  std::vector<std::vector<std::uint64_t>> sizes;
  sizes.reserve(components_.size());
  for (const LayoutComponent& c : components_) {
    std::vector<std::uint64_t> per_position(c.pattern.stripe_count(), 0);
    const std::uint64_t hi = std::min(file_size, c.extent_end);
    if (hi > c.extent_start) {
      for (std::uint32_t p = 0; p < per_position.size(); ++p) {
        if (offsets_ == ComponentObjectOffsets::component_offset) {
          per_position[p] = c.pattern.object_size(hi - c.extent_start, p);
          continue;
        }
        // Absolute offsets: the object's last byte below `hi` counts only if it
        // lies inside this component's extent (else the object is untouched).
        const std::uint64_t size = c.pattern.object_size(hi, p);
        if (size != 0 && c.pattern.file_offset_of(p, size - 1) >= c.extent_start) per_position[p] = size;
      }
    }
    sizes.push_back(std::move(per_position));
  }
  return sizes;
}

Result<std::uint64_t> CompositeLayout::file_size_from_object_sizes(
    const std::vector<std::vector<std::uint64_t>>& object_sizes) const {
  if (object_sizes.size() != components_.size()) {
    return error(StatusCode::invalid_argument, "composite layout: got object sizes for " +
                                                   std::to_string(object_sizes.size()) + " components, layout has " +
                                                   std::to_string(components_.size()));
  }
  std::uint64_t file_size = 0;
  for (std::size_t i = 0; i < components_.size(); ++i) {
    const LayoutComponent& c = components_[i];
    const Result<std::uint64_t> implied = c.pattern.file_size_from_object_sizes(object_sizes[i]);
    if (!implied.ok()) {
      return error(implied.status().code(),
                   "composite layout: components[" + std::to_string(i) + "]: " + implied.status().message());
    }
    if (*implied == 0) continue;
    const std::uint64_t size = offsets_ == ComponentObjectOffsets::file_offset ? *implied : c.extent_start + *implied;
    if (size <= c.extent_start || size > c.extent_end || size > k_max_file_bytes) {
      return error(StatusCode::invalid_argument, "composite layout: components[" + std::to_string(i) +
                                                     "] objects hold a byte at " + std::to_string(size - 1) +
                                                     ", outside the extent " +
                                                     extent_to_string(c.extent_start, c.extent_end));
    }
    file_size = std::max(file_size, size);
  }
  return file_size;
}

std::string CompositeLayout::to_string() const {
  std::string s =
      offsets_ == ComponentObjectOffsets::file_offset ? "composite/file_offset{" : "composite/component_offset{";
  for (std::size_t i = 0; i < components_.size(); ++i) {
    if (i != 0) s += "; ";
    s += extent_to_string(components_[i].extent_start, components_[i].extent_end) + " " +
         components_[i].pattern.to_string();
  }
  s += "}";
  return s;
}

}  // namespace sluice
