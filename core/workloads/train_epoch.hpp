// TrainEpoch: the DLIO-like training loop (DLIO benchmark, Devarajan et al.,
// "DLIO: A Data-Centric Benchmark for Scientific Deep Learning Applications",
// CCGrid 2021; MLPerf Storage uses it): a dataset of `samples` samples stored
// samples_per_file to a file, read batch by batch into the rank's GPU memory
// while the accelerator "computes" on the previous batch.
//
// Dataset: file f is <dataset_dir>/f<f>; sample j lives in file
// j / samples_per_file, after the samples before it in that file; the last
// file may hold fewer samples. Sample sizes: every sample sample_bytes, or
// with sample_bytes_stdev > 0 (DLIO record_length_bytes_stdev) sample j has
// drawn_sample_bytes(config, j): a normal(sample_bytes, sample_bytes_stdev)
// draw from the stream derive_seed(sample_bytes_seed, j), clipped to
// [k_train_min_sample_bytes, max_sample_bytes()], the same on every rank and
// in every epoch (a property of the file, as DLIO generates its files once);
// the setup writes the files at those sizes. With pattern_data, file f carries the
// pattern of seed derive_seed(pattern_seed, f) at stream offset = file offset,
// and every sample read is verified.
//
// Epoch: steps = samples / (batch_samples * ranks) (the remainder is dropped,
// DLIO drop_last). Rank r's batch of step s holds the samples at positions
// (s * ranks + r) * batch_samples + k, k < batch_samples, of the epoch's order:
// the identity, or with shuffle a pseudo-random permutation of [0, samples)
// that every rank computes alike (shuffled_sample, seeded per epoch).
// Pipeline: prefetch_depth + 1 batch buffers in GPU memory of the rank's GPU
// (Env::alloc(MemKind::gpu, ctx.gpu)), so the client's planner chooses direct
// or bounce for each chunk (buffer_kind host: in host memory, as DLIO's own
// data loaders leave a batch, so a host without a GPU runs it; P15). Batch
// s + 1 .. s + prefetch_depth are read while step s computes
// (Env::compute(CostKind::workload_step, compute_ns_per_step), units = ns;
// with compute_time_stdev > 0 each step's time is a
// normal(compute_ns_per_step, compute_time_stdev) draw clipped at 0, from the
// rank's stream of the run's seed, Env::rng().fork(k_train_compute_stream));
// a buffer is refilled when its step's compute ends. At most
// read_threads sample reads are in flight per rank (DLIO read_threads); a
// sample read is a stat of its file (cached: inode_cache_entries) and a read.
//
// Accelerator utilisation, as DLIO reports it (AU = compute time / total
// time), excluding step 1, which includes filling the pipeline:
//   step_time(s) = end of compute(s) - end of compute(s - 1)   (s >= 1)
//   AU = sum_{s>=1} compute(s) / sum_{s>=1} step_time(s)
// With one step only, AU = compute / (end of compute(0) - epoch start).
// AU is in [0, 1]: a step never takes less than its compute.
//
// setup_dataset: before the epochs, rank 0 creates dataset_dir (an existing
// one is fine), then rank r creates and writes files f with f % ranks == r
// (read_threads files in flight, setup_block_bytes per write, host memory).
// after_setup = sync_dropcache: then every storage server writes the dataset
// back and drops its cache before the first epoch (workload_steps.hpp's
// sync_dropcache, a barrier "setup.sync"; rank 0 counts
// train_epoch.flush_between_phases_ns), as for a dataset written long before
// the training: MLPerf Storage generates it in a run of its own (datagen), a
// staged CosmoFlow dataset was copied in before. With storage servers that
// write through their page cache (buffered_writes) the first epoch otherwise
// shares the drives with the setup's write-back. nothing (the default): the
// epochs follow the setup's barrier.
//
// Metrics: train_epoch.setup.* and train_epoch.epoch.* per phase
// (phase_recorder.hpp: bytes, ops = samples read, op_latency_ns = one sample
// read, elapsed_ns = epoch start to the end of the last compute), and per
// epoch: train_epoch.epoch.step_ns and .data_wait_ns (per step),
// .compute_ns and .steps (counters), .au_ratio (one sample per rank).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/common/units.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/buffer_pool.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "core/workloads/workload.hpp"
#include "core/workloads/workload_steps.hpp"
#include "core/common/field_info.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

struct TrainEpochConfig {
  std::string dataset_dir = "/dataset";
  std::uint64_t samples = 1024;                   // samples in the dataset, 1..k_workload_max_items_per_rank
  std::uint64_t sample_bytes = 256 * k_kib;       // 1..k_workload_max_block_bytes
  std::uint64_t sample_bytes_stdev = 0;           // spread of sample sizes, 0..k_workload_max_block_bytes
  std::uint64_t sample_bytes_seed = 1;            // seed of the sample sizes
  std::uint32_t samples_per_file = 8;             // >= 1
  std::uint32_t batch_samples = 4;                // per rank and step (DLIO batch_size), >= 1
  TimeNs compute_ns_per_step = 10 * k_ns_per_ms;  // DLIO computation_time, >= 0
  TimeNs compute_time_stdev = 0;                  // spread of the step's compute time, >= 0
  std::uint32_t prefetch_depth = 1;               // batches read ahead (DLIO prefetch_size), 0..k_workload_max_inflight
  MemKind buffer_kind = MemKind::gpu;             // where the batch buffers live (host: as DLIO's data loaders)
  std::uint32_t read_threads = 4;                 // sample reads in flight per rank, 1..k_workload_max_inflight
  std::uint32_t epochs = 1;                       // 1..k_train_max_epochs
  bool shuffle = false;                           // sample order permuted per epoch
  std::uint64_t shuffle_seed = 1;
  bool setup_dataset = false;                          // create the dataset files first
  std::uint64_t setup_block_bytes = 4 * k_mib;         // write size of the setup, 1..k_workload_max_block_bytes
  BetweenPhases after_setup = BetweenPhases::nothing;  // see the top
  bool pattern_data = true;                            // setup writes the pattern, reads verify it
  std::uint64_t pattern_seed = 1;
  CreateOptions create;                      // stripe settings of the dataset files
  std::size_t inode_cache_entries = 65'536;  // opened files remembered per rank
  std::string run_tag;
  TimeNs barrier_max_wait_ns = k_barrier_max_wait_ns;
};

inline constexpr std::uint32_t k_train_max_epochs = 100'000;
// Drawn sample sizes are clipped to [k_train_min_sample_bytes,
// sample_bytes + k_train_sample_clip_sigmas x sample_bytes_stdev] (and
// k_workload_max_block_bytes): a sample holds at least a byte, and a batch
// buffer slot holds the largest sample.
inline constexpr std::uint64_t k_train_min_sample_bytes = 1;
inline constexpr std::uint64_t k_train_sample_clip_sigmas = 4;
// With drawn sizes the workload keeps every sample's offset (8 bytes each).
inline constexpr std::uint64_t k_train_max_drawn_samples = 10'000'000;
// The sub-stream of a rank's Env::rng() its compute times come from.
inline constexpr std::uint64_t k_train_compute_stream = 0x7EA1'0000'0000'0001ULL;

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, TrainEpochConfig& c) {
  constexpr bool s = k_script_field;
  const double items = k_workload_max_items_per_rank;
  v("dataset_dir", c.dataset_dir, plain("directory of the dataset's files", s));
  v("samples", c.samples, count_of("samples", 1, items, "samples in the dataset", s));
  v("sample_bytes", c.sample_bytes, bytes_in(1, k_workload_max_block_bytes, "bytes of one sample (the mean)", s));
  v("sample_bytes_stdev", c.sample_bytes_stdev,
    bytes_in(0, k_workload_max_block_bytes, "standard deviation of the sample sizes (normal, clipped)", s));
  v("sample_bytes_seed", c.sample_bytes_seed,
    count_of("seed", 0, k_field_max_unbounded, "seed of the sample sizes", s));
  v("samples_per_file", c.samples_per_file, count_of("samples", 1, items, "samples stored in one file", s));
  v("batch_samples", c.batch_samples, count_of("samples", 1, items, "samples per rank and step (DLIO batch_size)", s));
  v("compute_ns_per_step", c.compute_ns_per_step,
    duration_in(0, k_field_max_unbounded, "compute time of one step (DLIO computation_time; the mean)", s));
  v("compute_time_stdev", c.compute_time_stdev,
    duration_in(0, k_field_max_unbounded, "standard deviation of a step's compute time (normal, clipped at 0)", s));
  v("prefetch_depth", c.prefetch_depth,
    count_of("batches", 0, k_workload_max_inflight, "batches read ahead (DLIO prefetch_size)", s));
  v("buffer_kind", c.buffer_kind,
    plain("where the batch buffers live (gpu: the rank's GPU; host: host memory, as DLIO's data loaders)", s));
  v("read_threads", c.read_threads,
    count_of("reads", 1, k_workload_max_inflight, "sample reads in flight per rank", s));
  v("epochs", c.epochs, count_of("epochs", 1, k_train_max_epochs, "epochs to run", s));
  v("shuffle", c.shuffle, plain("sample order permuted every epoch", s));
  v("shuffle_seed", c.shuffle_seed, count_of("seed", 0, k_field_max_unbounded, "seed of the permutation", s));
  v("setup_dataset", c.setup_dataset, plain("create the dataset's files first (untimed)", s));
  v("setup_block_bytes", c.setup_block_bytes, bytes_in(1, k_workload_max_block_bytes, "write size of the setup", s));
  v("after_setup", c.after_setup,
    plain("sync_dropcache: after the setup every storage server writes the dataset back and drops its cache, "
          "untimed (a dataset written long before the training); nothing: the first epoch follows the setup, "
          "sharing the drives with its write-back where servers write buffered",
          s));
  pattern_fields(v, c.pattern_data, c.pattern_seed);
  v("create", c.create, plain("stripe settings of the dataset files"));
  v("inode_cache_entries", c.inode_cache_entries, count_of("files", 0, items, "opened files each rank remembers", s));
  workload_tail_fields(v, c);
}

struct EpochResult {
  std::uint32_t epoch = 0;
  std::uint64_t steps = 0;
  std::uint64_t samples_read = 0;
  std::uint64_t bytes_read = 0;
  TimeNs elapsed_ns = 0;          // epoch start to end of the last compute
  TimeNs compute_ns = 0;          // sum of compute over all steps
  TimeNs counted_compute_ns = 0;  // AU numerator (steps >= 1, or step 0 alone)
  TimeNs counted_step_ns = 0;     // AU denominator
  double au = 0;                  // accelerator utilisation in [0, 1]
};

class TrainEpoch final : public Workload {
 public:
  explicit TrainEpoch(TrainEpochConfig config);

  static Status validate(const TrainEpochConfig& config);

  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "train_epoch"; }

  const std::vector<EpochResult>& epochs() const { return epochs_; }
  const std::vector<RankPhaseResult>& results() const { return results_; }

  std::uint64_t file_count() const;
  std::uint64_t file_bytes(std::uint64_t file) const;
  std::uint64_t sample_bytes(std::uint64_t sample) const;
  std::uint64_t sample_offset(std::uint64_t sample) const;  // in its file
  std::uint64_t max_sample_bytes() const { return max_sample_bytes(config_); }
  static std::uint64_t max_sample_bytes(const TrainEpochConfig& config);
  // Sample `sample`'s size where sample_bytes_stdev > 0 (sample_bytes otherwise).
  static std::uint64_t drawn_sample_bytes(const TrainEpochConfig& config, std::uint64_t sample);
  std::string file_path(std::uint64_t file) const;
  std::uint64_t steps_per_epoch(std::uint32_t ranks) const;

  // The sample at `position` of an epoch's order: a bijection of [0, samples)
  // (a 4-round Feistel network over the next power of four, with cycle
  // walking; Black & Rogaway, "Ciphers with Arbitrary Finite Domains", 2002),
  // so a shuffled order needs no memory and every rank computes the same one.
  static std::uint64_t shuffled_sample(std::uint64_t position, std::uint64_t samples, std::uint64_t seed);

 private:
  struct Batch {
    MemHandle buffer;
    std::uint32_t remaining = 0;
  };
  struct SampleRead {
    std::uint64_t step = 0;
    std::uint32_t slot_index = 0;  // position in the batch
    std::uint64_t sample = 0;
  };
  struct SetupJob;
  using InodeFn = std::function<void(Result<proto::InodeDesc>)>;

  void setup(StatusFn done);
  void write_dataset_file(std::uint64_t file, StatusFn done);
  void setup_block(const std::shared_ptr<SetupJob>& job);
  void run_epoch(std::uint32_t epoch, StatusFn done);
  void load_batch(std::uint64_t step);
  void pump_reads();
  void read_sample(const SampleRead& read);
  void sample_done(const SampleRead& read, const Status& status);
  void maybe_compute();
  void fail(const Status& status);
  void maybe_finish_epoch();
  void inode_of(std::uint64_t file, InodeFn done);
  std::uint64_t sample_at(std::uint64_t position) const;
  TimeNs draw_compute_ns();

  TrainEpochConfig config_;
  // With drawn sizes: sample j's offset from the dataset's start, counting
  // files back to back (samples + 1 entries); empty otherwise.
  std::vector<std::uint64_t> dataset_offset_;
  Rng compute_rng_{0};
  WorkloadContext* ctx_ = nullptr;
  std::unique_ptr<BufferPool> batch_buffers_;
  std::unique_ptr<BufferPool> setup_buffers_;
  std::unique_ptr<PhaseRecorder> recorder_;
  std::vector<RankPhaseResult> results_;
  std::vector<EpochResult> epochs_;

  // Inodes of opened files, and the callbacks waiting for one being looked up.
  std::map<std::uint64_t, proto::InodeDesc> inodes_;
  std::map<std::uint64_t, std::vector<InodeFn>> inode_waiters_;

  // State of the running epoch.
  std::uint32_t epoch_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t next_load_ = 0;
  std::uint64_t next_compute_ = 0;
  bool computing_ = false;
  std::map<std::uint64_t, Batch> batches_;
  std::deque<SampleRead> read_queue_;
  std::uint32_t reads_inflight_ = 0;
  TimeNs epoch_start_ns_ = 0;
  TimeNs last_compute_end_ns_ = 0;
  Status epoch_error_;
  bool epoch_finished_ = true;
  StatusFn epoch_done_;
};

}  // namespace sluice
