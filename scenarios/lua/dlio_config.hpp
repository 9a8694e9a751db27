// DLIO workload configurations (the YAML files of the DLIO benchmark and of
// MLPerf Storage, which runs DLIO) read into sluice's train_epoch workload,
// or, for a checkpoint-only config (workflow.train false, workflow.checkpoint
// true: MLPerf Storage v2.0's llama3 checkpointing), into checkpoint_burst:
// what sl.workload.dlio{config = "unet3d_h100.yaml", overrides = {...}} builds.
//
// The keys are DLIO's (argonne-lcf/dlio_benchmark, docs/source/config.rst;
// the sections model, framework, workflow, dataset, reader, train,
// evaluation, checkpoint, metric, output, profiling). Each key the reader
// knows does one of three things:
//   - maps onto a train_epoch field (core/workloads/train_epoch.hpp):
//       dataset.num_files_train x num_samples_per_file -> samples
//       dataset.record_length_bytes (record_length)    -> sample_bytes (rounded to a byte)
//       dataset.record_length_bytes_stdev (_stdev)     -> sample_bytes_stdev (rounded to a byte)
//       dataset.num_samples_per_file                   -> samples_per_file
//       dataset.data_folder (its last component)       -> dataset_dir
//       reader.batch_size                              -> batch_samples
//       reader.read_threads                            -> read_threads
//       reader.prefetch_size (0: DLIO's 2)             -> prefetch_depth
//       reader.sample_shuffle / file_shuffle           -> shuffle
//       train.computation_time (seconds, or {mean =})  -> compute_ns_per_step
//       train.computation_time {stdev =} (or _stdev)   -> compute_time_stdev
//       train.epochs                                   -> epochs
//       train.seed                                     -> shuffle_seed
//     and metric.au is kept as the AU threshold;
//   - is recorded, with why it changes nothing sluice models (framework,
//     the checkpoint section while workflow.checkpoint is off, the sample's
//     resized length in memory, ...) or how sluice approximates it;
//   - is refused, naming the file, the line and the key, with why: a format
//     or data loader with no read pattern here, evaluation or checkpoints
//     during training, sub-folders, compression, a preprocessing time.
// A key the reader does not know is refused too, with the closest known one.
//
// A checkpoint-only config maps onto checkpoint_burst (core/workloads/
// checkpoint_burst.hpp), each rank writing what DLIO's rank writes
// (dlio_rank_checkpoint_bytes below):
//   model.num_layers, model.transformer.*, model.parallelism.*,
//   model.model_datatype, model.optimizer_datatype -> shard_bytes
//   checkpoint.num_checkpoints_write              -> checkpoints
//   checkpoint.num_checkpoints_read               -> read_back, read_checkpoints
//   checkpoint.fsync                              -> sync
//   checkpoint.checkpoint_folder (last component) -> dir
// the keys of training (dataset, reader, train, evaluation) are recorded as
// unused, as DLIO ignores them when workflow.train is false.
//
// overrides apply dotted keys ("reader.batch_size") over the file's values,
// as DLIO's `++workload.reader.batch_size=4` does, with the same checks.
//
// Errors: invalid_argument "<name>:<line>: <section.key>: <why>" (a key of
// the file), "<name>: overrides[\"<key>\"]: <why>" (an override),
// "<name>: <key>: missing (...)" (a required key), "<name>:<line>: not
// YAML: ..." (syntax). No exception escapes read_dlio_config.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/workloads/checkpoint_burst.hpp"
#include "core/workloads/train_epoch.hpp"

namespace sluice::scenario {

// A config file is a page of text; anything larger is not one.
inline constexpr std::size_t k_dlio_max_config_bytes = 1 << 20;
// Keys one config (with its overrides) may hold.
inline constexpr std::size_t k_dlio_max_keys = 1000;
// A text value (a folder, a name).
inline constexpr std::size_t k_dlio_max_text_chars = 4096;
// DLIO sets a prefetch_size of 0 to 2 batches for every data loader
// (docs/source/config.rst, reader: "we set prefetch_size to be 2 all the time").
inline constexpr std::uint32_t k_dlio_zero_prefetch_batches = 2;
// DLIO's defaults for keys a config leaves out (docs/source/config.rst):
// reader.read_threads 1, train.epochs 1, train.seed 123; dataset.data_folder
// ./data, whose last component names the dataset's directory here.
inline constexpr std::uint32_t k_dlio_default_read_threads = 1;
inline constexpr std::uint32_t k_dlio_default_epochs = 1;
inline constexpr std::uint64_t k_dlio_default_seed = 123;
inline constexpr const char* k_dlio_default_dataset_dir = "/data";
// The longest computation_time of one step, in seconds (an hour: MLPerf's
// are well under one second).
inline constexpr double k_dlio_max_computation_s = 3600;
// The longest checkpoint.time_between_checkpoints, in seconds (an hour:
// MLPerf Storage's is 5).
inline constexpr double k_dlio_max_checkpoint_gap_s = 3600;

// Bounds of a transformer's shape (model.transformer.*, model.num_layers):
// Llama 3's largest (the 1T config: hidden 25872, ffn 98304, vocab 128256,
// 128 layers) is far inside them, and their products stay within 64 bits.
inline constexpr std::uint64_t k_dlio_max_model_dim = 1 << 20;
inline constexpr std::uint64_t k_dlio_max_layers = 10'000;
// Ranks of a checkpoint run (tensor x pipeline x data): MLPerf Storage's
// largest is 1024 (the 1T model).
inline constexpr std::uint64_t k_dlio_max_ranks = 1 << 16;

// One override: a dotted key and its value as text ("4", "true", "npz").
struct DlioOverride {
  std::string key;
  std::string value;
};

// An accepted key sluice does not run as DLIO does: recorded with why.
struct DlioNote {
  std::string key;     // "dataset.record_length_bytes_resize"
  std::string value;   // as written: "2097152"
  std::string where;   // "unet3d_h100.yaml:17" or "overrides[\"...\"]"
  std::string effect;  // why it changes nothing, or how it is approximated
  bool approximated = false;
};

// A train_epoch field the config sets, and the key it came from.
struct DlioSetting {
  std::string field;  // "batch_samples"
  std::string from;   // "reader.batch_size"
};

// A transformer's shape and parallelism as DLIO's checkpointing reads them;
// the defaults are DLIO's for keys a config leaves out (ConfigArguments,
// dlio_benchmark/utils/config.py: vocab_size 32000, hidden_size 2048,
// ffn_hidden_size 8192, num_attention_heads 32, num_kv_heads 8, tensor and
// pipeline 1, zero_stage 0, model_datatype fp16, optimizer_datatype fp32).
struct DlioTransformer {
  std::uint64_t layers = 0;                 // model.num_layers (required)
  std::uint64_t hidden = 2048;              // model.transformer.hidden_size
  std::uint64_t ffn_hidden = 8192;          // model.transformer.ffn_hidden_size
  std::uint64_t vocab = 32000;              // model.transformer.vocab_size
  std::uint64_t heads = 32;                 // model.transformer.num_attention_heads
  std::uint64_t kv_heads = 8;               // model.transformer.num_kv_heads
  std::uint64_t tensor = 1;                 // model.parallelism.tensor
  std::uint64_t pipeline = 1;               // model.parallelism.pipeline
  std::uint64_t data = 1;                   // model.parallelism.data, or MLPerf's ranks / (tensor x pipeline)
  std::uint64_t zero_stage = 0;             // model.parallelism.zero_stage, 0..3
  std::uint64_t model_dtype_bytes = 2;      // model.model_datatype (fp16)
  std::uint64_t optimizer_dtype_bytes = 4;  // model.optimizer_datatype (fp32)
  std::uint64_t ranks() const { return tensor * pipeline * data; }
};

// DLIO's parameter count of a Llama-like transformer (get_num_parameters).
std::uint64_t dlio_parameters(const DlioTransformer& m);
// The bytes DLIO's rank `rank` writes for one checkpoint: its layers' model
// state (unless ZeRO 1 or 2 leaves that to data-parallel rank 0) and its
// share of the optimizer state. dlio_config.cpp cites the source.
std::uint64_t dlio_rank_checkpoint_bytes(const DlioTransformer& m, std::uint64_t rank);

// What a checkpoint-only config builds.
struct DlioCheckpoint {
  DlioTransformer transformer;
  CheckpointConfig config;             // shard_bytes: the ranks' mean; checkpoints, sync, read_back, dir
  std::uint64_t checkpoint_bytes = 0;  // one checkpoint, every rank
  std::uint64_t min_rank_bytes = 0;
  std::uint64_t max_rank_bytes = 0;
  std::uint32_t reads = 0;  // checkpoint.num_checkpoints_read
};

struct DlioWorkload {
  std::string model = "dlio";                // model.name
  TrainEpochConfig train;                    // train_epoch's defaults with the fields of dlio_settings() set
  std::optional<DlioCheckpoint> checkpoint;  // a checkpoint-only config (train is then unused)
  std::optional<double> au_threshold;        // metric.au, a fraction
  std::vector<DlioNote> notes;               // in the order of the keys
};

// Reads a DLIO workload YAML; `name` is how messages name the file.
Result<DlioWorkload> read_dlio_config(std::string_view text, const std::string& name,
                                      const std::vector<DlioOverride>& overrides = {});

// The train_epoch fields a config sets (DLIO's default where it leaves the key
// out), each with the key it comes from.
const std::vector<DlioSetting>& dlio_settings();
// The checkpoint_burst fields a checkpoint-only config sets.
const std::vector<DlioSetting>& dlio_checkpoint_settings();

// MLPerf Storage's rank count of a checkpointing model (by model.name), 0 for another model.
std::uint64_t mlperf_checkpoint_ranks(const std::string& model);

// Every key the reader knows, "section.key", in DLIO's order (for messages and tests).
const std::vector<std::string>& dlio_known_keys();

}  // namespace sluice::scenario
