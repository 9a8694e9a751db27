#include "scenarios/lua/peak_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/common/assert.hpp"
#include "core/workloads/workload_limits.hpp"
#include "scenarios/lua/field_tables.hpp"
#include "scenarios/lua/script_units.hpp"

namespace sluice::scenario {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Write calls one rank issues per checkpoint: its shard split over its files
// (the last file takes the rest), each file in blocks (checkpoint_burst.cpp).
std::uint64_t checkpoint_blocks(const CheckpointConfig& c) {
  const std::uint64_t even = c.shard_bytes / c.files_per_rank;
  const std::uint64_t last = c.shard_bytes - even * (c.files_per_rank - 1);
  return (c.files_per_rank - 1) * ceil_div(even, c.block_bytes) + ceil_div(last, c.block_bytes);
}

// The workload's bulk phases in run order, its axis and its value; throws for workloads without one.
std::vector<std::string> read_workload(const ScriptObject& w, const WorkloadSpec& built, PeakPlan& plan) {
  std::vector<std::string> bulk;
  std::string axis;
  if (const auto* sweep = std::get_if<FileSweepConfig>(&built.config)) {
    if (plan.axis == "iodepth") {
      // Blocks in flight per file: the files, and so the bytes, stay as given.
      axis = "iodepth";
      plan.start = sweep->iodepth;
      plan.blocks_per_file = sweep->block_bytes == 0 ? 0 : ceil_div(sweep->file_bytes, sweep->block_bytes);
      plan.inflight_factor = sweep->threads;
    } else {
      axis = "threads";
      plan.start = sweep->threads;
      plan.files_per_rank = sweep->files_per_rank;
      plan.inflight_factor = sweep->iodepth;
    }
    for (SweepPhase p : sweep->phases) {
      if (p == SweepPhase::write || p == SweepPhase::read) bulk.push_back(name_of(sweep_phase_names(), p));
    }
  } else if (const auto* burst = std::get_if<CheckpointConfig>(&built.config)) {
    axis = "inflight_blocks";
    plan.start = burst->inflight_blocks;
    plan.blocks_per_rank = checkpoint_blocks(*burst);
    bulk = {"write"};
    if (burst->read_back) bulk.push_back("read");
  } else {
    throw ScriptError(
        "sl.peak: run.workload: sl.peak raises a file_sweep's threads or iodepth or a checkpoint_burst's "
        "inflight_blocks, not a " +
        w.type + "'s concurrency");
  }
  if (plan.axis != axis) {
    const std::string axes = axis == "inflight_blocks" ? axis : "threads or iodepth";
    throw ScriptError("sl.peak: axis: " + w.type + " has no concurrency \"" + plan.axis + "\"; its axes: " + axes);
  }
  return bulk;
}

}  // namespace

const std::vector<std::string>& peak_axes() {
  static const std::vector<std::string> k{"threads", "iodepth", "inflight_blocks"};
  return k;
}

PeakPlan plan_peak(const ScriptObject& workload, const WorkloadSpec& built, const std::string& axis,
                   const std::string& phase) {
  PeakPlan plan;
  plan.axis = axis;
  plan.workload_type = workload.type;
  plan.workload = built.label;
  const std::vector<std::string> bulk = read_workload(workload, built, plan);
  if (bulk.empty()) {
    throw ScriptError("sl.peak: run.workload: this " + workload.type +
                      " has no write or read phase: a peak is a rate of bytes");
  }
  plan.phase = phase.empty() ? bulk.front() : phase;
  if (std::find(bulk.begin(), bulk.end(), plan.phase) == bulk.end()) {
    const std::string near = closest_name(plan.phase, bulk);
    throw ScriptError("sl.peak: phase: \"" + plan.phase + "\" is not a bulk phase of this " + workload.type +
                      " (its bulk phases: " + join_names(bulk) + ")" +
                      (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }
  if (plan.axis == "threads" && plan.files_per_rank < plan.start) {
    throw ScriptError("sl.peak: run.workload: threads = " + std::to_string(plan.start) +
                      " but files_per_rank = " + std::to_string(plan.files_per_rank) +
                      ": a rank cannot keep more files in flight than it has; give files_per_rank >= threads");
  }
  return plan;
}

std::uint64_t peak_value(const PeakPlan& plan, std::uint64_t step) {
  std::uint64_t v = plan.start;
  for (std::uint64_t i = 0; i < step; ++i) v *= k_peak_step_factor;
  return v;
}

std::string peak_stop(const PeakPlan& plan, std::uint64_t step) {
  const std::uint64_t factor = peak_value(plan, step) / plan.start;
  const std::string value = plan.axis + "=" + std::to_string(peak_value(plan, step));
  const std::uint64_t inflight = peak_value(plan, step) * plan.inflight_factor;
  if (inflight > k_workload_max_inflight) {
    const std::string limit = "the limit of " + std::to_string(k_workload_max_inflight);
    if (plan.inflight_factor == 1) return value + " would pass " + limit + " operations in flight per rank";
    // file_sweep: threads x iodepth blocks in flight, the other axis as built.
    return value + " with " + (plan.axis == "iodepth" ? "threads=" : "iodepth=") +
           std::to_string(plan.inflight_factor) + " puts " + std::to_string(inflight) +
           " operations in flight per rank, past " + limit;
  }
  if (plan.blocks_per_file > 0 && peak_value(plan, step) > plan.blocks_per_file) {
    return value + " would pass the " + std::to_string(plan.blocks_per_file) +
           " blocks of a file (blocks in flight beyond them cannot be used)";
  }
  if (plan.files_per_rank > 0 && plan.files_per_rank * factor > k_workload_max_items_per_rank) {
    return value + " needs files_per_rank=" + std::to_string(plan.files_per_rank * factor) + ", past its limit of " +
           std::to_string(k_workload_max_items_per_rank);
  }
  if (plan.blocks_per_rank > 0 && peak_value(plan, step) > plan.blocks_per_rank) {
    return value + " would pass the " + std::to_string(plan.blocks_per_rank) +
           " blocks of a rank's shard (writes in flight beyond them cannot be used)";
  }
  return "";
}

std::shared_ptr<const ScriptObject> peak_workload(const ScriptObject& workload, const PeakPlan& plan,
                                                  std::uint64_t step, std::map<std::string, std::string>& params) {
  auto out = std::make_shared<ScriptObject>(workload);
  const std::uint64_t value = peak_value(plan, step);
  out->args.fields[plan.axis] = ScriptValue{static_cast<std::int64_t>(value)};
  params[plan.axis] = std::to_string(value);
  if (plan.files_per_rank > 0) {
    const std::uint64_t files = plan.files_per_rank * (value / plan.start);
    out->args.fields.erase("files");  // files of all ranks: replaced by the per-rank count
    out->args.fields["files_per_rank"] = ScriptValue{static_cast<std::int64_t>(files)};
    params["files_per_rank"] = std::to_string(files);
  }
  return out;
}

std::uint64_t LargestPassing::next() const {
  SLUICE_ASSERT_MSG(!done(), "LargestPassing::next after the search ended");
  if (doubling_) return std::min(pass_ == 0 ? 1 : pass_ * k_peak_step_factor, max_);
  return pass_ + (fail_ - pass_) / 2;
}

void LargestPassing::record(std::uint64_t count, bool passed) {
  SLUICE_ASSERT_MSG(count > pass_ && count < fail_, "LargestPassing: a count outside the open interval");
  if (passed) {
    pass_ = count;
  } else {
    fail_ = count;
    doubling_ = false;
  }
}

bool peak_flat(double before, double after) { return after < before * (1.0 + k_peak_min_growth); }

std::string of_bound_text(double bytes_per_s, double bound_bytes_per_s) {
  if (!std::isfinite(bytes_per_s) || !std::isfinite(bound_bytes_per_s) || bound_bytes_per_s <= 0) return "";
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, "%.2f", bytes_per_s / bound_bytes_per_s);
  return std::string(fraction) + " of bound " + format_rate(bound_bytes_per_s);
}

}  // namespace sluice::scenario
