// Fuzz harness: the DLIO workload YAML reader (scenarios/lua/dlio_config.hpp,
// read_dlio_config), what sl.workload.dlio reads (issue 52 item 1).
// Properties: never crash, and no exception escapes (yaml-cpp's included);
// an error is invalid_argument naming the file ("fuzz.yaml..."); an accepted
// config is a valid train_epoch config (TrainEpoch::validate), or for a
// checkpoint-only one a valid checkpoint_burst config, whose notes
// each name a key the reader knows, and reading it again gives the same
// fields (the reader is a function of its text).
#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_harness.hpp"
#include "scenarios/lua/dlio_config.hpp"

namespace sluice::fuzz {

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  const std::vector<std::string> texts = {
      // MLPerf Storage's unet3d (lua_scripts/mlperf/unet3d_h100.yaml, without its comments)
      "model:\n  name: unet3d\n  type: cnn\n  model_size: 499153191\nframework: pytorch\nworkflow:\n"
      "  generate_data: False\n  train: True\n  checkpoint: False\ndataset:\n  data_folder: data/unet3d/\n"
      "  format: npz\n  num_files_train: 168\n  num_samples_per_file: 1\n  record_length_bytes: 146600628\n"
      "  record_length_bytes_stdev: 68341808\n  record_length_bytes_resize: 2097152\nreader:\n"
      "  data_loader: pytorch\n  batch_size: 7\n  read_threads: 4\n  file_shuffle: seed\n  sample_shuffle: seed\n"
      "train:\n  epochs: 5\n  computation_time: 0.323\ncheckpoint:\n  checkpoint_folder: checkpoints/unet3d\n"
      "metric:\n  au: 0.90\n",
      // resnet50's older spelling, a distribution, flow style and output.metric
      "model: resnet50\nframework: tensorflow\ndataset: {num_files_train: 1024, num_samples_per_file: 1251, "
      "record_length: 114660.07, format: tfrecord}\nreader: {data_loader: tensorflow, read_threads: 8, batch_size: "
      "400, prefetch_size: 0}\ntrain:\n  computation_time: {mean: 0.224, stdev: 0.01, type: normal}\n"
      "output:\n  metric: {exclude_start_steps: 1, exclude_end_steps: 0}\n",
      // MLPerf Storage v2.0's llama3 8B checkpointing (lua_scripts/mlperf/llama3_8b.yaml), 2 ranks
      "model:\n  name: llama_8b\n  type: transformer\n  num_layers: 32\n  model_datatype: fp16\n"
      "  optimizer_datatype: fp32\n  parallelism:\n    pipeline: 1\n    tensor: 1\n    zero_stage: 3\n    data: 2\n"
      "  transformer:\n    vocab_size: 128256\n    hidden_size: 4096\n    ffn_hidden_size: 14336\n"
      "    num_attention_heads: 32\n    num_kv_heads: 8\nframework: pytorch\nworkflow:\n  generate_data: False\n"
      "  train: False\n  checkpoint: True\ncheckpoint:\n  checkpoint_folder: checkpoints/llama_8b\n"
      "  time_between_checkpoints: 5\n  num_checkpoints_write: 10\n  num_checkpoints_read: 10\n  fsync: True\n",
      // refusals: anchors, a duplicate, an unknown section
      "dataset: &d\n  format: hdf5\nreader: *d\nhydra: [1, {a: b}]\n",
  };
  std::vector<std::vector<std::uint8_t>> seeds;
  for (const std::string& t : texts) seeds.emplace_back(t.begin(), t.end());
  return seeds;
}

namespace {

void check(std::string_view text) {
  Result<scenario::DlioWorkload> w = scenario::read_dlio_config(text, "fuzz.yaml");
  if (!w.ok()) {
    if (w.status().code() != StatusCode::invalid_argument) property_failed("dlio_yaml", "an error of another code");
    if (w.status().message().rfind("fuzz.yaml", 0) != 0) property_failed("dlio_yaml", "an error not naming the file");
    return;
  }
  if (w->checkpoint ? !CheckpointBurst::validate(w->checkpoint->config).ok() : !TrainEpoch::validate(w->train).ok()) {
    property_failed("dlio_yaml", "an accepted config fails validate()");
  }
  const std::vector<std::string>& known = scenario::dlio_known_keys();
  for (const scenario::DlioNote& n : w->notes) {
    const std::string& key = n.key;  // "train.computation_time.stdev": a part of a known key
    const bool named = std::any_of(known.begin(), known.end(),
                                   [&](const std::string& k) { return key == k || key.rfind(k + ".", 0) == 0; });
    if (!named) property_failed("dlio_yaml", "a note of a key the reader does not know");
  }
  Result<scenario::DlioWorkload> again = scenario::read_dlio_config(text, "fuzz.yaml");
  if (!again.ok() || again->train.samples != w->train.samples || again->train.sample_bytes != w->train.sample_bytes ||
      again->train.compute_ns_per_step != w->train.compute_ns_per_step ||
      again->checkpoint.has_value() != w->checkpoint.has_value() ||
      (w->checkpoint && again->checkpoint->config.shard_bytes != w->checkpoint->config.shard_bytes)) {
    property_failed("dlio_yaml", "reading the same text twice differs");
  }
}

}  // namespace
}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sluice::fuzz::check_text("dlio_yaml", data, size, sluice::fuzz::check);
}
