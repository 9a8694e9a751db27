#include "core/namespace/dir_placement.hpp"

#include <algorithm>

namespace sluice {

std::string_view to_string(MetaPolicy policy) {
  switch (policy) {
    case MetaPolicy::dir_owner: return "dir_owner";
    case MetaPolicy::striped_dir: return "striped_dir";
    case MetaPolicy::path_hash: return "path_hash";
  }
  return "unknown";
}

std::string_view to_string(DirHashKind kind) {
  switch (kind) {
    case DirHashKind::none: return "none";
    case DirHashKind::fnv_1a_64: return "fnv_1a_64";
    case DirHashKind::crush: return "crush";
    case DirHashKind::rendezvous: return "rendezvous";
  }
  return "unknown";
}

std::string DirPlacement::to_string() const {
  std::string s(sluice::to_string(policy));
  s += ' ';
  s += sluice::to_string(hash_kind);
  s += " owner=" + std::to_string(owner_shard);
  s += " shards=" + std::to_string(shard_count);
  s += " gen=" + std::to_string(split_generation);
  s += " stripes=[";
  for (std::size_t i = 0; i < stripe_shards.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(stripe_shards[i]);
  }
  s += ']';
  return s;
}

namespace {

Status placement_error(const DirPlacement& p, const std::string& problem) {
  return error(StatusCode::invalid_argument, "dir placement {" + p.to_string() + "}: " + problem);
}

}  // namespace

Status validate_placement(const DirPlacement& p) {
  if (p.shard_count == 0) return placement_error(p, "shard_count is 0");
  if (p.shard_count > k_shard_count_max) {
    return placement_error(p, "shard_count exceeds k_shard_count_max " + std::to_string(k_shard_count_max));
  }
  if (p.owner_shard >= p.shard_count) {
    return placement_error(p, "owner_shard " + std::to_string(p.owner_shard) + " is not below shard_count");
  }
  switch (p.policy) {
    case MetaPolicy::dir_owner:
      if (p.hash_kind != DirHashKind::none) return placement_error(p, "dir_owner needs hash_kind none");
      if (p.stripe_shards.size() != 1 || p.stripe_shards[0] != p.owner_shard) {
        return placement_error(p, "dir_owner needs stripe_shards == {owner_shard}");
      }
      if (p.split_generation != 0) return placement_error(p, "dir_owner directories never split");
      return ok_status();
    case MetaPolicy::striped_dir: {
      if (p.hash_kind != DirHashKind::fnv_1a_64 && p.hash_kind != DirHashKind::crush &&
          p.hash_kind != DirHashKind::rendezvous) {
        return placement_error(p, "striped_dir needs hash_kind fnv_1a_64, crush or rendezvous");
      }
      if (p.stripe_shards.empty()) return placement_error(p, "striped_dir has no stripes");
      if (p.stripe_shards.size() > k_dir_stripes_max) {
        return placement_error(p, std::to_string(p.stripe_shards.size()) + " stripes exceed k_dir_stripes_max " +
                                      std::to_string(k_dir_stripes_max));
      }
      if (p.stripe_shards.size() > p.shard_count) {
        return placement_error(p, "more stripes than shards");
      }
      if (p.stripe_shards[0] != p.owner_shard) {
        return placement_error(p, "stripe 0 is not on owner_shard");
      }
      std::vector<ShardId> sorted = p.stripe_shards;
      std::sort(sorted.begin(), sorted.end());
      if (sorted.back() >= p.shard_count) {
        return placement_error(p, "stripe shard " + std::to_string(sorted.back()) + " is not below shard_count");
      }
      if (const auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
        return placement_error(p, "shard " + std::to_string(*dup) + " holds two stripes");
      }
      return ok_status();
    }
    case MetaPolicy::path_hash:
      if (p.hash_kind != DirHashKind::fnv_1a_64) {
        return placement_error(p, "path_hash needs hash_kind fnv_1a_64");
      }
      if (!p.stripe_shards.empty()) return placement_error(p, "path_hash keeps stripe_shards empty");
      if (p.split_generation != 0) return placement_error(p, "path_hash directories never split");
      return ok_status();
  }
  return placement_error(p, "unknown policy " + std::to_string(static_cast<int>(p.policy)));
}

}  // namespace sluice
