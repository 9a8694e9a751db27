#include "core/services/wire_convert.hpp"

namespace sluice {

proto::DirLayoutDesc to_wire(const DirPlacement& placement) {
  proto::DirLayoutDesc d;
  switch (placement.policy) {
    case MetaPolicy::dir_owner: d.policy = proto::DirPolicy::owner; break;
    case MetaPolicy::striped_dir: d.policy = proto::DirPolicy::hashed_striped; break;
    case MetaPolicy::path_hash: d.policy = proto::DirPolicy::full_path_hash; break;
  }
  switch (placement.hash_kind) {
    case DirHashKind::none: d.hash_kind = proto::HashKind::none; break;
    case DirHashKind::fnv_1a_64: d.hash_kind = proto::HashKind::fnv_1a_64; break;
    case DirHashKind::crush: d.hash_kind = proto::HashKind::crush; break;
    case DirHashKind::rendezvous: d.hash_kind = proto::HashKind::rendezvous; break;
  }
  d.owner = placement.owner_shard;
  d.stripes.assign(placement.stripe_shards.begin(), placement.stripe_shards.end());
  d.split_generation = placement.split_generation;
  return d;
}

DirPlacement from_wire(const proto::DirLayoutDesc& desc, std::uint32_t shard_count) {
  DirPlacement p;
  switch (desc.policy) {
    case proto::DirPolicy::owner: p.policy = MetaPolicy::dir_owner; break;
    case proto::DirPolicy::hashed_striped: p.policy = MetaPolicy::striped_dir; break;
    case proto::DirPolicy::full_path_hash: p.policy = MetaPolicy::path_hash; break;
  }
  switch (desc.hash_kind) {
    case proto::HashKind::none:
    case proto::HashKind::all_chars: p.hash_kind = DirHashKind::none; break;
    case proto::HashKind::fnv_1a_64: p.hash_kind = DirHashKind::fnv_1a_64; break;
    case proto::HashKind::crush: p.hash_kind = DirHashKind::crush; break;
    case proto::HashKind::rendezvous: p.hash_kind = DirHashKind::rendezvous; break;
  }
  p.owner_shard = desc.owner;
  p.shard_count = shard_count;
  p.split_generation = desc.split_generation;
  p.stripe_shards.assign(desc.stripes.begin(), desc.stripes.end());
  return p;
}

proto::StripeDesc to_wire(const StripePattern& pattern) {
  proto::StripeDesc d;
  d.pattern = pattern.buddy_mirrored() ? proto::StripePattern::buddy_mirror : proto::StripePattern::raid0;
  d.chunk_bytes = pattern.chunk_bytes();
  d.targets = pattern.targets();
  return d;
}

Result<StripePattern> from_wire(const proto::StripeDesc& desc, StripeFlavor flavor) {
  if (desc.pattern == proto::StripePattern::buddy_mirror)
    return StripePattern::buddy_mirror(desc.chunk_bytes, desc.targets);
  return StripePattern::raid0(flavor, desc.chunk_bytes, desc.targets);
}

TargetInfo from_wire(const proto::TargetInfoDesc& desc) {
  TargetInfo t;
  t.id = desc.target;
  t.node = desc.node;
  t.capacity_bytes = desc.capacity_bytes;
  t.free_bytes = desc.free_bytes;
  t.online = desc.reachability == proto::Reachability::online;
  return t;
}

ChooserKind from_wire(proto::ChooserKind kind) {
  switch (kind) {
    case proto::ChooserKind::server_default:
    case proto::ChooserKind::randomized: return ChooserKind::randomized;
    case proto::ChooserKind::round_robin: return ChooserKind::roundrobin;
    case proto::ChooserKind::random_robin: return ChooserKind::randomrobin;
    case proto::ChooserKind::random_inter_node: return ChooserKind::randominternode;
    case proto::ChooserKind::space_weighted_qos: return ChooserKind::lustre_qos;
  }
  return ChooserKind::randomized;
}

}  // namespace sluice
