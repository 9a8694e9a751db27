// Composite (progressive) layouts: Lustre PFL.
//
// A composite layout is an ordered list of components; component i covers the
// file extent [extent_start, extent_end) and has its own RAID0 pattern with
// its own objects (Lustre: struct lov_comp_md_entry_v1 with lcme_extent, each
// entry a complete lov_mds_md with its own lmm_objects). The last component
// may reach to end of file (extent_end = k_extent_eof, Lustre LUSTRE_EOF).
// A byte is mapped by the one component whose extent covers it.
//
// Object offsets inside a component's objects — exactly how Lustre does it:
// lov_stripe_offset(lsm, index, lov_off, stripeno, &obdoff) and
// lov_stripe_number(lsm, index, lov_off) in lustre/lov/lov_offset.c take the
// ABSOLUTE file offset and divide it by that component's stripe width; the
// component's extent start is never subtracted (lov_stripe_intersects() only
// clamps the range to the extent). So the first byte of a component that
// starts at 1 MiB with 4 MiB stripes lands at object offset 1 MiB of stripe 0,
// and objects of later components begin with a hole. Object sizes follow the
// same rule (lov_stripe_size(lsm, index, ...)). This is
// ComponentObjectOffsets::file_offset, the default.
//
// ComponentObjectOffsets::component_offset instead maps (offset - extent_start)
// through the component's pattern, so each component's objects start at
// object offset 0 with no leading hole. Lustre does not do this; it is here
// for what-if studies and for systems that number per extent.
//
// Validation (after Lustre's lod_verify_striping / lfs setstripe checks, see
// lustre/tests/sanity-pfl.sh test_0d): at least one component; the first
// starts at 0; each starts where the previous ended (contiguous, no overlap,
// no gap); start < end; only the last may end at k_extent_eof; every other
// end is a multiple of 64 KiB and of that component's chunk_bytes. A start
// need not be a multiple of the component's own chunk_bytes (Lustre allows
// `-E 1M -S 1M -E -1 -S 4M`); the first chunk of such a component is partial.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "core/layout/stripe_pattern.hpp"

namespace sluice {

inline constexpr std::uint64_t k_extent_eof = 0xFFFFFFFFFFFFFFFFULL;  // Lustre LUSTRE_EOF
// Our bound on components per layout (Lustre bounds them only by the layout
// EA size); real PFL layouts use 2-4.
inline constexpr std::size_t k_max_layout_components = 64;

enum class ComponentObjectOffsets : std::uint8_t {
  file_offset = 0,       // Lustre: absolute file offset through the component's pattern
  component_offset = 1,  // offset relative to the component's extent start
};

struct LayoutComponent {
  std::uint64_t extent_start = 0;
  std::uint64_t extent_end = k_extent_eof;  // exclusive
  StripePattern pattern;
};

// A location in a composite layout: which component, and where in it.
struct ComponentLocation {
  std::uint32_t component_index = 0;
  StripeLocation location;  // chunk_index/stripe_set are counted as the offset mode says

  bool operator==(const ComponentLocation&) const = default;
};

class CompositeLayout {
 public:
  // The message names the component ("components[2].extent_end") and the rule.
  static Status validate(const std::vector<LayoutComponent>& components);
  static Result<CompositeLayout> make(std::vector<LayoutComponent> components,
                                      ComponentObjectOffsets offsets = ComponentObjectOffsets::file_offset);
  // A plain layout as a composite: one component [0, EOF).
  static CompositeLayout plain(StripePattern pattern);

  const std::vector<LayoutComponent>& components() const { return components_; }
  ComponentObjectOffsets object_offsets() const { return offsets_; }
  // End of the last extent: k_extent_eof when the layout reaches end of file.
  std::uint64_t end_bytes() const { return components_.back().extent_end; }

  // The component covering `file_offset`; invalid_argument past end_bytes().
  Result<std::uint32_t> component_index_of(std::uint64_t file_offset) const;
  Result<ComponentLocation> locate(std::uint64_t file_offset) const;

  // Inverse of locate for component `component_index` (precondition: the
  // object offset is one that locate can return for that component).
  std::uint64_t file_offset_of(std::uint32_t component_index, std::uint32_t target_position,
                               std::uint64_t object_offset) const;

  // Pieces in file order; none crosses a chunk boundary or a component
  // boundary; component_index is set. Errors as StripePattern::map_range, and
  // invalid_argument when the range reaches past end_bytes().
  Result<std::vector<StripePiece>> map_range(std::uint64_t file_offset, std::uint64_t length) const;

  // Per component, per target position: the object sizes of a file of
  // `file_size` bytes written without holes (0 for objects the file does not
  // reach). In file_offset mode an object's size counts its leading hole.
  std::vector<std::vector<std::uint64_t>> object_sizes(std::uint64_t file_size) const;
  // The file size implied by all objects' sizes (the largest over components).
  Result<std::uint64_t> file_size_from_object_sizes(const std::vector<std::vector<std::uint64_t>>& object_sizes) const;

  std::string to_string() const;

 private:
  CompositeLayout(std::vector<LayoutComponent> components, ComponentObjectOffsets offsets)
      : components_(std::move(components)), offsets_(offsets) {}

  // The offset fed to a component's pattern for a file offset inside it.
  std::uint64_t pattern_offset(const LayoutComponent& c, std::uint64_t file_offset) const;

  std::vector<LayoutComponent> components_;
  ComponentObjectOffsets offsets_;
};

}  // namespace sluice
