// Limits shared by the workload drivers' configurations, and the check that
// names the field a bad value came from. The limits keep a mistyped scenario
// parameter from allocating without bound or queueing billions of callbacks;
// they sit well above what the seed studies need (docs/seeds.md: 128 threads per
// node, 12,800 files per test, 64 MiB files, 1 MiB stream buffers).
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

// Operations one rank keeps in flight (elbencho --threads, DLIO read_threads).
inline constexpr std::uint64_t k_workload_max_inflight = 4096;
// One I/O call (elbencho --block, a stream buffer, a checkpoint write call).
inline constexpr std::uint64_t k_workload_max_block_bytes = 1 * k_gib;
// Files, entries or objects one rank handles in one phase.
inline constexpr std::uint64_t k_workload_max_items_per_rank = 100'000'000;
// Bytes one rank writes or reads in one phase (a checkpoint shard, a stream).
inline constexpr std::uint64_t k_workload_max_bytes_per_rank = 64 * k_tib;

// A run tag becomes part of barrier names, which travel in a name field of at
// most 255 bytes (proto k_max_name_bytes) next to the workload and phase names.
inline constexpr std::size_t k_workload_max_run_tag_bytes = 128;

// The fields every workload config ends with (core/common/field_info.hpp):
// the data pattern (where it has one), the run tag and the barrier wait.
template <class V>
void pattern_fields(V& v, bool& pattern_data, std::uint64_t& pattern_seed) {
  v("pattern_data", pattern_data, plain("writes carry a seeded pattern, reads verify it", k_script_field));
  v("pattern_seed", pattern_seed,
    count_of("seed", 0, k_field_max_unbounded, "seed of the data pattern", k_script_field));
}
template <class V, class Config>
void workload_tail_fields(V& v, Config& c) {
  v("run_tag", c.run_tag,
    FieldInfo{FieldUnit::plain, "characters", 0, k_workload_max_run_tag_bytes, "makes barrier names unique across runs",
              k_script_field});
  v("barrier_max_wait_ns", c.barrier_max_wait_ns,
    duration_in(0, k_field_max_unbounded, "longest wait at a barrier between phases", k_script_field));
}

// ok if lo <= value <= hi, else invalid_argument "<where>: <field> = v not in lo..hi".
inline Status check_limit(const std::string& where, const char* field, std::uint64_t value, std::uint64_t lo,
                          std::uint64_t hi) {
  if (value >= lo && value <= hi) return ok_status();
  return error(StatusCode::invalid_argument, where + ": " + field + " = " + std::to_string(value) + " not in " +
                                                 std::to_string(lo) + ".." + std::to_string(hi));
}

inline Status check_run_tag(const std::string& where, const std::string& run_tag) {
  if (run_tag.size() <= k_workload_max_run_tag_bytes) return ok_status();
  return error(StatusCode::invalid_argument, where + ": run_tag of " + std::to_string(run_tag.size()) +
                                                 " bytes, at most " + std::to_string(k_workload_max_run_tag_bytes));
}

}  // namespace sluice
