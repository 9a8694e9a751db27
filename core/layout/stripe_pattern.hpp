// RAID0 stripe patterns: which storage target holds which byte of a file.
//
// A pattern is a chunk size and an ordered list of stripe_count targets. The
// file is cut into chunks of chunk_bytes; chunk c lives on the target at
// position c % stripe_count of the list, in that target's per-file object
// (BeeGFS: the file's chunk file on the storage target; Lustre: the file's
// OST object). Numbering, for a file offset x:
//
//   chunk_index     = x / chunk_bytes
//   offset_in_chunk = x % chunk_bytes
//   stripe_set      = chunk_index / stripe_count     (the "row" of chunks)
//   target_position = chunk_index % stripe_count     (Lustre's "stripe number")
//   object_offset   = stripe_set * chunk_bytes + offset_in_chunk
//
// BeeGFS: StripePattern::getStripeTargetIndex() = (pos / chunkSize) %
// numTargets (common/source/common/storage/striping/StripePattern.h); the
// chunk file on that target holds the target's chunks back to back, so the
// object offset is the formula above.
// Lustre: lov_stripe_number() and lov_stripe_offset() (lustre/lov/lov_offset.c)
// compute exactly the same numbers: obdoff = (x / swidth) * ssize +
// (x % swidth - stripeno * ssize) with swidth = ssize * stripe_count.
//
// Where the two differ (and this class follows each when flavour says so):
// - chunk size: BeeGFS requires a power of two >= 64 KiB
//   (STRIPEPATTERN_MIN_CHUNKSIZE, a 32-bit field); Lustre requires a
//   multiple of 64 KiB (LOV_MIN_STRIPE_SIZE) below 4 GiB (lustreapi.h
//   llapi_stripe_size_is_too_big), not a power of two.
// - Lustre's stripe_offset (`lfs setstripe -i`) is only an allocation hint
//   for the first OST: the layout stores its objects already in stripe order
//   (lmm_objects[0] is stripe 0), so the map never needs it. The allocator
//   honours it (LustreQosAllocator::allocate_from).
// - Lustre overstriping (several stripes on one OST) is not modelled: a target
//   appears at most once in a pattern, which is what makes (target,
//   object_offset) unique for every byte.
//
// A buddy-mirrored pattern (BeeGFS StripePatternType_BuddyMirror, see
// BuddyMirrorPattern.h) has the same map, but its list holds buddy group ids
// (GroupId): the chunk goes to both targets of the group, the primary first.
//
// Values are immutable after make; all methods are const and pure, so a
// pattern can be shared freely.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice {

enum class StripeFlavor : std::uint8_t {
  beegfs = 0,  // chunk_bytes a power of two
  lustre = 1,  // chunk_bytes a multiple of 64 KiB
};

std::string_view to_string(StripeFlavor flavor);

// ---- limits ------------------------------------------------------------------
// Smallest chunk for both: BeeGFS STRIPEPATTERN_MIN_CHUNKSIZE (StripePattern.h),
// Lustre LOV_MIN_STRIPE_SIZE (1 << LOV_MIN_STRIPE_BITS, lustre_user.h).
inline constexpr std::uint64_t k_min_chunk_bytes = 64 * k_kib;
// BeeGFS stores chunkSize in a uint32_t: the largest power of two that fits.
inline constexpr std::uint64_t k_max_chunk_bytes_beegfs = 2 * k_gib;
// Lustre: stripe_size < 4 GiB and a multiple of 64 KiB (lustreapi.h).
inline constexpr std::uint64_t k_max_chunk_bytes_lustre = 4 * k_gib - 64 * k_kib;
// Lustre LOV_MAX_STRIPE_COUNT (lustre_user.h: what fits the layout EA). BeeGFS
// has no smaller documented cap, so one limit serves both.
inline constexpr std::uint32_t k_max_stripe_count = 2000;
// POSIX off_t: no byte of a file lies at or beyond this offset.
inline constexpr std::uint64_t k_max_file_bytes = 0x7FFFFFFFFFFFFFFFULL;
// One map_range call yields at most this many pieces (a 64 GiB read in 64 KiB
// chunks); callers split larger requests. Keeps a bad length from allocating
// without bound.
inline constexpr std::size_t k_max_pieces_per_map = std::size_t{1} << 20;

// BeeGFS defaults: STRIPEPATTERN_DEFAULT_CHUNKSIZE (StripePattern.h) and
// RAID0PATTERN_DEFAULT_NUM_TARGETS (Raid0Pattern.h).
inline constexpr std::uint64_t k_default_chunk_bytes_beegfs = 512 * k_kib;
inline constexpr std::uint32_t k_default_stripe_count_beegfs = 4;

// Where one byte of a file lives (see the numbering at the top).
struct StripeLocation {
  std::uint64_t chunk_index = 0;
  std::uint64_t stripe_set = 0;
  std::uint32_t target_position = 0;
  std::uint32_t target = k_no_id;  // targets()[target_position]: TargetId, or GroupId if buddy-mirrored
  std::uint64_t offset_in_chunk = 0;
  std::uint64_t object_offset = 0;

  bool operator==(const StripeLocation&) const = default;
};

// A run of file bytes that lies inside one chunk, hence contiguous in one
// target's object: [file_offset, file_offset + length) of the file is
// [object_offset, object_offset + length) of the object at target_position.
struct StripePiece {
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
  std::uint32_t target = k_no_id;
  std::uint32_t target_position = 0;
  std::uint64_t object_offset = 0;
  std::uint64_t chunk_index = 0;
  std::uint32_t component_index = 0;  // 0 for a plain pattern; see CompositeLayout

  bool operator==(const StripePiece&) const = default;
};

class StripePattern {
 public:
  // Checks a would-be pattern; the message names the bad field
  // ("chunk_bytes", "stripe_count", "targets[i]") and the rule it breaks.
  static Status validate(StripeFlavor flavor, std::uint64_t chunk_bytes, const std::vector<std::uint32_t>& targets);

  // A RAID0 pattern over storage targets, in stripe order.
  static Result<StripePattern> raid0(StripeFlavor flavor, std::uint64_t chunk_bytes, std::vector<TargetId> targets);
  // A BeeGFS buddy-mirrored pattern over buddy groups (BeeGFS rules).
  static Result<StripePattern> buddy_mirror(std::uint64_t chunk_bytes, std::vector<GroupId> groups);

  StripeFlavor flavor() const { return flavor_; }
  bool buddy_mirrored() const { return buddy_mirrored_; }
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  std::uint32_t stripe_count() const { return static_cast<std::uint32_t>(targets_.size()); }
  std::uint64_t stripe_width_bytes() const { return chunk_bytes_ * targets_.size(); }
  // Target ids (or group ids when buddy_mirrored()), in stripe order.
  const std::vector<std::uint32_t>& targets() const { return targets_; }

  // Where byte `file_offset` lives. Total: every offset has a location.
  StripeLocation locate(std::uint64_t file_offset) const;

  // The inverse of locate: the file offset stored at `object_offset` of the
  // object at `target_position`. Requires target_position < stripe_count()
  // and a result that fits 64 bits, which holds for every object offset of a
  // file below k_max_file_bytes (asserted).
  std::uint64_t file_offset_of(std::uint32_t target_position, std::uint64_t object_offset) const;

  // Cuts [file_offset, file_offset + length) into pieces in file order, each
  // inside one chunk. Empty for length 0. Errors (invalid_argument): the range
  // ends past k_max_file_bytes, or needs more than k_max_pieces_per_map pieces.
  Result<std::vector<StripePiece>> map_range(std::uint64_t file_offset, std::uint64_t length) const;

  // Size of the object at `target_position` of a file of `file_size` bytes
  // written without holes: what stat/truncate set on each chunk file / OST
  // object. Lustre: lov_size_to_stripe() (lov_offset.c). Requires
  // target_position < stripe_count().
  std::uint64_t object_size(std::uint64_t file_size, std::uint32_t target_position) const;
  // object_size for every position, in stripe order.
  std::vector<std::uint64_t> object_sizes(std::uint64_t file_size) const;

  // The file size implied by the objects' sizes: one past the last byte any
  // object holds (Lustre lov_stripe_size(), lov_offset.c; BeeGFS's metadata
  // server likewise derives the size from the chunk files' sizes, see
  // striping/DynamicFileAttribs.h). Errors: wrong number of
  // sizes, or a size that puts a byte past k_max_file_bytes.
  Result<std::uint64_t> file_size_from_object_sizes(const std::vector<std::uint64_t>& object_sizes) const;

  // e.g. "raid0/beegfs chunk=524288 targets=[1,2,3]".
  std::string to_string() const;

  bool operator==(const StripePattern&) const = default;

 private:
  StripePattern(StripeFlavor flavor, bool buddy_mirrored, std::uint64_t chunk_bytes, std::vector<std::uint32_t> targets)
      : flavor_(flavor), buddy_mirrored_(buddy_mirrored), chunk_bytes_(chunk_bytes), targets_(std::move(targets)) {}

  StripeFlavor flavor_;
  bool buddy_mirrored_;
  std::uint64_t chunk_bytes_;
  std::vector<std::uint32_t> targets_;
};

}  // namespace sluice
