// Conversions between the core's domain types and their wire descriptions.
// The wire enums (core/proto/wire_enums.hpp) are kept apart from the domain
// enums so that proto depends on nothing but core/common; these functions are
// the one place where the two meet.
#pragma once

#include "core/layout/stripe_pattern.hpp"
#include "core/layout/target_info.hpp"
#include "core/namespace/dir_placement.hpp"
#include "core/namespace/namespace_config.hpp"
#include "core/proto/wire_message.hpp"

namespace sluice {

proto::DirLayoutDesc to_wire(const DirPlacement& placement);
// shard_count comes from the namespace configuration (the wire carries stripes only).
DirPlacement from_wire(const proto::DirLayoutDesc& desc, std::uint32_t shard_count);

proto::StripeDesc to_wire(const StripePattern& pattern);
Result<StripePattern> from_wire(const proto::StripeDesc& desc, StripeFlavor flavor);

TargetInfo from_wire(const proto::TargetInfoDesc& desc);
// server_default must be resolved by the caller first; it maps to randomized.
ChooserKind from_wire(proto::ChooserKind kind);

}  // namespace sluice
