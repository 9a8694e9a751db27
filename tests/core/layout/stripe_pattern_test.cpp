#include "core/layout/stripe_pattern.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <unordered_set>
#include <vector>

#include "core/common/rng.hpp"

namespace sluice {
namespace {

StripePattern make(StripeFlavor flavor, std::uint64_t chunk_bytes, std::vector<TargetId> targets) {
  Result<StripePattern> r = StripePattern::raid0(flavor, chunk_bytes, std::move(targets));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

bool mentions(const Status& s, std::string_view text) { return s.message().find(text) != std::string::npos; }

// A random valid pattern: either flavour, small chunks so files stay small.
StripePattern random_pattern(Rng& rng, std::uint32_t max_count) {
  const auto flavor = rng.uniform(2) == 0 ? StripeFlavor::beegfs : StripeFlavor::lustre;
  const std::uint64_t chunk =
      flavor == StripeFlavor::beegfs ? k_min_chunk_bytes << rng.uniform(4) : k_min_chunk_bytes * (1 + rng.uniform(12));
  const auto count = static_cast<std::uint32_t>(1 + rng.uniform(max_count));
  std::vector<TargetId> targets;
  std::unordered_set<TargetId> used;
  while (targets.size() < count) {
    const auto id = static_cast<TargetId>(rng.uniform(10000));
    if (used.insert(id).second) targets.push_back(id);
  }
  return make(flavor, chunk, targets);
}

// Sizes that hit the interesting edges of a pattern, plus random ones.
std::uint64_t random_file_size(Rng& rng, const StripePattern& p) {
  const std::uint64_t width = p.stripe_width_bytes();
  switch (rng.uniform(6)) {
    case 0: return rng.uniform(3);
    case 1: return p.chunk_bytes() * rng.uniform(3 * p.stripe_count() + 1);
    case 2: return width * (1 + rng.uniform(4)) - 1;
    case 3: return width * (1 + rng.uniform(4)) + 1;
    default: return rng.uniform(6 * width + 1);
  }
}

// ---- validation ----------------------------------------------------------------

TEST(StripePatternValidation, RejectsChunkBelowMinimumNamingTheField) {
  const Result<StripePattern> r = StripePattern::raid0(StripeFlavor::beegfs, 32 * k_kib, {1});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
  EXPECT_TRUE(mentions(r.status(), "chunk_bytes")) << r.status().message();
  EXPECT_FALSE(StripePattern::raid0(StripeFlavor::lustre, 32 * k_kib, {1}).ok());
}

TEST(StripePatternValidation, BeegfsNeedsPowerOfTwoWhereLustreNeedsMultipleOf64KiB) {
  const Status beegfs = StripePattern::validate(StripeFlavor::beegfs, 192 * k_kib, {1, 2});
  EXPECT_EQ(beegfs.code(), StatusCode::invalid_argument);
  EXPECT_TRUE(mentions(beegfs, "power of two")) << beegfs.message();
  EXPECT_TRUE(StripePattern::validate(StripeFlavor::lustre, 192 * k_kib, {1, 2}).ok());

  const Status lustre = StripePattern::validate(StripeFlavor::lustre, 100000 + 65536, {1});
  EXPECT_TRUE(mentions(lustre, "multiple of 65536")) << lustre.message();
  EXPECT_TRUE(StripePattern::validate(StripeFlavor::beegfs, 512 * k_kib, {1}).ok());
}

TEST(StripePatternValidation, RejectsChunkAboveTheFlavourMaximum) {
  EXPECT_TRUE(StripePattern::validate(StripeFlavor::beegfs, k_max_chunk_bytes_beegfs, {1}).ok());
  EXPECT_FALSE(StripePattern::validate(StripeFlavor::beegfs, 2 * k_max_chunk_bytes_beegfs, {1}).ok());
  EXPECT_TRUE(StripePattern::validate(StripeFlavor::lustre, k_max_chunk_bytes_lustre, {1}).ok());
  const Status s = StripePattern::validate(StripeFlavor::lustre, 4 * k_gib, {1});
  EXPECT_TRUE(mentions(s, "chunk_bytes") && mentions(s, "maximum")) << s.message();
}

TEST(StripePatternValidation, RejectsEmptyOrOversizedTargetLists) {
  const Status empty = StripePattern::validate(StripeFlavor::beegfs, 64 * k_kib, {});
  EXPECT_TRUE(mentions(empty, "stripe_count")) << empty.message();

  std::vector<TargetId> many(k_max_stripe_count);
  std::iota(many.begin(), many.end(), 0u);
  EXPECT_TRUE(StripePattern::validate(StripeFlavor::lustre, 64 * k_kib, many).ok());
  many.push_back(k_max_stripe_count);
  const Status too_many = StripePattern::validate(StripeFlavor::lustre, 64 * k_kib, many);
  EXPECT_TRUE(mentions(too_many, "stripe_count")) << too_many.message();
}

TEST(StripePatternValidation, RejectsRepeatedOrReservedTargetNamingItsPosition) {
  const Status repeated = StripePattern::validate(StripeFlavor::beegfs, 64 * k_kib, {4, 5, 4});
  EXPECT_TRUE(mentions(repeated, "targets[2]")) << repeated.message();
  const Status reserved = StripePattern::validate(StripeFlavor::beegfs, 64 * k_kib, {k_no_id});
  EXPECT_TRUE(mentions(reserved, "targets[0]")) << reserved.message();
}

// ---- the map -----------------------------------------------------------------------

TEST(StripeMap, MapsOffsetsOfTheFirstStripeSet) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {10, 11, 12});
  EXPECT_EQ(p.locate(0), (StripeLocation{0, 0, 0, 10, 0, 0}));
  EXPECT_EQ(p.locate(64 * k_kib - 1), (StripeLocation{0, 0, 0, 10, 64 * k_kib - 1, 64 * k_kib - 1}));
  EXPECT_EQ(p.locate(64 * k_kib), (StripeLocation{1, 0, 1, 11, 0, 0}));
  EXPECT_EQ(p.locate(130 * k_kib), (StripeLocation{2, 0, 2, 12, 2 * k_kib, 2 * k_kib}));
}

TEST(StripeMap, MapsOffsetAcrossStripeSetBoundary) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {10, 11, 12});
  const std::uint64_t width = 192 * k_kib;
  EXPECT_EQ(p.locate(width - 1), (StripeLocation{2, 0, 2, 12, 64 * k_kib - 1, 64 * k_kib - 1}));
  EXPECT_EQ(p.locate(width), (StripeLocation{3, 1, 0, 10, 0, 64 * k_kib}));
  EXPECT_EQ(p.locate(width + 5), (StripeLocation{3, 1, 0, 10, 5, 64 * k_kib + 5}));
  EXPECT_EQ(p.locate(5 * width + 64 * k_kib + 7), (StripeLocation{16, 5, 1, 11, 7, 5 * 64 * k_kib + 7}));
}

TEST(StripeMap, LustreAgreesWithLovStripeOffsetArithmetic) {
  // lov_offset.c: stripeno = (off % swidth) / ssize; obdoff = (off / swidth) *
  // ssize + (off % swidth - stripeno * ssize), written out independently here.
  const std::uint64_t ssize = 1 * k_mib;
  const StripePattern lustre = make(StripeFlavor::lustre, ssize, {3, 1, 4, 0});
  const StripePattern beegfs = make(StripeFlavor::beegfs, ssize, {3, 1, 4, 0});
  const std::uint64_t swidth = 4 * ssize;
  Rng rng(11);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t off = rng.uniform(64 * k_gib);
    const std::uint64_t stripeno = (off % swidth) / ssize;
    const std::uint64_t obdoff = (off / swidth) * ssize + (off % swidth - stripeno * ssize);
    const StripeLocation loc = lustre.locate(off);
    ASSERT_EQ(loc.target_position, stripeno) << off;
    ASSERT_EQ(loc.object_offset, obdoff) << off;
    ASSERT_EQ(loc, beegfs.locate(off)) << off;
  }
}

TEST(StripeMap, LustreChunkNeedNotBeAPowerOfTwo) {
  const std::uint64_t chunk = 192 * k_kib;
  const StripePattern p = make(StripeFlavor::lustre, chunk, {7, 8, 9});
  EXPECT_EQ(p.locate(3 * chunk + 1), (StripeLocation{3, 1, 0, 7, 1, chunk + 1}));
  EXPECT_EQ(p.locate(2 * chunk - 1), (StripeLocation{1, 0, 1, 8, chunk - 1, chunk - 1}));
  EXPECT_EQ(p.file_offset_of(1, chunk - 1), 2 * chunk - 1);
}

TEST(StripeMap, EveryByteOfSmallFilesMapsToExactlyOneObjectByte) {
  // Exhaustive over every byte: no two bytes share (target, object offset),
  // every object byte below the object's size is used, the inverse agrees.
  const std::vector<StripePattern> patterns = {
      make(StripeFlavor::beegfs, 64 * k_kib, {5}),
      make(StripeFlavor::beegfs, 64 * k_kib, {5, 6, 7}),
      make(StripeFlavor::lustre, 192 * k_kib, {9, 2}),
      make(StripeFlavor::beegfs, 128 * k_kib, {1, 2, 3, 4, 5}),
  };
  for (const StripePattern& p : patterns) {
    const std::uint64_t file_size = 2 * p.stripe_width_bytes() + p.chunk_bytes() + 12345;
    const std::vector<std::uint64_t> sizes = p.object_sizes(file_size);
    std::map<TargetId, std::vector<bool>> used;
    for (std::uint32_t pos = 0; pos < p.stripe_count(); ++pos) used[p.targets()[pos]].assign(sizes[pos], false);
    for (std::uint64_t b = 0; b < file_size; ++b) {
      const StripeLocation loc = p.locate(b);
      ASSERT_EQ(loc.target, p.targets()[loc.target_position]);
      std::vector<bool>& bytes = used[loc.target];
      ASSERT_LT(loc.object_offset, bytes.size()) << p.to_string() << " byte " << b;
      ASSERT_FALSE(bytes[loc.object_offset]) << p.to_string() << " byte " << b << " collides";
      bytes[loc.object_offset] = true;
      ASSERT_EQ(p.file_offset_of(loc.target_position, loc.object_offset), b);
    }
    for (const auto& [target, bytes] : used) {
      EXPECT_TRUE(std::all_of(bytes.begin(), bytes.end(), [](bool u) { return u; }))
          << p.to_string() << " target " << target << " has an unused object byte";
    }
  }
}

TEST(StripeMapProperty, MapIsABijectionForRandomPatternsAndFileSizes) {
  // locate has a left inverse (file_offset_of), so it is injective; it maps
  // [0, S) into the union of [0, object_size_i) and those sizes sum to S, so it
  // is onto as well. Check both facts on edge and random bytes of many patterns.
  Rng rng(2024);
  for (int round = 0; round < 300; ++round) {
    const StripePattern p = random_pattern(rng, round % 10 == 0 ? k_max_stripe_count : 16);
    const std::uint64_t file_size = random_file_size(rng, p);
    const std::vector<std::uint64_t> sizes = p.object_sizes(file_size);
    ASSERT_EQ(std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}), file_size) << p.to_string();
    const Result<std::uint64_t> back = p.file_size_from_object_sizes(sizes);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    ASSERT_EQ(*back, file_size) << p.to_string();
    if (file_size == 0) continue;

    std::vector<std::uint64_t> probes;
    for (std::uint64_t chunk = 0; chunk * p.chunk_bytes() < file_size && probes.size() < 400; ++chunk) {
      probes.push_back(chunk * p.chunk_bytes());
      probes.push_back(std::min(file_size, (chunk + 1) * p.chunk_bytes()) - 1);
    }
    for (int i = 0; i < 300; ++i) probes.push_back(rng.uniform(file_size));
    for (const std::uint64_t b : probes) {
      const StripeLocation loc = p.locate(b);
      ASSERT_LT(loc.target_position, p.stripe_count());
      ASSERT_EQ(loc.target, p.targets()[loc.target_position]);
      ASSERT_EQ(loc.chunk_index, b / p.chunk_bytes());
      ASSERT_EQ(loc.offset_in_chunk, b % p.chunk_bytes());
      ASSERT_LT(loc.object_offset, sizes[loc.target_position]) << p.to_string() << " size " << file_size;
      ASSERT_EQ(p.file_offset_of(loc.target_position, loc.object_offset), b) << p.to_string();
    }
  }
}

TEST(StripeMapProperty, PiecesOfRandomRangesReassembleTheFileExactly) {
  Rng rng(77);
  for (int round = 0; round < 40; ++round) {
    const StripePattern p = random_pattern(rng, 8);
    const std::uint64_t file_size = 1 + rng.uniform(3 * p.stripe_width_bytes() + p.chunk_bytes());
    std::vector<std::uint8_t> file(file_size);
    for (auto& byte : file) byte = static_cast<std::uint8_t>(rng.next_u64());
    const std::vector<std::uint64_t> sizes = p.object_sizes(file_size);
    std::vector<std::vector<std::uint8_t>> objects(p.stripe_count());
    std::vector<std::vector<std::uint8_t>> writes(p.stripe_count());
    for (std::uint32_t i = 0; i < p.stripe_count(); ++i) {
      objects[i].assign(sizes[i], 0);
      writes[i].assign(sizes[i], 0);
    }

    // Write the file through pieces of random ranges that tile it.
    std::uint64_t pos = 0;
    while (pos < file_size) {
      const std::uint64_t len = std::min(file_size - pos, 1 + rng.uniform(2 * p.stripe_width_bytes()));
      const Result<std::vector<StripePiece>> pieces = p.map_range(pos, len);
      ASSERT_TRUE(pieces.ok()) << pieces.status().to_string();
      std::uint64_t next = pos;
      for (const StripePiece& piece : *pieces) {
        ASSERT_EQ(piece.file_offset, next) << "pieces must be contiguous and in file order";
        ASSERT_GT(piece.length, 0u);
        ASSERT_EQ(piece.file_offset / p.chunk_bytes(), (piece.file_offset + piece.length - 1) / p.chunk_bytes())
            << "piece crosses a chunk boundary";
        const StripeLocation first = p.locate(piece.file_offset);
        ASSERT_EQ(piece.target, first.target);
        ASSERT_EQ(piece.target_position, first.target_position);
        ASSERT_EQ(piece.object_offset, first.object_offset);
        ASSERT_EQ(piece.chunk_index, first.chunk_index);
        ASSERT_EQ(piece.component_index, 0u);
        ASSERT_LE(piece.object_offset + piece.length, objects[piece.target_position].size());
        for (std::uint64_t k = 0; k < piece.length; ++k) {
          objects[piece.target_position][piece.object_offset + k] = file[piece.file_offset + k];
          ++writes[piece.target_position][piece.object_offset + k];
        }
        next += piece.length;
      }
      ASSERT_EQ(next, pos + len);
      pos += len;
    }
    for (const auto& w : writes) {
      ASSERT_TRUE(std::all_of(w.begin(), w.end(), [](std::uint8_t n) { return n == 1; }))
          << p.to_string() << ": an object byte was written zero or several times";
    }

    // Read random ranges back through pieces.
    for (int i = 0; i < 20; ++i) {
      const std::uint64_t off = rng.uniform(file_size);
      const std::uint64_t len = 1 + rng.uniform(file_size - off);
      const Result<std::vector<StripePiece>> pieces = p.map_range(off, len);
      ASSERT_TRUE(pieces.ok());
      std::vector<std::uint8_t> read;
      for (const StripePiece& piece : *pieces) {
        const auto& obj = objects[piece.target_position];
        read.insert(read.end(), obj.begin() + static_cast<std::ptrdiff_t>(piece.object_offset),
                    obj.begin() + static_cast<std::ptrdiff_t>(piece.object_offset + piece.length));
      }
      ASSERT_TRUE(std::equal(read.begin(), read.end(), file.begin() + static_cast<std::ptrdiff_t>(off),
                             file.begin() + static_cast<std::ptrdiff_t>(off + len)))
          << p.to_string() << " range " << off << "+" << len;
    }
  }
}

TEST(StripeMap, MapRangeSplitsAtChunkBoundaries) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {1, 2});
  const Result<std::vector<StripePiece>> pieces = p.map_range(60 * k_kib, 200 * k_kib);
  ASSERT_TRUE(pieces.ok());
  const std::vector<StripePiece> expected = {
      {60 * k_kib, 4 * k_kib, 1, 0, 60 * k_kib, 0, 0},   {64 * k_kib, 64 * k_kib, 2, 1, 0, 1, 0},
      {128 * k_kib, 64 * k_kib, 1, 0, 64 * k_kib, 2, 0}, {192 * k_kib, 64 * k_kib, 2, 1, 64 * k_kib, 3, 0},
      {256 * k_kib, 4 * k_kib, 1, 0, 128 * k_kib, 4, 0},
  };
  EXPECT_EQ(*pieces, expected);
}

TEST(StripeMap, MapRangeOfZeroLengthIsEmpty) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {1, 2});
  const Result<std::vector<StripePiece>> pieces = p.map_range(12345, 0);
  ASSERT_TRUE(pieces.ok());
  EXPECT_TRUE(pieces->empty());
}

TEST(StripeMap, MapRangeRejectsRangesPastTheLargestFileOffset) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {1, 2});
  EXPECT_EQ(p.map_range(k_max_file_bytes, 1).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(p.map_range(0xFFFFFFFFFFFFFFFFULL, 1).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(p.map_range(10, k_max_file_bytes).status().code(), StatusCode::invalid_argument);
  const Result<std::vector<StripePiece>> last = p.map_range(k_max_file_bytes - 1, 1);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->size(), 1u);
}

TEST(StripeMap, MapRangeRejectsRangesNeedingTooManyPieces) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {1, 2});
  const Result<std::vector<StripePiece>> r = p.map_range(1, (k_max_pieces_per_map)*64 * k_kib);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.status(), "k_max_pieces_per_map")) << r.status().message();
}

// ---- object sizes --------------------------------------------------------------------

TEST(ObjectSize, GivesEachChunkFileItsShareOfTheFile) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {1, 2, 3, 4});
  const std::vector<std::uint64_t> expected = {128 * k_kib, 64 * k_kib + 100, 64 * k_kib, 64 * k_kib};
  EXPECT_EQ(p.object_sizes(5 * 64 * k_kib + 100), expected);
  EXPECT_EQ(p.object_sizes(0), std::vector<std::uint64_t>(4, 0));
  EXPECT_EQ(p.object_size(1, 0), 1u);
  EXPECT_EQ(p.object_size(1, 1), 0u);
}

TEST(ObjectSize, FileSizeFromObjectSizesRoundTripsHugeFiles) {
  const StripePattern p = make(StripeFlavor::lustre, 4 * k_gib - 64 * k_kib, {1, 2, 3});
  for (const std::uint64_t size : {k_max_file_bytes, k_max_file_bytes - 1, std::uint64_t{1} << 62}) {
    const Result<std::uint64_t> back = p.file_size_from_object_sizes(p.object_sizes(size));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(*back, size);
  }
}

TEST(ObjectSize, FileSizeFromObjectSizesRejectsWrongCountOrImpossibleSizes) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {1, 2, 3});
  EXPECT_EQ(p.file_size_from_object_sizes({1, 2}).status().code(), StatusCode::invalid_argument);
  const Result<std::uint64_t> huge = p.file_size_from_object_sizes({0, k_max_file_bytes, 0});
  ASSERT_FALSE(huge.ok());
  EXPECT_TRUE(mentions(huge.status(), "object_sizes[1]")) << huge.status().message();
  // Position 2 cannot be as large as position 0 of a largest-size file.
  const std::uint64_t pos0_max = p.object_size(k_max_file_bytes, 0);
  EXPECT_FALSE(p.file_size_from_object_sizes({0, 0, pos0_max}).ok());
}

TEST(ObjectSize, FileSizeIsSetByTheFurthestObject) {
  const StripePattern p = make(StripeFlavor::beegfs, 64 * k_kib, {1, 2});
  // Object 1 holding one byte means the file reaches into chunk 1.
  const Result<std::uint64_t> size = p.file_size_from_object_sizes({64 * k_kib, 1});
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 64 * k_kib + 1);
}

// ---- buddy mirror --------------------------------------------------------------------

TEST(BuddyMirrorPattern, MapsGroupsLikeRaid0AndSaysItIsMirrored) {
  const Result<StripePattern> mirrored = StripePattern::buddy_mirror(256 * k_kib, {7, 8, 9});
  ASSERT_TRUE(mirrored.ok()) << mirrored.status().to_string();
  const StripePattern plain = make(StripeFlavor::beegfs, 256 * k_kib, {7, 8, 9});
  EXPECT_TRUE(mirrored->buddy_mirrored());
  EXPECT_FALSE(plain.buddy_mirrored());
  EXPECT_EQ(mirrored->flavor(), StripeFlavor::beegfs);
  EXPECT_NE(*mirrored, plain);
  Rng rng(5);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t off = rng.uniform(16 * k_gib);
    EXPECT_EQ(mirrored->locate(off), plain.locate(off));
  }
  EXPECT_EQ(mirrored->locate(256 * k_kib).target, GroupId{8});
}

TEST(BuddyMirrorPattern, FollowsBeegfsRulesAndSaysSoOnError) {
  const Result<StripePattern> r = StripePattern::buddy_mirror(192 * k_kib, {1, 2});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.status(), "buddy-mirrored")) << r.status().message();
  EXPECT_TRUE(mentions(r.status(), "chunk_bytes")) << r.status().message();
}

TEST(StripePattern, ToStringNamesKindFlavourChunkAndTargets) {
  EXPECT_EQ(make(StripeFlavor::lustre, 1 * k_mib, {3, 1}).to_string(), "raid0/lustre chunk=1048576 targets=[3,1]");
  const Result<StripePattern> m = StripePattern::buddy_mirror(64 * k_kib, {2});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->to_string(), "buddymirror/beegfs chunk=65536 groups=[2]");
  EXPECT_EQ(to_string(StripeFlavor::beegfs), "beegfs");
}

}  // namespace
}  // namespace sluice
