// Everything a service needs to speak sluice's wire protocol, in one include:
// the Message variant and its structs (wire_message.hpp and the per-service
// message headers), the shared descriptions (wire_descs.hpp), the wire enums
// (wire_enums.hpp) and the limits (wire_limits.hpp). Turning messages into
// bytes and back is codec.hpp; checksums are crc32c.hpp.
#pragma once

#include "core/proto/message_type.hpp"
#include "core/proto/meta_messages.hpp"
#include "core/proto/meta_mirror_messages.hpp"
#include "core/proto/mgmt_messages.hpp"
#include "core/proto/storage_messages.hpp"
#include "core/proto/wire_descs.hpp"
#include "core/proto/wire_enums.hpp"
#include "core/proto/wire_limits.hpp"
#include "core/proto/wire_message.hpp"
