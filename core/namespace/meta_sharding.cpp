#include "core/namespace/meta_sharding.hpp"

#include <algorithm>
#include "core/common/assert.hpp"
#include <string>
#include <utility>

#include "core/namespace/fs_path.hpp"
#include "core/namespace/name_hash.hpp"

namespace sluice {

namespace {

Status sharding_error(std::string_view where, const std::string& problem) {
  return error(StatusCode::invalid_argument, std::string(where) + ": " + problem);
}

// Stripes on `count` consecutive shards in ring order from `start`.
std::vector<ShardId> consecutive_shards(ShardId start, std::uint32_t count, std::uint32_t shard_count) {
  std::vector<ShardId> shards;
  shards.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    shards.push_back(static_cast<ShardId>((std::uint64_t{start} + i) % shard_count));
  }
  return shards;
}

[[maybe_unused]] bool valid(const DirPlacement& p) { return validate_placement(p).ok(); }

// The part of validate_placement that the hot lookups rely on, cheap enough
// to assert on every call (the full check sorts the stripes).
[[maybe_unused]] bool lookup_safe(const DirPlacement& p) {
  if (p.shard_count == 0) return false;
  switch (p.policy) {
    case MetaPolicy::dir_owner: return p.stripe_shards.size() == 1;
    case MetaPolicy::striped_dir: return !p.stripe_shards.empty();
    case MetaPolicy::path_hash: return true;
  }
  return false;
}

// An invalid_argument error of place_new_directory.
Status placement_error(const std::string& problem) { return sharding_error("place_new_directory", problem); }

// The start shard of a new striped_dir directory when the options name none:
// config.mkdir_rule picks a random shard or the shard of its entry in the parent.
// A parent placed when there were fewer shards still maps inside the current
// range; with fewer shards now it may not (shrinking is not supported), which
// place_striped reports.
ShardId striped_start_shard(const DirPlacement& parent, std::string_view path, const PathSplit& where,
                            const NamespaceConfig& config, Rng& rng) {
  const bool spread =
      config.mkdir_rule == MkdirShardRule::random ||
      (config.mkdir_rule == MkdirShardRule::random_near_root && path_depth(path) <= config.mkdir_spread_depth_max);
  return spread ? static_cast<ShardId>(rng.uniform(config.shard_count))
                : shard_for_entry(parent, where.parent, where.name);
}

// place_new_directory under striped_dir: `dir` (policy and shard_count set) gets its stripes.
Result<DirPlacement> place_striped(DirPlacement dir, const DirPlacement& parent, std::string_view path,
                                   const PathSplit& where, const NamespaceConfig& config, Rng& rng,
                                   const MkdirOptions& options) {
  const std::uint32_t stripes_max = std::min(config.shard_count, config.dir_stripes_max);
  const std::uint32_t count = options.stripe_count == 0 ? config.dir_stripe_count : options.stripe_count;
  if (count > stripes_max) {
    return placement_error("stripe_count " + std::to_string(count) + " for " + std::string(path) +
                           " exceeds min(shard_count, dir_stripes_max) " + std::to_string(stripes_max));
  }
  ShardId start = options.start_shard;
  if (start == k_no_id) start = striped_start_shard(parent, path, where, config, rng);
  if (start >= config.shard_count) {
    return placement_error("start shard " + std::to_string(start) + " for " + std::string(path) +
                           " is not below shard_count " + std::to_string(config.shard_count));
  }
  dir.hash_kind = config.dir_hash;
  dir.owner_shard = start;
  dir.stripe_shards = consecutive_shards(start, count, config.shard_count);
  return dir;
}

// place_new_directory under path_hash: `dir` (policy and shard_count set) gets its owner.
Result<DirPlacement> place_path_hashed(DirPlacement dir, const DirPlacement& parent, std::string_view path,
                                       const NamespaceConfig& config) {
  if (parent.shard_count != config.shard_count) {
    return placement_error("parent of " + std::string(path) + " was hashed over " + std::to_string(parent.shard_count) +
                           " shards but config has " + std::to_string(config.shard_count) +
                           " (path_hash cannot reshard)");
  }
  dir.hash_kind = DirHashKind::fnv_1a_64;
  dir.owner_shard = path_hash_shard(path, config.shard_count);
  return dir;
}

}  // namespace

ShardId path_hash_shard(std::string_view path, std::uint32_t shard_count) {
  SLUICE_ASSERT(shard_count > 0);
  return static_cast<ShardId>(fnv_1a_64(path) % shard_count);
}

bool resolution_walks_path(MetaPolicy policy) { return policy != MetaPolicy::path_hash; }

std::uint32_t stripe_index_for_name(DirHashKind kind, std::string_view name, std::uint32_t stripe_count) {
  SLUICE_ASSERT(stripe_count > 0);
  switch (kind) {
    case DirHashKind::fnv_1a_64: return stripe_index_fnv_1a_64(name, stripe_count);
    case DirHashKind::crush: return stripe_index_crush(name, stripe_count);
    case DirHashKind::rendezvous: return stripe_index_rendezvous(name, stripe_count);
    case DirHashKind::none: return 0;
  }
  return 0;
}

Result<DirPlacement> root_placement(const NamespaceConfig& config) {
  if (Status s = validate_config(config); !s.ok()) return s;
  DirPlacement root;
  root.policy = config.policy;
  root.shard_count = config.shard_count;
  switch (config.policy) {
    case MetaPolicy::dir_owner:
      root.hash_kind = DirHashKind::none;
      root.owner_shard = config.root_shard;
      root.stripe_shards = {config.root_shard};
      break;
    case MetaPolicy::striped_dir:
      root.hash_kind = config.dir_hash;
      root.owner_shard = config.root_shard;
      root.stripe_shards = consecutive_shards(config.root_shard, config.dir_stripe_count, config.shard_count);
      break;
    case MetaPolicy::path_hash:
      root.hash_kind = DirHashKind::fnv_1a_64;
      root.owner_shard = path_hash_shard("/", config.shard_count);
      break;
  }
  return root;
}

Result<DirPlacement> place_new_directory(const DirPlacement& parent, std::string_view path,
                                         const NamespaceConfig& config, Rng& rng, const MkdirOptions& options) {
  if (Status s = validate_config(config); !s.ok()) return s;
  SLUICE_ASSERT(valid(parent));
  const Result<PathSplit> where = split_path(path);
  if (!where.ok()) return where.status();
  if (parent.policy != config.policy) {
    return placement_error("parent of " + std::string(path) + " has policy " + std::string(to_string(parent.policy)) +
                           " but config has " + std::string(to_string(config.policy)));
  }
  const bool default_options = options.stripe_count == 0 && options.start_shard == k_no_id;
  if (config.policy != MetaPolicy::striped_dir && !default_options) {
    return placement_error("stripe_count/start_shard options need policy striped_dir, not " +
                           std::string(to_string(config.policy)));
  }

  DirPlacement dir;
  dir.policy = config.policy;
  dir.shard_count = config.shard_count;
  switch (config.policy) {
    case MetaPolicy::dir_owner: {
      dir.hash_kind = DirHashKind::none;
      dir.owner_shard = static_cast<ShardId>(rng.uniform(config.shard_count));
      dir.stripe_shards = {dir.owner_shard};
      return dir;
    }
    case MetaPolicy::striped_dir: return place_striped(std::move(dir), parent, path, *where, config, rng, options);
    case MetaPolicy::path_hash: return place_path_hashed(std::move(dir), parent, path, config);
  }
  return placement_error("unknown policy");
}

ShardId shard_for_entry(const DirPlacement& parent, std::string_view parent_path, std::string_view name) {
  SLUICE_ASSERT(lookup_safe(parent));
  switch (parent.policy) {
    case MetaPolicy::dir_owner: return parent.owner_shard;
    case MetaPolicy::striped_dir: {
      const auto stripes = static_cast<std::uint32_t>(parent.stripe_shards.size());
      return parent.stripe_shards[stripe_index_for_name(parent.hash_kind, name, stripes)];
    }
    case MetaPolicy::path_hash: {
      // fnv_1a_64(join_path(parent_path, name)) without building the string.
      std::uint64_t h = fnv_1a_64(parent_path);
      if (parent_path.empty() || parent_path.back() != '/') h = fnv_1a_64_extend(h, "/");
      h = fnv_1a_64_extend(h, name);
      return static_cast<ShardId>(h % parent.shard_count);
    }
  }
  SLUICE_ASSERT_MSG(false, "shard_for_entry: unknown policy");
  return k_no_id;
}

std::vector<ShardId> shards_for_listing(const DirPlacement& dir) {
  SLUICE_ASSERT(lookup_safe(dir));
  if (dir.policy != MetaPolicy::path_hash) return dir.stripe_shards;
  std::vector<ShardId> all(dir.shard_count);
  for (std::uint32_t i = 0; i < dir.shard_count; ++i) all[i] = i;
  return all;
}

std::uint32_t stripe_count_after_split(const DirPlacement& dir, const NamespaceConfig& config) {
  const auto stripes = static_cast<std::uint32_t>(dir.stripe_shards.size());
  if (dir.policy != MetaPolicy::striped_dir) return stripes;
  // Lustre mdt_auto_split: min(lmv_stripe_count + dir_split_delta, MDT count),
  // where a plain directory has lmv_stripe_count 0.
  const std::uint64_t base = stripes == 1 ? 0 : stripes;
  const std::uint64_t cap = std::min(config.shard_count, config.dir_stripes_max);
  const std::uint64_t grown = std::min(base + config.dir_split_delta, cap);
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(grown, stripes));
}

bool needs_split(const DirPlacement& dir, std::uint64_t stripe_entries, const NamespaceConfig& config) {
  if (dir.policy != MetaPolicy::striped_dir || !config.dir_auto_split) return false;
  if (!validate_config(config).ok()) return false;
  if (stripe_entries <= config.dir_split_count) return false;
  return stripe_count_after_split(dir, config) > dir.stripe_shards.size();
}

Result<DirPlacement> split(const DirPlacement& dir, const NamespaceConfig& config, Rng& rng) {
  constexpr std::string_view k_where = "split";
  if (Status s = validate_config(config); !s.ok()) return s;
  SLUICE_ASSERT(valid(dir));
  if (dir.policy != MetaPolicy::striped_dir) {
    return sharding_error(k_where, "only striped_dir directories split, not " + std::string(to_string(dir.policy)));
  }
  if (config.policy != MetaPolicy::striped_dir) {
    return sharding_error(k_where, "config policy is " + std::string(to_string(config.policy)) + ", not striped_dir");
  }
  for (const ShardId s : dir.stripe_shards) {
    if (s >= config.shard_count) {
      return sharding_error(k_where, "stripe on shard " + std::to_string(s) + " but config has only " +
                                         std::to_string(config.shard_count) + " shards");
    }
  }
  const std::uint32_t target = stripe_count_after_split(dir, config);
  if (target <= dir.stripe_shards.size()) {
    return sharding_error(k_where, "directory {" + dir.to_string() + "} cannot grow: already " +
                                       std::to_string(dir.stripe_shards.size()) +
                                       " stripes of at most min(shard_count, dir_stripes_max)");
  }

  std::vector<bool> used(config.shard_count, false);
  for (const ShardId s : dir.stripe_shards) used[s] = true;
  DirPlacement grown = dir;
  grown.shard_count = config.shard_count;
  grown.split_generation = dir.split_generation + 1;
  const std::uint32_t adding = target - static_cast<std::uint32_t>(dir.stripe_shards.size());

  if (config.split_rule == SplitShardRule::round_robin) {
    ShardId next = static_cast<ShardId>((std::uint64_t{dir.stripe_shards.back()} + 1) % config.shard_count);
    for (std::uint32_t added = 0; added < adding; next = (next + 1) % config.shard_count) {
      if (used[next]) continue;
      used[next] = true;
      grown.stripe_shards.push_back(next);
      ++added;
    }
  } else {
    std::vector<ShardId> free_shards;
    free_shards.reserve(config.shard_count - dir.stripe_shards.size());
    for (ShardId s = 0; s < config.shard_count; ++s) {
      if (!used[s]) free_shards.push_back(s);
    }
    // Partial Fisher-Yates: each new stripe a uniform draw from the shards left.
    for (std::uint32_t i = 0; i < adding; ++i) {
      const auto pick = i + static_cast<std::size_t>(rng.uniform(free_shards.size() - i));
      std::swap(free_shards[i], free_shards[pick]);
      grown.stripe_shards.push_back(free_shards[i]);
    }
  }
  return grown;
}

std::optional<EntryMove> entry_move_on_split(const DirPlacement& before, const DirPlacement& after,
                                             std::string_view parent_path, std::string_view name) {
  const ShardId from = shard_for_entry(before, parent_path, name);
  const ShardId to = shard_for_entry(after, parent_path, name);
  if (from == to) return std::nullopt;
  return EntryMove{from, to};
}

}  // namespace sluice
