// MdBench: the mdtest-like metadata benchmark (mdtest in the IOR repository,
// src/mdtest.c: file create/stat/removal phases over "-n" items per task, in
// one shared directory or, with -u, a unique directory per task), plus the
// `ls -l` storm of docs/seeds.md#metadata-storm: every rank lists one large
// directory with attributes and stats every entry (1 M entries = 1 M stats).
//
// Directories: <root>/shared (shared_dir) or <root>/r<rank> (private).
// Rank 0 creates <root> (and the shared directory) before the first barrier;
// each rank creates its private directory; all of these tolerate
// already_exists. Item i of rank r is <dir>/f<r>.<i>. Phases run in the order
// listed, with a barrier before each and one after the last:
//   create    create every item (an empty file)                ops = items
//   stat      stat every item; must be a file                  ops = items
//   readdir   list the rank's directory (the shared one: all ranks' items)
//             ops = 1 listing; readdir.entries counts the entries
//   ls_storm  readdir with attributes of storm_dir, then stat every entry,
//             `threads` stats in flight                         ops = 1 + entries
//   link      a second name for every item, <dir>/l<r>.<i> (a hard link)
//                                                              ops = items
//   rename    every item to <dir>/m<r>.<i>, or back when it was renamed
//             before (one directory: rename within a shard)   ops = items
//   remove    unlink every item (and its link)                 ops = items
// Phases after a rename use the item's new name. When this run created the
// items, readdir and ls_storm check the entry count exactly (files_per_rank,
// or ranks x files_per_rank when shared; twice that once the items are linked).
// After the last barrier, with a remove phase, each rank removes its private
// directory and rank 0 the shared directory and <root> (remove_dirs).
//
// Metrics: md_bench.<phase>.ops, .op_latency_ns, .elapsed_ns (bytes stay 0),
// md_bench.<phase>.entries for readdir and ls_storm.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/workloads/barrier_service.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "core/workloads/workload.hpp"
#include "core/workloads/workload_steps.hpp"
#include "core/common/field_info.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

enum class MdPhase : std::uint8_t { create, stat, readdir, ls_storm, remove, link, rename };
// "create", "stat", "readdir", "ls_storm", "remove", "link", "rename"
std::string_view to_string(MdPhase phase);

struct MdBenchConfig {
  std::string root_dir = "/mdtest";
  bool shared_dir = true;              // mdtest default; false = mdtest -u (one directory per rank)
  std::uint64_t files_per_rank = 100;  // mdtest -n, 0..k_workload_max_items_per_rank
  std::uint32_t threads = 8;           // metadata ops in flight per rank, 1..k_workload_max_inflight
  std::vector<MdPhase> phases = {MdPhase::create, MdPhase::stat, MdPhase::readdir, MdPhase::remove};
  std::string storm_dir;    // "": the shared directory (private: rank 0's directory)
  bool remove_dirs = true;  // remove the run's directories after a remove phase
  CreateOptions create;
  std::string run_tag;  // makes barrier names unique across runs
  TimeNs barrier_max_wait_ns = k_barrier_max_wait_ns;
};

// Its fields, one description each (core/common/field_info.hpp). Scripts
// also write files (all ranks' files, split): scenarios/lua/spec_builders.cpp.
template <class V>
void fields(V& v, MdBenchConfig& c) {
  constexpr bool s = k_script_field;
  v("root_dir", c.root_dir, plain("directory the benchmark works in", s));
  v("shared_dir", c.shared_dir, plain("one directory for all ranks (mdtest), else one per rank (mdtest -u)", s));
  v("files_per_rank", c.files_per_rank,
    count_of("files", 0, k_workload_max_items_per_rank, "files each rank creates (mdtest -n)", s));
  v("threads", c.threads,
    count_of("operations", 1, k_workload_max_inflight, "metadata operations in flight per rank", s));
  v("phases", c.phases,
    plain("the phases, in order (ls_storm: readdir with attributes, then a stat per entry; link: a hard link per "
          "item; rename: every item to a new name in its directory, or back)",
          s));
  v("storm_dir", c.storm_dir, plain("directory ls_storm lists (empty: the shared directory)", s));
  v("remove_dirs", c.remove_dirs, plain("remove the run's directories after a remove phase", s));
  v("create", c.create, plain("stripe settings of the files"));
  workload_tail_fields(v, c);
}

class MdBench final : public Workload {
 public:
  explicit MdBench(MdBenchConfig config) : config_(std::move(config)) {}

  static Status validate(const MdBenchConfig& config);

  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "md_bench"; }

  const std::vector<RankPhaseResult>& results() const { return results_; }
  // Entries the last ls_storm listing returned (0 before one ran).
  std::uint64_t storm_entries() const { return storm_entries_; }

  std::string dir_of(std::uint32_t rank) const;
  // Item `index` of `rank` as created (f<r>.<i>), its link (l<r>.<i>) and its
  // renamed name (m<r>.<i>).
  std::string item_path(std::uint32_t rank, std::uint64_t index) const;
  std::string link_path(std::uint32_t rank, std::uint64_t index) const;
  std::string renamed_path(std::uint32_t rank, std::uint64_t index) const;
  std::string storm_dir() const;

 private:
  bool has_phase(MdPhase phase) const;
  void setup(StatusFn done);
  void teardown(StatusFn done);
  void run_phase(MdPhase phase, StatusFn done);
  void phase_body(MdPhase phase, StatusFn done);
  void item_op(MdPhase phase, std::uint64_t index, StatusFn done);
  void ls_storm(StatusFn done);
  std::uint64_t expected_entries() const;
  std::string barrier_name(std::string_view what) const;

  MdBenchConfig config_;
  WorkloadContext* ctx_ = nullptr;
  std::unique_ptr<PhaseRecorder> recorder_;
  std::vector<RankPhaseResult> results_;
  std::uint64_t storm_entries_ = 0;
  bool linked_ = false;   // a link phase ran (and no remove since)
  bool renamed_ = false;  // the items are at renamed_path
};

}  // namespace sluice
