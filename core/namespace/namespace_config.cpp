#include "core/namespace/namespace_config.hpp"

#include <algorithm>

namespace sluice {

std::string_view to_string(MkdirShardRule rule) {
  switch (rule) {
    case MkdirShardRule::with_entry: return "with_entry";
    case MkdirShardRule::random: return "random";
    case MkdirShardRule::random_near_root: return "random_near_root";
  }
  return "unknown";
}

std::string_view to_string(SplitShardRule rule) {
  switch (rule) {
    case SplitShardRule::round_robin: return "round_robin";
    case SplitShardRule::random: return "random";
  }
  return "unknown";
}

namespace {

Status config_error(const std::string& problem) {
  return error(StatusCode::invalid_argument, "namespace config: " + problem);
}

}  // namespace

Status validate_config(const NamespaceConfig& c) {
  if (c.policy != MetaPolicy::dir_owner && c.policy != MetaPolicy::striped_dir && c.policy != MetaPolicy::path_hash) {
    return config_error("unknown policy " + std::to_string(static_cast<int>(c.policy)));
  }
  if (c.shard_count == 0) return config_error("shard_count is 0 (need at least one metadata shard)");
  if (c.shard_count > k_shard_count_max) {
    return config_error("shard_count " + std::to_string(c.shard_count) + " exceeds k_shard_count_max " +
                        std::to_string(k_shard_count_max));
  }
  if (c.policy != MetaPolicy::path_hash && c.root_shard >= c.shard_count) {
    return config_error("root_shard " + std::to_string(c.root_shard) + " is not below shard_count " +
                        std::to_string(c.shard_count));
  }
  if (c.policy != MetaPolicy::striped_dir) return ok_status();

  if (c.dir_hash != DirHashKind::fnv_1a_64 && c.dir_hash != DirHashKind::crush &&
      c.dir_hash != DirHashKind::rendezvous) {
    return config_error("dir_hash must be fnv_1a_64, crush or rendezvous for striped_dir, not " +
                        std::string(to_string(c.dir_hash)));
  }
  if (c.dir_stripes_max == 0 || c.dir_stripes_max > k_dir_stripes_max) {
    return config_error("dir_stripes_max " + std::to_string(c.dir_stripes_max) + " is not in 1..k_dir_stripes_max " +
                        std::to_string(k_dir_stripes_max));
  }
  const std::uint32_t stripes_max = std::min(c.shard_count, c.dir_stripes_max);
  if (c.dir_stripe_count == 0) return config_error("dir_stripe_count is 0 (a directory needs a stripe)");
  if (c.dir_stripe_count > stripes_max) {
    return config_error("dir_stripe_count " + std::to_string(c.dir_stripe_count) +
                        " exceeds min(shard_count, dir_stripes_max) " + std::to_string(stripes_max));
  }
  if (c.mkdir_rule != MkdirShardRule::with_entry && c.mkdir_rule != MkdirShardRule::random &&
      c.mkdir_rule != MkdirShardRule::random_near_root) {
    return config_error("unknown mkdir_rule " + std::to_string(static_cast<int>(c.mkdir_rule)));
  }
  if (c.split_rule != SplitShardRule::round_robin && c.split_rule != SplitShardRule::random) {
    return config_error("unknown split_rule " + std::to_string(static_cast<int>(c.split_rule)));
  }
  if (c.dir_split_count == 0) return config_error("dir_split_count is 0 (every directory would split)");
  if (c.dir_split_delta == 0) return config_error("dir_split_delta is 0 (a split would add no stripe)");
  return ok_status();
}

}  // namespace sluice
