// The channel count of a drive (SimProfile disk_channels) from measured
// points: `sluice calibrate --estimate-channels` (make bench-f4, issue 22 F4).
//
// The count is an integer, which the Levenberg-Marquardt fit (profile_fit.hpp)
// cannot move, so it is estimated before the fit from the fit points alone
// (never the held-out ones): the smallest blocks' throughput at three queue
// depths d1 < d2 < d3 (4 KiB at 1, 8 and 64 in lua_scripts/calibrate_disk.lua).
//
// The model (docs/sim.md, "Disk model"): a request spends a time L off the
// drive (latencies, sluice's own path) and a time T on one of c channels,
// a small request on one channel picked by where it lands. A closed loop of
// q requests is then a queueing network of one delay and c queues each
// visited with probability 1/c; mean-value analysis gives its throughput
// X(q). For each c, T and L are set so that X(d1) and X(d3) are the
// measured rates; X(d2) is then the model's prediction. The estimate is the
// c whose worst prediction over the phases is closest, among the c that
// need L >= 0 in every phase (a drive with more channels would need a
// negative time off the drive to be that slow alone).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_record.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

// Channel counts tried (1 .. this).
inline constexpr std::uint32_t k_max_estimated_channels = 64;
// Queue depths a point may name (the analysis is a loop over the depth).
inline constexpr std::uint64_t k_max_estimated_depth = 1 << 16;

// Throughput (requests/s) of `depth` requests in a closed loop, each spending
// delay_s off the drive and service_s on one of `channels` channels picked at
// random (exact mean-value analysis).
double closed_loop_ops_per_s(std::uint32_t channels, double service_s, double delay_s, std::uint32_t depth);

struct ChannelCandidate {
  std::uint32_t channels = 0;
  double service_s = 0;            // T: time on a channel per request
  double delay_s = 0;              // L: time off the drive per request
  double predicted_ops_per_s = 0;  // X(d2)
  double rel_error = 0;            // (X(d2) - measured) / measured
};

struct ChannelPhase {
  std::string phase;
  std::array<std::uint32_t, 3> depths{};     // d1 < d2 < d3
  std::array<double, 3> ops_per_s{};         // measured, median over the points at each depth
  std::vector<ChannelCandidate> candidates;  // the counts that need no L < 0, ascending
};

struct ChannelEstimate {
  std::uint64_t block_bytes = 0;  // the block size used (the smallest measured)
  std::uint32_t channels = 0;
  double worst_rel_error = 0;  // of the estimate, over the phases
  std::vector<ChannelPhase> phases;
};

// From `measured` (runs whose params name their block size and depth:
// block_param, depth_param, integers) and their `phases`' ops_per_s.
// invalid_argument naming the run or phase when a parameter is missing or not
// a positive integer, when the smallest block has fewer than three depths for
// a phase, or when no count fits every phase.
Result<ChannelEstimate> estimate_disk_channels(const std::vector<RunRecord>& measured, const std::string& block_param,
                                               const std::string& depth_param, const std::vector<std::string>& phases);

// The fit points' design, checked before anything is measured (`points`
// need only their label and params): each names its block size and depth as
// estimate_disk_channels reads them, and the smallest block is at three
// depths or more. invalid_argument naming the run or the block otherwise.
Status check_channel_design(const std::vector<RunRecord>& points, const std::string& block_param,
                            const std::string& depth_param);

// The estimate as text: each phase's rates and candidates, then the count.
std::string describe(const ChannelEstimate& estimate);

}  // namespace sluice::analysis
