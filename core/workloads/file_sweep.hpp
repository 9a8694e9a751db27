// FileSweep: the elbencho-like file benchmark (elbencho README and
// `elbencho --help-all`; docs/seeds.md#beeond-for-cosmoflow-on-azure measured
// BeeOND with it: 1..128 threads per node, 256 KiB..64 MiB files, 12,800 files
// per test).
//
// Each rank runs the configured phases in the order listed, with a barrier
// before each phase and one after the last (elbencho's master starts every
// phase on all hosts at once):
//   mkdir   mkdir <root>/r<rank>, then its dirs_per_rank subdirectories d<j>
//   write   per file: create, write file_bytes in block_bytes calls (started
//           in file order, `iodepth` blocks in flight per file, as an
//           elbencho I/O thread with --iodepth: 1 is one call after the
//           other), close with the size once every block is written
//   read    per file: stat (the open), read every block (`iodepth` in flight,
//           as the write), verify the pattern, close (Client::close_unchanged: one metadata request, as elbencho's
//           close() is one on BeeGFS)
//   stat    per file: stat; checks it is a file (and its size, when this run
//           wrote it)
//   delete  per file: unlink
//   rmdir   rmdir the subdirectories, then <root>/r<rank>
// File i of a rank is <root>/r<rank>/d<i % dirs_per_rank>/f<i>. `threads`
// files are in flight per rank at once (elbencho -t; here per rank, where
// elbencho has per-thread directories: -n dirs and -N files per thread).
// Rank 0 creates <root> before the first barrier when the run has a mkdir
// phase (an existing root is fine), and removes it after the last barrier
// when the run has an rmdir phase and remove_root is set. <root>'s parent must
// exist.
//
// Data: with pattern_data, block [o, o+n) of file i of rank r is the pattern
// of seed derive_seed(pattern_seed, r, i) at stream offset o
// (core/common/pattern.hpp), written with Env::fill and checked after each
// read with Env::verify, so a wrong byte fails the read phase with `corrupt`.
//
// between_phases = sync_dropcache (elbencho --sync --dropcache): before each
// phase (a barrier "<phase>.sync"), every storage server writes back and drops
// its cache (workload_steps.hpp's sync_dropcache), counted in
// file_sweep.flush_between_phases_ns and .flushes_between_phases of rank 0.
//
// Metrics, per phase (see phase_recorder.hpp): file_sweep.<phase>.bytes, .ops
// (write/read: block I/Os; the others: entries), .op_latency_ns (per block
// I/O, or per entry op), .elapsed_ns; write/read also count .files.
// results() gives this rank's RankPhaseResult per phase for summarize_phase.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/units.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/buffer_pool.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "core/workloads/workload.hpp"
#include "core/workloads/workload_steps.hpp"
#include "core/common/field_info.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

enum class SweepPhase : std::uint8_t { mkdir, write, read, stat, delete_files, rmdir };
// "mkdir", "write", "read", "stat", "delete", "rmdir": the phase part of metric names.
std::string_view to_string(SweepPhase phase);

struct FileSweepConfig {
  std::string root_dir = "/sweep";
  std::uint32_t threads = 4;                // files in flight per rank, 1..k_workload_max_inflight
  std::uint32_t iodepth = 1;                // blocks in flight per file; threads x iodepth <= k_workload_max_inflight
  std::uint32_t dirs_per_rank = 1;          // subdirectories of the rank's directory, >= 1
  std::uint64_t files_per_rank = 16;        // 0..k_workload_max_items_per_rank
  std::uint64_t file_bytes = 1 * k_mib;     // size of every file, 0..k_workload_max_bytes_per_rank
  std::uint64_t block_bytes = 256 * k_kib;  // one read/write call, 1..k_workload_max_block_bytes
  std::vector<SweepPhase> phases = {SweepPhase::mkdir, SweepPhase::write,        SweepPhase::read,
                                    SweepPhase::stat,  SweepPhase::delete_files, SweepPhase::rmdir};
  CreateOptions create;                                   // stripe settings of the files
  MemKind buffer_kind = MemKind::host;                    // gpu: buffers on the rank's GPU (WorkloadContext::gpu)
  bool pattern_data = true;                               // writes carry the pattern, reads verify it
  bool sync_writes = false;                               // every write durable on completion
  bool remove_root = true;                                // rank 0 removes root_dir after an rmdir phase
  BetweenPhases between_phases = BetweenPhases::nothing;  // see the top
  std::uint64_t pattern_seed = 1;
  std::string run_tag;  // makes barrier names unique across runs
  TimeNs barrier_max_wait_ns = k_barrier_max_wait_ns;
};

// Its fields, one description each (core/common/field_info.hpp). Scripts
// also write files (all ranks' files, split), size, block and op (phases
// around the measured operations): scenarios/lua/spec_builders.cpp.
template <class V>
void fields(V& v, FileSweepConfig& c) {
  constexpr bool s = k_script_field;
  v("root_dir", c.root_dir, plain("directory the sweep works in", s));
  v("threads", c.threads, count_of("files", 1, k_workload_max_inflight, "files in flight per rank", s));
  v("iodepth", c.iodepth,
    count_of(
        "blocks", 1, k_workload_max_inflight,
        "blocks in flight per file (elbencho --iodepth); threads x iodepth at most the rank's operations in flight",
        s));
  v("dirs_per_rank", c.dirs_per_rank,
    count_of("directories", 1, k_workload_max_items_per_rank, "subdirectories of each rank's directory", s));
  v("files_per_rank", c.files_per_rank,
    count_of("files", 0, k_workload_max_items_per_rank, "files each rank writes and reads", s));
  v("file_bytes", c.file_bytes, bytes_in(0, k_workload_max_bytes_per_rank, "size of every file", s));
  v("block_bytes", c.block_bytes,
    bytes_in(1, k_workload_max_block_bytes, "bytes of one read or write call (at most the file)", s));
  v("phases", c.phases, plain("the phases, in order", s));
  v("create", c.create, plain("stripe settings of the files"));
  v("buffer_kind", c.buffer_kind, plain("where the I/O buffers live (gpu: the rank's GPU)", s));
  pattern_fields(v, c.pattern_data, c.pattern_seed);
  v("sync_writes", c.sync_writes, plain("every write durable on completion", s));
  v("remove_root", c.remove_root, plain("rank 0 removes root_dir after an rmdir phase", s));
  v("between_phases", c.between_phases,
    plain("sync_dropcache: before each phase every storage server writes back its dirty pages and drops its cache "
          "(elbencho --sync --dropcache), timed outside the phases",
          s));
  workload_tail_fields(v, c);
}

class FileSweep final : public Workload {
 public:
  explicit FileSweep(FileSweepConfig config) : config_(std::move(config)) {}

  // Errors name the bad field (invalid_argument).
  static Status validate(const FileSweepConfig& config);

  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "file_sweep"; }

  // This rank's totals, one per finished phase, in run order.
  const std::vector<RankPhaseResult>& results() const { return results_; }
  const FileSweepConfig& config() const { return config_; }

  std::string rank_dir(std::uint32_t rank) const;
  std::string sub_dir(std::uint32_t rank, std::uint32_t dir) const;
  std::string file_path(std::uint32_t rank, std::uint64_t index) const;
  std::uint64_t file_seed(std::uint32_t rank, std::uint64_t index) const;

 private:
  struct FileJob;

  bool has_phase(SweepPhase phase) const;
  void run_phase(SweepPhase phase, StatusFn done);
  void phase_body(SweepPhase phase, StatusFn done);
  // A job for file `index` in `buffer` (given back to the pool when the job ends), ending with done.
  std::shared_ptr<FileJob> make_job(std::uint64_t index, MemHandle buffer, StatusFn done);
  // Bytes of one block's part of a file's buffer.
  std::uint64_t slot_bytes() const;
  void write_file(std::uint64_t index, StatusFn done);
  void write_block(const std::shared_ptr<FileJob>& job, std::uint64_t block, StatusFn done);
  void read_file(std::uint64_t index, StatusFn done);
  void read_block(const std::shared_ptr<FileJob>& job, std::uint64_t block, StatusFn done);
  // Runs block_op over the file's blocks, iodepth at a time, then ends the job with close (a write's or a read's).
  void each_block(const std::shared_ptr<FileJob>& job, SweepPhase phase);
  void entry_op(SweepPhase phase, std::uint64_t index, StatusFn done);
  void setup(StatusFn done);
  void teardown(StatusFn done);
  std::string barrier_name(std::string_view what) const;

  FileSweepConfig config_;
  WorkloadContext* ctx_ = nullptr;
  std::unique_ptr<BufferPool> buffers_;
  std::unique_ptr<PhaseRecorder> recorder_;
  std::vector<RankPhaseResult> results_;
};

}  // namespace sluice
