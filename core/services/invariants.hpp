// The services' state-machine invariants, one check per family, each called
// where its state changes. They are functions (not inline SLUICE_ASSERTs) so
// that tests/core/services/invariants_test.cpp can show each one aborting
// with its message when violated, which the services' public API cannot do.
// SLUICE_ASSERT (core/common/assert.hpp) runs in every build type.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/common/ids.hpp"

namespace sluice::invariants {

// Metadata buddy mirroring, the primary (meta_mirror.cpp): while a stream
// exists (epoch != 0) its log holds exactly the records sent and not yet
// acknowledged: acked + log_records + 1 == next (the next sequence to give).
void mirror_log(std::uint64_t epoch, std::uint64_t acked, std::size_t log_records, std::uint64_t next);
// The primary: an acknowledgement covers only records it gave sequences to.
void mirror_ack(std::uint64_t end_sequence, std::uint64_t next);
// The secondary: records are applied in sequence order, each once.
void mirror_apply(std::uint64_t applied, std::uint64_t sequence);

// A metadata server's kept replies (MetaStore::keep_reply) are the seqs
// oldest .. next - 1, at most `max` of them.
void kept_replies(std::uint64_t oldest, std::uint64_t next, std::size_t max);

// Cluster maps a server applies (after it ignored older answers) never go
// back to an older version.
void maps_version(std::uint64_t applied, std::uint64_t accepted);

// RPC (rpc.cpp): a call is answered exactly once: when it finishes its
// reply callback is still there (not moved out by an earlier answer).
void reply_once(bool callback_present, RequestId id);

// The client (client.cpp): chunk requests in flight stay within
// [0, max_inflight_chunks]; `delta` is the change about to be made (+1, -1).
void inflight_chunks(std::uint32_t inflight, int delta, std::uint32_t max);

}  // namespace sluice::invariants
