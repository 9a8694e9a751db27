#include "core/layout/composite_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "core/common/rng.hpp"

namespace sluice {
namespace {

StripePattern lustre_pattern(std::uint64_t chunk_bytes, std::vector<TargetId> targets) {
  Result<StripePattern> r = StripePattern::raid0(StripeFlavor::lustre, chunk_bytes, std::move(targets));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

LayoutComponent component(std::uint64_t start, std::uint64_t end, std::uint64_t chunk_bytes,
                          std::vector<TargetId> targets) {
  return LayoutComponent{start, end, lustre_pattern(chunk_bytes, std::move(targets))};
}

CompositeLayout make(std::vector<LayoutComponent> components, ComponentObjectOffsets offsets) {
  Result<CompositeLayout> r = CompositeLayout::make(std::move(components), offsets);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

bool mentions(const Status& s, std::string_view text) { return s.message().find(text) != std::string::npos; }

// The PFL layout of the Lustre manual's flavour: a small first component on one
// OST, then a wider one whose start (1 MiB) is not a multiple of its 4 MiB stripes.
std::vector<LayoutComponent> pfl_example() {
  return {component(0, 1 * k_mib, 1 * k_mib, {10}), component(1 * k_mib, 64 * k_mib, 4 * k_mib, {20, 21, 22, 23}),
          component(64 * k_mib, k_extent_eof, 4 * k_mib, {30, 31, 32, 33, 34, 35, 36, 37})};
}

// Random valid layouts with small chunks so that files stay small.
CompositeLayout random_layout(Rng& rng, ComponentObjectOffsets offsets) {
  const std::size_t count = 1 + rng.uniform(4);
  std::vector<LayoutComponent> components;
  std::uint64_t start = 0;
  TargetId next_id = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t chunk = k_min_chunk_bytes * (1 + rng.uniform(3));
    std::vector<TargetId> targets(1 + rng.uniform(4));
    for (TargetId& t : targets) t = next_id++ % 6;  // components may share targets
    std::sort(targets.begin(), targets.end());
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
    std::uint64_t end = k_extent_eof;
    if (i + 1 < count || rng.uniform(2) == 0) end = (start / chunk + 1 + rng.uniform(6)) * chunk;
    components.push_back(component(start, end, chunk, targets));
    if (end == k_extent_eof) break;
    start = end;
  }
  return make(std::move(components), offsets);
}

// ---- validation ----------------------------------------------------------------------

TEST(CompositeLayoutValidation, AcceptsLustreStyleProgressiveLayout) {
  EXPECT_TRUE(CompositeLayout::validate(pfl_example()).ok());
}

TEST(CompositeLayoutValidation, RejectsEmptyLayout) {
  const Status s = CompositeLayout::validate({});
  EXPECT_EQ(s.code(), StatusCode::invalid_argument);
  EXPECT_TRUE(mentions(s, "empty")) << s.message();
}

TEST(CompositeLayoutValidation, FirstExtentMustStartAtZero) {
  const Status s = CompositeLayout::validate({component(64 * k_kib, k_extent_eof, 64 * k_kib, {1})});
  EXPECT_TRUE(mentions(s, "components[0].extent_start")) << s.message();
}

TEST(CompositeLayoutValidation, ExtentsMustBeContiguousWithoutGapOrOverlap) {
  const Status gap = CompositeLayout::validate(
      {component(0, 1 * k_mib, 1 * k_mib, {1}), component(2 * k_mib, k_extent_eof, 1 * k_mib, {2})});
  EXPECT_TRUE(mentions(gap, "components[1].extent_start")) << gap.message();
  const Status overlap = CompositeLayout::validate(
      {component(0, 2 * k_mib, 1 * k_mib, {1}), component(1 * k_mib, k_extent_eof, 1 * k_mib, {2})});
  EXPECT_TRUE(mentions(overlap, "components[1].extent_start")) << overlap.message();
}

TEST(CompositeLayoutValidation, RejectsEmptyExtent) {
  const Status s = CompositeLayout::validate(
      {component(0, 1 * k_mib, 1 * k_mib, {1}), component(1 * k_mib, 1 * k_mib, 1 * k_mib, {2})});
  EXPECT_TRUE(mentions(s, "components[1].extent_end")) << s.message();
}

TEST(CompositeLayoutValidation, OnlyTheLastComponentMayReachEof) {
  const Status s = CompositeLayout::validate(
      {component(0, k_extent_eof, 1 * k_mib, {1}), component(k_extent_eof, k_extent_eof, 1 * k_mib, {2})});
  EXPECT_TRUE(mentions(s, "components[0].extent_end")) << s.message();
}

TEST(CompositeLayoutValidation, ExtentEndMustBeAMultipleOfItsChunkSize) {
  const Status s = CompositeLayout::validate({component(0, 6 * k_mib, 4 * k_mib, {1})});
  EXPECT_TRUE(mentions(s, "components[0].extent_end")) << s.message();
  EXPECT_TRUE(mentions(s, "chunk_bytes")) << s.message();
  EXPECT_TRUE(CompositeLayout::validate({component(0, 8 * k_mib, 4 * k_mib, {1})}).ok());
}

TEST(CompositeLayoutValidation, RejectsFiniteEndPastLargestFileOffset) {
  const std::uint64_t end = (k_max_file_bytes / (64 * k_kib) + 1) * 64 * k_kib;
  const Status s = CompositeLayout::validate({component(0, end, 64 * k_kib, {1})});
  EXPECT_TRUE(mentions(s, "largest file offset")) << s.message();
}

TEST(CompositeLayoutValidation, RejectsTooManyComponents) {
  std::vector<LayoutComponent> components;
  for (std::uint64_t i = 0; i <= k_max_layout_components; ++i) {
    components.push_back(component(i * k_mib, (i + 1) * k_mib, 64 * k_kib, {1}));
  }
  const Status s = CompositeLayout::validate(components);
  EXPECT_TRUE(mentions(s, "k_max_layout_components")) << s.message();
}

// ---- the map ----------------------------------------------------------------------------

TEST(CompositeMap, FileOffsetModeFeedsAbsoluteOffsetsToTheComponentLikeLustre) {
  const CompositeLayout layout = make(pfl_example(), ComponentObjectOffsets::file_offset);
  // 1 MiB opens component 1; lov_stripe_offset divides the absolute offset by
  // the 16 MiB stripe width, so it lands 1 MiB into stripe 0's object.
  Result<ComponentLocation> at_1m = layout.locate(1 * k_mib);
  ASSERT_TRUE(at_1m.ok());
  EXPECT_EQ(at_1m->component_index, 1u);
  EXPECT_EQ(at_1m->location, (StripeLocation{0, 0, 0, 20, 1 * k_mib, 1 * k_mib}));
  EXPECT_EQ(layout.locate(4 * k_mib)->location, (StripeLocation{1, 0, 1, 21, 0, 0}));
  EXPECT_EQ(layout.locate(16 * k_mib + 3)->location, (StripeLocation{4, 1, 0, 20, 3, 4 * k_mib + 3}));
  EXPECT_EQ(layout.locate(64 * k_mib)->component_index, 2u);
  // Component 2 has 8 stripes of 4 MiB: 64 MiB is chunk 16, stripe set 2.
  EXPECT_EQ(layout.locate(64 * k_mib)->location, (StripeLocation{16, 2, 0, 30, 0, 8 * k_mib}));
  EXPECT_EQ(layout.locate(5)->location, (StripeLocation{0, 0, 0, 10, 5, 5}));
}

TEST(CompositeMap, ComponentOffsetModeStartsEachComponentsObjectsAtZero) {
  const CompositeLayout layout = make(pfl_example(), ComponentObjectOffsets::component_offset);
  EXPECT_EQ(layout.locate(1 * k_mib)->location, (StripeLocation{0, 0, 0, 20, 0, 0}));
  EXPECT_EQ(layout.locate(5 * k_mib)->location, (StripeLocation{1, 0, 1, 21, 0, 0}));
  EXPECT_EQ(layout.locate(64 * k_mib + 4 * k_mib + 1)->location, (StripeLocation{1, 0, 1, 31, 1, 1}));
  EXPECT_EQ(layout.file_offset_of(1, 1, 0), 5 * k_mib);
}

TEST(CompositeMap, OffsetsPastTheLastExtentAreErrors) {
  const CompositeLayout layout =
      make({component(0, 1 * k_mib, 1 * k_mib, {1}), component(1 * k_mib, 8 * k_mib, 1 * k_mib, {2, 3})},
           ComponentObjectOffsets::file_offset);
  EXPECT_EQ(layout.end_bytes(), 8 * k_mib);
  EXPECT_TRUE(layout.locate(8 * k_mib - 1).ok());
  EXPECT_EQ(layout.locate(8 * k_mib).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(layout.map_range(7 * k_mib, 2 * k_mib).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(layout.map_range(k_max_file_bytes, 1).status().code(), StatusCode::invalid_argument);
  EXPECT_TRUE(layout.map_range(7 * k_mib, 1 * k_mib).ok());
}

TEST(CompositeMap, PlainLayoutMapsExactlyLikeItsPattern) {
  const StripePattern p = lustre_pattern(128 * k_kib, {4, 5, 6});
  const CompositeLayout layout = CompositeLayout::plain(p);
  EXPECT_EQ(layout.end_bytes(), k_extent_eof);
  Rng rng(3);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t off = rng.uniform(k_tib);
    const Result<ComponentLocation> loc = layout.locate(off);
    ASSERT_TRUE(loc.ok());
    EXPECT_EQ(loc->component_index, 0u);
    EXPECT_EQ(loc->location, p.locate(off));
  }
  EXPECT_EQ(*layout.map_range(100, 1 * k_mib), *p.map_range(100, 1 * k_mib));
}

TEST(CompositeMap, RangeMapRejectsTooManyPieces) {
  const CompositeLayout layout = CompositeLayout::plain(lustre_pattern(64 * k_kib, {1}));
  const Result<std::vector<StripePiece>> r = layout.map_range(0, (k_max_pieces_per_map + 1) * 64 * k_kib);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.status(), "k_max_pieces_per_map")) << r.status().message();
  EXPECT_TRUE(layout.map_range(0, 0)->empty());
}

class CompositeMapProperty : public ::testing::TestWithParam<ComponentObjectOffsets> {};

TEST_P(CompositeMapProperty, EveryByteMapsToExactlyOneComponentObjectByte) {
  // Each component has its own objects, so an object is named by (component,
  // target position); no two bytes may share (object, object offset).
  Rng rng(GetParam() == ComponentObjectOffsets::file_offset ? 91 : 92);
  for (int round = 0; round < 20; ++round) {
    const CompositeLayout layout = random_layout(rng, GetParam());
    const std::uint64_t limit = std::min<std::uint64_t>(layout.end_bytes(), 1 * k_mib + 300 * k_kib);
    const std::uint64_t file_size = 1 + rng.uniform(limit);
    const auto sizes = layout.object_sizes(file_size);
    const Result<std::uint64_t> back = layout.file_size_from_object_sizes(sizes);
    ASSERT_TRUE(back.ok()) << back.status().to_string() << " " << layout.to_string();
    ASSERT_EQ(*back, file_size) << layout.to_string();

    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<bool>> used;
    for (std::uint64_t b = 0; b < file_size; ++b) {
      const Result<ComponentLocation> loc = layout.locate(b);
      ASSERT_TRUE(loc.ok());
      const LayoutComponent& c = layout.components()[loc->component_index];
      ASSERT_GE(b, c.extent_start);
      ASSERT_LT(b, c.extent_end);
      const std::uint32_t pos = loc->location.target_position;
      ASSERT_LT(loc->location.object_offset, sizes[loc->component_index][pos]) << layout.to_string() << " " << b;
      std::vector<bool>& bytes = used[{loc->component_index, pos}];
      if (bytes.empty()) bytes.assign(sizes[loc->component_index][pos], false);
      ASSERT_FALSE(bytes[loc->location.object_offset]) << layout.to_string() << " byte " << b << " collides";
      bytes[loc->location.object_offset] = true;
      ASSERT_EQ(layout.file_offset_of(loc->component_index, pos, loc->location.object_offset), b);
    }
  }
}

TEST_P(CompositeMapProperty, PiecesNeverCrossChunkOrComponentBoundariesAndTileTheRange) {
  Rng rng(GetParam() == ComponentObjectOffsets::file_offset ? 7 : 8);
  for (int round = 0; round < 200; ++round) {
    const CompositeLayout layout = random_layout(rng, GetParam());
    const std::uint64_t limit = std::min<std::uint64_t>(layout.end_bytes(), 4 * k_mib);
    const std::uint64_t off = rng.uniform(limit);
    const std::uint64_t len = 1 + rng.uniform(limit - off);
    const Result<std::vector<StripePiece>> pieces = layout.map_range(off, len);
    ASSERT_TRUE(pieces.ok()) << pieces.status().to_string();
    std::uint64_t next = off;
    for (const StripePiece& piece : *pieces) {
      ASSERT_EQ(piece.file_offset, next);
      ASSERT_GT(piece.length, 0u);
      const LayoutComponent& c = layout.components()[piece.component_index];
      ASSERT_GE(piece.file_offset, c.extent_start);
      ASSERT_LE(piece.file_offset + piece.length, c.extent_end) << "piece crosses a component boundary";
      const Result<ComponentLocation> first = layout.locate(piece.file_offset);
      const Result<ComponentLocation> last = layout.locate(piece.file_offset + piece.length - 1);
      ASSERT_EQ(first->component_index, piece.component_index);
      ASSERT_EQ(first->location.chunk_index, last->location.chunk_index) << "piece crosses a chunk boundary";
      ASSERT_EQ(piece.chunk_index, first->location.chunk_index);
      ASSERT_EQ(piece.target, first->location.target);
      ASSERT_EQ(piece.target_position, first->location.target_position);
      ASSERT_EQ(piece.object_offset, first->location.object_offset);
      ASSERT_EQ(last->location.object_offset, piece.object_offset + piece.length - 1);
      next += piece.length;
    }
    ASSERT_EQ(next, off + len);
  }
}

INSTANTIATE_TEST_SUITE_P(BothOffsetModes, CompositeMapProperty,
                         ::testing::Values(ComponentObjectOffsets::file_offset,
                                           ComponentObjectOffsets::component_offset));

// ---- object sizes ------------------------------------------------------------------------

std::vector<LayoutComponent> three_components() {
  return {component(0, 1 * k_mib, 1 * k_mib, {1}), component(1 * k_mib, 9 * k_mib, 1 * k_mib, {2, 3}),
          component(9 * k_mib, k_extent_eof, 1 * k_mib, {4, 5})};
}

TEST(CompositeObjectSizes, FileOffsetModeCountsTheLeadingHoleOfLaterComponents) {
  const CompositeLayout layout = make(three_components(), ComponentObjectOffsets::file_offset);
  // Component 1 holds [1M, 3.5M): chunk 1 -> stripe 1 [0,1M), chunk 2 -> stripe 0
  // [1M,2M) (after a 1 MiB hole), half of chunk 3 -> stripe 1 [1M,1.5M).
  const std::uint64_t size = 3 * k_mib + 512 * k_kib;
  const std::vector<std::vector<std::uint64_t>> expected = {{1 * k_mib}, {2 * k_mib, 1 * k_mib + 512 * k_kib}, {0, 0}};
  EXPECT_EQ(layout.object_sizes(size), expected);
  EXPECT_EQ(*layout.file_size_from_object_sizes(expected), size);
  // At 1.5M only stripe 1 of component 1 holds data; stripe 0 is untouched.
  const std::vector<std::vector<std::uint64_t>> early = {{1 * k_mib}, {0, 512 * k_kib}, {0, 0}};
  EXPECT_EQ(layout.object_sizes(1 * k_mib + 512 * k_kib), early);
}

TEST(CompositeObjectSizes, ComponentOffsetModeHasNoHoles) {
  const CompositeLayout layout = make(three_components(), ComponentObjectOffsets::component_offset);
  const std::uint64_t size = 3 * k_mib + 512 * k_kib;
  const std::vector<std::vector<std::uint64_t>> expected = {{1 * k_mib}, {1 * k_mib + 512 * k_kib, 1 * k_mib}, {0, 0}};
  EXPECT_EQ(layout.object_sizes(size), expected);
  EXPECT_EQ(*layout.file_size_from_object_sizes(expected), size);
  const std::uint64_t big = 10 * k_mib + 7;
  EXPECT_EQ(*layout.file_size_from_object_sizes(layout.object_sizes(big)), big);
}

TEST(CompositeObjectSizes, FileSizeFromObjectSizesRejectsInconsistentInput) {
  const CompositeLayout layout = make(three_components(), ComponentObjectOffsets::file_offset);
  EXPECT_EQ(layout.file_size_from_object_sizes({{1}}).status().code(), StatusCode::invalid_argument);
  const Result<std::uint64_t> outside = layout.file_size_from_object_sizes({{2 * k_mib}, {0, 0}, {0, 0}});
  ASSERT_FALSE(outside.ok());
  EXPECT_TRUE(mentions(outside.status(), "components[0]")) << outside.status().message();
  const Result<std::uint64_t> wrong_count = layout.file_size_from_object_sizes({{1}, {1}, {0, 0}});
  ASSERT_FALSE(wrong_count.ok());
  EXPECT_TRUE(mentions(wrong_count.status(), "components[1]")) << wrong_count.status().message();
  // A component-1 object that only reaches below the component's start.
  EXPECT_FALSE(layout.file_size_from_object_sizes({{0}, {512 * k_kib, 0}, {0, 0}}).ok());
}

TEST(CompositeLayout, ToStringListsExtentsAndPatterns) {
  const CompositeLayout layout =
      make({component(0, 1 * k_mib, 1 * k_mib, {1}), component(1 * k_mib, k_extent_eof, 1 * k_mib, {2})},
           ComponentObjectOffsets::file_offset);
  EXPECT_EQ(layout.to_string(),
            "composite/file_offset{[0, 1048576) raid0/lustre chunk=1048576 targets=[1]; "
            "[1048576, EOF) raid0/lustre chunk=1048576 targets=[2]}");
  EXPECT_EQ(layout.object_offsets(), ComponentObjectOffsets::file_offset);
}

}  // namespace
}  // namespace sluice
