// Name hashes used to place metadata: FNV-1a 64 and the CRUSH-like
// placement-group straw of Lustre striped directories.
//
// Contract: pure functions of their arguments, the same on every platform,
// compiler and standard library, forever. Placement is persisted (a
// directory's entries sit where these functions put them), so changing any
// output here silently loses entries of existing file systems; the golden
// values in tests/core/namespace/name_hash_test.cpp guard against that.
//
// Why not std::hash: GekkoFS places metadata with std::hash<std::string> of
// the path (src/global/rpc/distributor.cpp, SimpleHashDistributor::
// locate_file_metadata: str_hash(path) % hosts_size). std::hash is
// implementation-defined (libstdc++ uses murmur2, libc++ cityhash, and either
// may change between releases), so a client built with one library and a
// server built with another would disagree about where a path lives. We use
// FNV-1a 64, which is fully specified.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

// FNV-1a 64 (Fowler/Noll/Vo; http://www.isthe.com/chongo/tech/comp/fnv/):
// for each byte: hash ^= byte; hash *= prime. Constants as Lustre's
// LUSTRE_FNV_1A_64_OFFSET_BIAS / LUSTRE_FNV_1A_64_PRIME (lustre_idl.h /
// lustre_user.h, lustre_hash_fnv_1a_64()).
inline constexpr std::uint64_t k_fnv_1a_64_offset_basis = 0xCBF29CE484222325ULL;
inline constexpr std::uint64_t k_fnv_1a_64_prime = 0x100000001B3ULL;

std::uint64_t fnv_1a_64(std::string_view bytes);
// Continues a hash over more bytes: fnv_1a_64_extend(fnv_1a_64(a), b) ==
// fnv_1a_64(a + b). Lets callers hash "parent/name" without building it.
std::uint64_t fnv_1a_64_extend(std::uint64_t hash, std::string_view bytes);

// Lustre LMV_HASH_TYPE_FNV_1A_64 (lustre_lmv.h, lmv_hash_fnv1a()): the stripe
// of a name is fnv_1a_64(name) mod stripe_count. Changing stripe_count from n
// to n+1 moves about n/(n+1) of the names. stripe_count must be > 0.
std::uint32_t stripe_index_fnv_1a_64(std::string_view name, std::uint32_t stripe_count);

// Placement groups of the CRUSH-like hash. Lustre LMV_CRUSH_PG_COUNT is 4096
// (lustre_user.h): names are first hashed into one of 4096 groups, and whole
// groups are placed on stripes. Balance over stripes is therefore that of
// 4096 balls in stripe_count bins (about +-sqrt(4096/n)/(4096/n) per stripe),
// coarser than per-name hashing, and a split moves whole groups.
inline constexpr std::uint32_t k_crush_pg_count = 4096;

// The placement group of a name: fnv_1a_64(name) mod k_crush_pg_count.
std::uint32_t crush_pg_of_name(std::string_view name);

// The straw length of placement group `pg` on stripe `stripe_index`.
// A 64-bit finaliser (the SplitMix64 output mix of Steele, Lea & Flood,
// OOPSLA 2014; Stafford's "Mix13" constants) applied to (pg, stripe_index)
// packed into one word and multiplied by an odd constant. Both steps are
// bijections of 64-bit words, so two stripes of one group never draw equal
// straws and the winner is unique.
std::uint64_t crush_straw(std::uint32_t pg, std::uint32_t stripe_index);

// Lustre LMV_HASH_TYPE_CRUSH (lustre_lmv.h, lmv_hash_crush()): the stripe of
// a name is the stripe with the longest straw for the name's placement group
// (rendezvous / highest-random-weight hashing, Thaler & Ravishankar 1998; the
// equal-weight case of CRUSH straw2, Weil et al. SC'06). Because a stripe's
// straw does not depend on how many stripes there are, growing from n to n+1
// stripes moves exactly the groups whose straw on the new stripe beats all
// old straws: about 1/(n+1) of the names, all of them onto the new stripe,
// and none between old stripes. Lustre's version uses Jenkins' 32-bit
// crush_hash() for the straw and keeps rsync/dstripe temporary names
// (".name.XXXXXX") on their target's stripe; we use crush_straw() above and
// do not special-case temporary names. stripe_count must be > 0.
// Cost: O(stripe_count) per name.
std::uint32_t stripe_index_crush(std::string_view name, std::uint32_t stripe_count);

// Rendezvous hashing per name, without placement groups (sluice's own kind,
// DirHashKind::rendezvous): the stripe with the longest
// rendezvous_straw(fnv_1a_64(name), stripe). Same minimal movement as
// stripe_index_crush (growing n -> n+1 stripes moves ~1/(n+1) of the names,
// all onto the new stripe), but names rather than 4096 groups are the unit,
// so balance is that of per-name hashing: over 100,000 names on 16 stripes
// the fullest stripe holds ~6% more than the emptiest (the spread of a
// multinomial), against ~30% with 4096 groups. Cost: O(stripe_count) per name.
std::uint64_t rendezvous_straw(std::uint64_t name_hash, std::uint32_t stripe_index);
std::uint32_t stripe_index_rendezvous(std::string_view name, std::uint32_t stripe_count);

}  // namespace sluice
