#include "scenarios/lua/dlio_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "scenarios/lua/script_units.hpp"
#include "scenarios/lua/script_value.hpp"

namespace sluice::scenario {
namespace {

// A refusal, thrown inside the reader and returned as invalid_argument.
struct DlioError {
  std::string message;
};

// One key of the config: "reader.batch_size", its value, where it was given.
struct Entry {
  std::string key;
  YAML::Node value;
  std::string where;
};

// What the keys set, before the checks that span keys (finish()).
struct State {
  DlioWorkload out;
  std::map<std::string, std::string> given;  // key -> where, for the checks after reading
  std::uint64_t files = 0;
  std::uint64_t samples_per_file = 1;
  double record_bytes = 0;
  std::string format;
  std::optional<std::uint32_t> prefetch;
  bool sample_shuffle = false;
  bool file_shuffle = false;
  // A checkpoint-only config (workflow.train false, workflow.checkpoint true).
  bool checkpoint_run = false;
  DlioTransformer model;
  std::optional<std::uint64_t> zero_stage;
  std::optional<std::uint64_t> data_ranks;
  std::uint64_t writes = 0;
  std::uint64_t reads = 0;
  bool fsync = false;                           // DLIO's default (checkpoint.fsync)
  std::string checkpoint_dir = "/checkpoints";  // DLIO's ./checkpoints
};

using Handler = void (*)(State&, const Entry&);
struct KeySpec {
  std::string key;
  Handler handle;
};

constexpr std::string_view k_sections[] = {"model",      "framework",  "workflow", "dataset", "reader",   "train",
                                           "evaluation", "checkpoint", "metric",   "output",  "profiling"};

[[noreturn]] void fail(const Entry& e, const std::string& why) { throw DlioError{e.where + ": " + e.key + ": " + why}; }

std::string shape_of(const YAML::Node& n) {
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "nothing";
  return "\"" + n.Scalar() + "\"";
}

const std::string& scalar(const Entry& e) {
  if (!e.value.IsScalar()) fail(e, "expected a value, not " + shape_of(e.value));
  return e.value.Scalar();
}

// YAML 1.1 booleans, as PyYAML (under DLIO's hydra) reads them.
bool parse_bool(const Entry& e) {
  static const std::set<std::string> yes{"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const std::set<std::string> no{"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  const std::string& s = scalar(e);
  if (yes.count(s) != 0) return true;
  if (no.count(s) != 0) return false;
  fail(e, "expected true or false, not \"" + s + "\"");
}

double parse_number(const Entry& e, double lo, double hi, const std::string& what) {
  const std::string& s = scalar(e);
  char* end = nullptr;
  const double d = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d))
    fail(e, "expected " + what + ", not \"" + s + "\"");
  if (d < 0 && lo >= 0) fail(e, s + " is negative; expected " + what);
  if (d < lo || d > hi) {
    fail(e, s + " is out of range: " + what + " from " + ScriptValue{lo}.text() + " to " + ScriptValue{hi}.text());
  }
  return d;
}

std::uint64_t parse_count(const Entry& e, std::uint64_t lo, std::uint64_t hi, const std::string& what) {
  const std::string& s = scalar(e);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc{} && end == s.data() + s.size()) {
    if (v < lo || v > hi) {
      fail(e, s + " is out of range: " + what + " from " + std::to_string(lo) + " to " + std::to_string(hi));
    }
    return v;
  }
  const double d = parse_number(e, static_cast<double>(lo), static_cast<double>(hi), what);
  if (d != std::floor(d)) fail(e, "expected a whole number (" + what + "), not " + s);
  return static_cast<std::uint64_t>(d);
}

std::string parse_text(const Entry& e) {
  const std::string& s = scalar(e);
  if (s.size() > k_dlio_max_text_chars) {
    fail(e, "a text of " + std::to_string(s.size()) + " characters, at most " + std::to_string(k_dlio_max_text_chars));
  }
  return s;
}

std::string parse_choice(const Entry& e, const std::vector<std::string>& choices) {
  const std::string s = parse_text(e);
  for (const std::string& c : choices) {
    if (c == s) return s;
  }
  const std::string near = closest_name(s, choices);
  fail(e,
       "\"" + s + "\" is not one of " + join_names(choices) + (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
}

void note(State& st, const Entry& e, const std::string& effect, bool approximated = false) {
  st.out.notes.push_back(
      {e.key, e.value.IsScalar() ? e.value.Scalar() : "(" + shape_of(e.value) + ")", e.where, effect, approximated});
}

// Keys that change nothing sluice models: accepted as any value and recorded.
void record_any(State& st, const Entry& e, const std::string& effect) { note(st, e, effect); }

void refuse_if_true(State& st, const Entry& e, const std::string& why, const std::string& effect) {
  if (parse_bool(e)) fail(e, why);
  note(st, e, effect);
}

// The folder a config names, as a directory of sluice's file system: its
// last component below the root ("data/unet3d/" -> "/unet3d").
std::string fs_dir_of(const Entry& e, const std::string& fallback) {
  std::string dir = parse_text(e);
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  std::string last = dir.substr(dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/') + 1);
  for (char& c : last) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != '_') c = '_';
  }
  return "/" + (last.empty() || last == "." || last == ".." ? fallback : last);
}

// Bytes of one element of DLIO's datatypes (base_checkpointing.py get_datatype_size).
std::uint64_t read_datatype(const Entry& e) {
  const std::string t = parse_choice(e, {"int8", "uint8", "fp16", "bf16", "fp32", "fp64"});
  if (t == "int8" || t == "uint8") return 1;
  if (t == "fp16" || t == "bf16") return 2;
  return t == "fp32" ? 4 : 8;
}

// model.parallelism.* and model.transformer.*: the shape and split of a
// transformer, each sub-key an entry of its own (ConfigReader::section).
constexpr std::string_view k_model_maps[] = {"model.parallelism", "model.transformer"};

void read_model_dim(State& st, const Entry& e) {
  const std::string k = e.key.substr(e.key.rfind('.') + 1);
  if (k == "zero_stage") {
    st.zero_stage = parse_count(e, 0, 3, "a ZeRO stage");
    return;
  }
  if (e.key.rfind("model.parallelism.", 0) == 0) {
    const std::uint64_t n = parse_count(e, 1, k_dlio_max_ranks, "ranks");
    if (k == "tensor") {
      st.model.tensor = n;
    } else if (k == "pipeline") {
      st.model.pipeline = n;
    } else {
      st.data_ranks = n;
      note(st, e,
           "the ranks: tensor x pipeline x data (DLIO takes them from mpirun's process count and reads this key "
           "only in checkpoint.mode subset)");
    }
    return;
  }
  const std::uint64_t n = parse_count(e, 1, k_dlio_max_model_dim, "a dimension");
  (k == "vocab_size"            ? st.model.vocab
   : k == "hidden_size"         ? st.model.hidden
   : k == "ffn_hidden_size"     ? st.model.ffn_hidden
   : k == "num_attention_heads" ? st.model.heads
                                : st.model.kv_heads) = n;
}

// A model key: recorded for training (no checkpoints there), read for a checkpoint-only config.
void model_layout(State& st, const Entry& e) {
  if (!st.checkpoint_run) return record_any(st, e, "checkpoint layout");
  if (e.key == "model.num_layers") {
    st.model.layers = parse_count(e, 1, k_dlio_max_layers, "layers");
  } else if (e.key == "model.model_datatype") {
    st.model.model_dtype_bytes = read_datatype(e);
  } else if (e.key == "model.optimizer_datatype") {
    st.model.optimizer_dtype_bytes = read_datatype(e);
  } else if (e.key.rfind("model.parallelism.", 0) == 0 || e.key.rfind("model.transformer.", 0) == 0) {
    read_model_dim(st, e);
  } else if (e.key == "model.parallelism" || e.key == "model.transformer") {
    fail(e, "expected a map of keys, not " + shape_of(e.value));
  } else if (e.value.IsSequence() && e.value.size() > 0) {
    fail(e,
         "predefined sizes (DLIO's older checkpoint layout) are not modelled; give model.num_layers and "
         "model.transformer");
  } else {
    note(st, e, "none predefined");
  }
}

void model_size(State& st, const Entry& e) {
  record_any(st, e,
             st.checkpoint_run ? "unused: DLIO sizes a transformer's checkpoint from its layers"
                               : "checkpoint bytes: no checkpoints here");
}

std::vector<KeySpec> model_keys() {
  return {
      {"model.name", [](State& st, const Entry& e) { st.out.model = parse_text(e); }},
      {"model.type",
       [](State& st, const Entry& e) {
         if (st.checkpoint_run && parse_text(e) != "transformer") {
           fail(e, "only a transformer's checkpoint (DLIO's layer and optimizer states) is modelled");
         }
         record_any(st, e, "the model's kind: a label");
       }},
      {"model.model_size", model_size},
      {"model.model_size_bytes", model_size},
      {"model.model_datatype", model_layout},
      {"model.optimizer_datatype", model_layout},
      {"model.optimization_groups", model_layout},
      {"model.num_layers", model_layout},
      {"model.layer_parameters", model_layout},
      {"model.parallelism", model_layout},
      {"model.parallelism.tensor", model_layout},
      {"model.parallelism.pipeline", model_layout},
      {"model.parallelism.data", model_layout},
      {"model.parallelism.zero_stage", model_layout},
      {"model.transformer", model_layout},
      {"model.transformer.vocab_size", model_layout},
      {"model.transformer.hidden_size", model_layout},
      {"model.transformer.ffn_hidden_size", model_layout},
      {"model.transformer.num_attention_heads", model_layout},
      {"model.transformer.num_kv_heads", model_layout},
      {"framework",
       [](State& st, const Entry& e) {
         parse_choice(e, {"pytorch", "tensorflow"});
         note(st, e, "the framework's name: reader.data_loader sets the read pattern");
       }},
  };
}

std::vector<KeySpec> workflow_keys() {
  return {
      {"workflow.generate_data",
       [](State& st, const Entry& e) {
         parse_bool(e);
         note(st, e, "sluice's file system starts empty: setup_dataset (default true) writes the dataset, untimed");
       }},
      {"workflow.train",
       [](State& st, const Entry& e) {
         if (!parse_bool(e) && !st.checkpoint_run) {
           fail(e, "a run without training or checkpoints (data generation alone) is no workload here");
         }
       }},
      {"workflow.evaluation",
       [](State& st, const Entry& e) {
         refuse_if_true(st, e, "evaluation steps are not modelled: train_epoch reads the training set only",
                        "no evaluation");
       }},
      {"workflow.checkpoint",
       [](State& st, const Entry& e) {
         if (st.checkpoint_run) {
           return note(st, e,
                       "checkpoints alone: checkpoint_burst, one file per rank and checkpoint (DLIO writes a "
                       "model-state and an optimizer-state file, and one per layer under ZeRO 1 with pipelining)",
                       true);
         }
         refuse_if_true(st, e,
                        "checkpoints during training are not modelled here; run sl.workload.checkpoint_burst "
                        "beside it",
                        "no checkpoints");
       }},
      {"workflow.profiling",
       [](State& st, const Entry& e) {
         parse_bool(e);
         note(st, e, "DLIO's own tracing");
       }},
      {"workflow.debug", [](State& st, const Entry& e) { record_any(st, e, "DLIO's logging"); }},
  };
}

// The formats whose read pattern train_epoch models, and how.
bool whole_file_format(const std::string& f) { return f == "npz" || f == "npy" || f == "png" || f == "jpeg"; }
bool in_place_format(const std::string& f) { return f == "tfrecord" || f == "hdf5"; }

void read_format(State& st, const Entry& e) {
  const std::string f = parse_text(e);
  if (!whole_file_format(f) && !in_place_format(f)) {
    fail(e, "no read pattern for format \"" + f +
                "\": modelled are npz, npy, png, jpeg (a whole file per sample) and tfrecord, hdf5 (samples read "
                "where they lie in the file)");
  }
  st.format = f;
}

void read_record_length(State& st, const Entry& e) {
  const std::string other = e.key == "dataset.record_length" ? "dataset.record_length_bytes" : "dataset.record_length";
  if (st.given.count(other) != 0) fail(e, "give one of " + other + " and " + e.key);
  st.record_bytes = parse_number(e, 1, static_cast<double>(k_workload_max_block_bytes), "bytes of one sample");
}

// Each sample's size is drawn from normal(record_length, stdev), clipped
// (TrainEpoch::drawn_sample_bytes), once per file as DLIO generates them.
void read_record_stdev(State& st, const Entry& e) {
  const std::string other =
      e.key == "dataset.record_length_stdev" ? "dataset.record_length_bytes_stdev" : "dataset.record_length_stdev";
  if (st.given.count(other) != 0) fail(e, "give one of " + other + " and " + e.key);
  const double stdev = parse_number(e, 0, static_cast<double>(k_workload_max_block_bytes), "bytes");
  st.out.train.sample_bytes_stdev = static_cast<std::uint64_t>(std::llround(stdev));
}

std::vector<KeySpec> dataset_keys() {
  const auto recorded = [](State& st, const Entry& e) { record_any(st, e, "changes no I/O sluice models"); };
  return {
      {"dataset.data_folder",
       [](State& st, const Entry& e) {
         st.out.train.dataset_dir = fs_dir_of(e, "dataset");
         note(st, e, "the host's folder; the files go to " + st.out.train.dataset_dir + " of the file system");
       }},
      {"dataset.format", read_format},
      {"dataset.num_files_train",
       [](State& st, const Entry& e) { st.files = parse_count(e, 1, k_workload_max_items_per_rank, "files"); }},
      {"dataset.num_files_eval", [](State& st, const Entry& e) { record_any(st, e, "no evaluation"); }},
      {"dataset.num_samples_per_file",
       [](State& st, const Entry& e) {
         st.samples_per_file = parse_count(e, 1, k_workload_max_items_per_rank, "samples per file");
       }},
      {"dataset.record_length_bytes", read_record_length},
      {"dataset.record_length", read_record_length},
      {"dataset.record_length_bytes_stdev", read_record_stdev},
      {"dataset.record_length_stdev", read_record_stdev},
      {"dataset.record_length_bytes_resize",
       [](State& st, const Entry& e) { record_any(st, e, "the sample's size in memory after preprocessing: no I/O"); }},
      {"dataset.record_length_resize",
       [](State& st, const Entry& e) { record_any(st, e, "the sample's size in memory after preprocessing: no I/O"); }},
      {"dataset.num_subfolders_train",
       [](State& st, const Entry& e) {
         if (parse_count(e, 0, k_workload_max_items_per_rank, "folders") > 1) {
           fail(e, "train_epoch keeps the dataset in one directory; sub-folders are not modelled");
         }
         note(st, e, "one folder");
       }},
      {"dataset.num_subfolders_eval", recorded},
      {"dataset.file_prefix", recorded},
      {"dataset.compression",
       [](State& st, const Entry& e) {
         if (parse_text(e) != "none") fail(e, "compressed files are not modelled (only \"none\")");
         note(st, e, "no compression");
       }},
      {"dataset.compression_level", recorded},
      {"dataset.enable_chunking",
       [](State& st, const Entry& e) { refuse_if_true(st, e, "HDF5 chunking is not modelled", "no chunking"); }},
      {"dataset.chunk_size", recorded},
      {"dataset.keep_files", recorded},
      {"dataset.record_dims",
       [](State&, const Entry& e) { fail(e, "give the sample's bytes as dataset.record_length_bytes instead"); }},
      {"dataset.record_element_type", recorded},
      {"dataset.num_dataset_per_record", recorded},
      {"dataset.chunk_dims", recorded},
      {"dataset.max_shape", recorded},
  };
}

void read_shuffle(State& st, const Entry& e) {
  const bool on = parse_choice(e, {"off", "seed", "random"}) != "off";
  (e.key == "reader.sample_shuffle" ? st.sample_shuffle : st.file_shuffle) = on;
  if (scalar(e) == "random") note(st, e, "sluice's permutation is seeded (train.seed) so runs repeat", true);
}

std::vector<KeySpec> reader_keys() {
  const auto recorded = [](State& st, const Entry& e) { record_any(st, e, "changes no I/O sluice models"); };
  return {
      {"reader.data_loader",
       [](State& st, const Entry& e) {
         const std::string l = parse_text(e);
         if (l != "pytorch" && l != "tensorflow") {
           fail(e, "no read pattern for data loader \"" + l + "\": modelled are pytorch and tensorflow");
         }
         note(st, e, "read_threads loaders, prefetch_size batches ahead");
       }},
      {"reader.batch_size",
       [](State& st, const Entry& e) {
         st.out.train.batch_samples =
             static_cast<std::uint32_t>(parse_count(e, 1, k_workload_max_items_per_rank, "samples per batch"));
       }},
      {"reader.batch_size_eval", recorded},
      {"reader.read_threads",
       [](State& st, const Entry& e) {
         const std::uint64_t n = parse_count(e, 0, k_workload_max_inflight, "reader threads");
         if (n == 0) fail(e, "0 (loading on the training thread, no overlap with compute) is not modelled");
         st.out.train.read_threads = static_cast<std::uint32_t>(n);
       }},
      {"reader.computation_threads", recorded},
      {"reader.prefetch_size",
       [](State& st, const Entry& e) {
         st.prefetch = static_cast<std::uint32_t>(parse_count(e, 0, k_workload_max_inflight, "batches"));
       }},
      {"reader.sample_shuffle", read_shuffle},
      {"reader.file_shuffle", read_shuffle},
      {"reader.shuffle_size", recorded},
      {"reader.transfer_size", recorded},
      {"reader.preprocess_time",
       [](State& st, const Entry& e) {
         if (parse_number(e, 0, k_dlio_max_computation_s, "seconds") > 0) {
           fail(e, "a preprocessing time in the loaders is not modelled");
         }
         note(st, e, "no preprocessing");
       }},
      {"reader.preprocess_time_stdev", recorded},
      {"reader.pin_memory", recorded},
      {"reader.dont_use_mmap", recorded},
      {"reader.odirect", recorded},
      {"reader.multiprocessing_context", recorded},
      {"reader.transformed_sample", recorded},
      {"reader.transformed_sample_type", recorded},
  };
}

void set_compute(State& st, double seconds) {
  st.out.train.compute_ns_per_step = static_cast<TimeNs>(std::llround(seconds * static_cast<double>(k_ns_per_s)));
}

// Each step's compute time is drawn from normal(mean, stdev), clipped at 0.
void set_compute_stdev(State& st, double seconds) {
  st.out.train.compute_time_stdev = static_cast<TimeNs>(std::llround(seconds * static_cast<double>(k_ns_per_s)));
}

// computation_time: seconds, or DLIO's distribution map {mean, stdev, type = normal}.
void read_computation_time(State& st, const Entry& e) {
  const std::string what = "seconds of one step";
  if (!e.value.IsMap()) {
    set_compute(st, parse_number(e, 0, k_dlio_max_computation_s, what));
    return;
  }
  bool has_mean = false;
  for (const auto& kv : e.value) {
    const Entry sub{e.key + "." + (kv.first.IsScalar() ? kv.first.Scalar() : "?"), kv.second, e.where};
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (k == "mean") {
      set_compute(st, parse_number(sub, 0, k_dlio_max_computation_s, what));
      has_mean = true;
    } else if (k == "stdev") {
      set_compute_stdev(st, parse_number(sub, 0, k_dlio_max_computation_s, "seconds"));
    } else if (k == "type") {
      if (parse_text(sub) != "normal") fail(sub, "a compute time drawn from other than a normal law is not modelled");
    } else {
      fail(sub, "a compute-time distribution other than {mean, stdev, type = normal} is not modelled");
    }
  }
  if (!has_mean) fail(e, "a distribution without a mean");
}

std::vector<KeySpec> train_keys() {
  return {
      {"train.epochs",
       [](State& st, const Entry& e) {
         st.out.train.epochs = static_cast<std::uint32_t>(parse_count(e, 1, k_train_max_epochs, "epochs"));
       }},
      {"train.computation_time", read_computation_time},
      {"train.computation_time_stdev",
       [](State& st, const Entry& e) {
         set_compute_stdev(st, parse_number(e, 0, k_dlio_max_computation_s, "seconds"));
       }},
      {"train.total_training_steps",
       [](State& st, const Entry& e) {
         const std::string& s = scalar(e);
         if (s != "-1" && s != "0") {
           fail(e, "train_epoch runs whole epochs; make the epoch shorter with dataset.num_files_train (only -1)");
         }
         note(st, e, "whole epochs");
       }},
      {"train.seed_change_epoch",
       [](State& st, const Entry& e) { record_any(st, e, "train_epoch permutes each epoch anew when shuffling"); }},
      {"train.seed",
       [](State& st, const Entry& e) {
         st.out.train.shuffle_seed = parse_count(e, 0, std::numeric_limits<std::uint64_t>::max(), "seed");
       }},
  };
}

void read_output_metric(State& st, const Entry& e) {
  if (!e.value.IsMap()) fail(e, "expected a map {exclude_start_steps, exclude_end_steps}, not " + shape_of(e.value));
  for (const auto& kv : e.value) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    const Entry sub{e.key + "." + k, kv.second, e.where};
    const std::uint64_t want = k == "exclude_start_steps" ? 1 : 0;
    if (k != "exclude_start_steps" && k != "exclude_end_steps") fail(sub, "not a key of output.metric");
    if (parse_count(sub, 0, k_workload_max_items_per_rank, "steps") != want) {
      fail(sub, "train_epoch's AU excludes exactly the first step (exclude_start_steps 1, exclude_end_steps 0)");
    }
  }
  note(st, e, "train_epoch's AU excludes the first step");
}

// The checkpoint keys that change nothing sluice models, with why.
void checkpoint_recorded(State& st, const Entry& e) {
  if (!st.checkpoint_run) return record_any(st, e, "no checkpoints (workflow.checkpoint)");
  if (e.key == "checkpoint.rank_sync") return record_any(st, e, "every burst starts after a barrier of all ranks");
  if (e.key == "checkpoint.randomize_tensor" || e.key == "checkpoint.ksm") {
    return record_any(st, e, "the tensors' contents: sluice writes a seeded pattern and verifies it when read");
  }
  if (e.key == "checkpoint.model_size") return model_size(st, e);
  record_any(st, e, "training's checkpoint schedule: unused without training");
}

void read_checkpoint_mode(State& st, const Entry& e) {
  if (parse_choice(e, {"default", "subset"}) == "subset") {
    fail(e,
         "a subset run (fewer ranks than the model's, each writing its full-run share) is not modelled; "
         "give model.parallelism.data for fewer ranks");
  }
  note(st, e, "every rank of the model writes");
}

// The checkpoint keys a checkpoint-only config maps onto checkpoint_burst.
void checkpoint_read(State& st, const Entry& e) {
  if (!st.checkpoint_run) return record_any(st, e, "no checkpoints (workflow.checkpoint)");
  if (e.key == "checkpoint.checkpoint_folder") {
    st.checkpoint_dir = fs_dir_of(e, "checkpoints");
    note(st, e, "the host's folder; the files go to " + st.checkpoint_dir + " of the file system");
  } else if (e.key == "checkpoint.fsync") {
    st.fsync = parse_bool(e);
  } else if (e.key == "checkpoint.num_checkpoints_write") {
    st.writes = parse_count(e, 1, k_checkpoint_max_bursts, "checkpoints");
  } else if (e.key == "checkpoint.num_checkpoints_read") {
    st.reads = parse_count(e, 0, k_checkpoint_max_bursts, "checkpoints");
  } else if (e.key == "checkpoint.time_between_checkpoints") {
    parse_number(e, 0, k_dlio_max_checkpoint_gap_s, "seconds");
    note(st, e, "the bursts run back to back, each after a barrier and timed on its own: no pause between them", true);
  } else if (e.key == "checkpoint.recovery_rank_shift") {
    const bool shift = parse_bool(e);
    note(st, e,
         "each rank reads back its own files; no client cache serves them either way (sluice's client keeps "
         "no file data)",
         shift);
  } else {
    read_checkpoint_mode(st, e);
  }
}

std::vector<KeySpec> other_keys() {
  const auto no_eval = [](State& st, const Entry& e) { record_any(st, e, "no evaluation (workflow.evaluation)"); };
  const auto output = [](State& st, const Entry& e) { record_any(st, e, "DLIO's own output"); };
  std::vector<KeySpec> k{
      {"evaluation.eval_time", no_eval},
      {"evaluation.eval_time_stdev", no_eval},
      {"evaluation.epochs_between_evals", no_eval},
      {"evaluation.eval_after_epoch", no_eval},
      {"metric.au",
       [](State& st, const Entry& e) {
         st.out.au_threshold = parse_number(e, 0, 1, "the AU threshold (a fraction)");
         note(st, e, "the AU a run must reach (MLPerf Storage); sl.workload.dlio's dlio.au");
       }},
      {"output.folder", output},
      {"output.log_file", output},
      {"output.metric", read_output_metric},
      {"profiling.profiler", output},
      {"profiling.iostat_devices", output},
  };
  for (const char* key : {"checkpoint_after_epoch", "epochs_between_checkpoints", "steps_between_checkpoints",
                          "model_size", "rank_sync", "randomize_tensor", "ksm"}) {
    k.push_back({std::string("checkpoint.") + key, checkpoint_recorded});
  }
  for (const char* key : {"checkpoint_folder", "fsync", "time_between_checkpoints", "num_checkpoints_write",
                          "num_checkpoints_read", "recovery_rank_shift", "mode"}) {
    k.push_back({std::string("checkpoint.") + key, checkpoint_read});
  }
  return k;
}

const std::vector<KeySpec>& key_specs() {
  static const std::vector<KeySpec> k = [] {
    std::vector<KeySpec> all;
    for (auto part : {model_keys(), workflow_keys(), dataset_keys(), reader_keys(), train_keys(), other_keys()}) {
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }();
  return k;
}

const KeySpec* spec_of(const std::string& key) {
  for (const KeySpec& s : key_specs()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

bool known_section(const std::string& s) {
  for (std::string_view k : k_sections) {
    if (k == s) return true;
  }
  return false;
}

}  // namespace

const std::vector<DlioSetting>& dlio_settings() {
  static const std::vector<DlioSetting> k{{"dataset_dir", "dataset.data_folder"},
                                          {"samples", "dataset.num_files_train"},
                                          {"sample_bytes", "dataset.record_length_bytes"},
                                          {"sample_bytes_stdev", "dataset.record_length_bytes_stdev"},
                                          {"samples_per_file", "dataset.num_samples_per_file"},
                                          {"batch_samples", "reader.batch_size"},
                                          {"compute_ns_per_step", "train.computation_time"},
                                          {"compute_time_stdev", "train.computation_time"},
                                          {"prefetch_depth", "reader.prefetch_size"},
                                          {"read_threads", "reader.read_threads"},
                                          {"epochs", "train.epochs"},
                                          {"shuffle", "reader.sample_shuffle"},
                                          {"shuffle_seed", "train.seed"}};
  return k;
}

const std::vector<std::string>& dlio_known_keys() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> out;
    for (const KeySpec& s : key_specs()) out.emplace_back(s.key);
    return out;
  }();
  return k;
}

const std::vector<DlioSetting>& dlio_checkpoint_settings() {
  static const std::vector<DlioSetting> k{{"dir", "checkpoint.checkpoint_folder"},
                                          {"shard_bytes", "model.num_layers"},
                                          {"checkpoints", "checkpoint.num_checkpoints_write"},
                                          {"read_back", "checkpoint.num_checkpoints_read"},
                                          {"read_checkpoints", "checkpoint.num_checkpoints_read"},
                                          {"sync", "checkpoint.fsync"}};
  return k;
}

// MLPerf Storage v2.0's processes per checkpointing model: Rules.md 4.6.1 and
// Table 2 ("Total Processes": 8, 64, 512, 1024; github.com/mlcommons/storage
// commit 0366ccfc9fc629dde3379a8022cb4c4ff8285b53), the same as
// LLM_ALLOWED_VALUES' closed GPU counts in mlpstorage/config.py (commit
// ac0424faa81f14d1a542264f0316357e2f70f41f). Keyed by the configs' model.name.
std::uint64_t mlperf_checkpoint_ranks(const std::string& model) {
  static const std::map<std::string, std::uint64_t, std::less<>> k{
      {"llama_8b", 8}, {"llama_70b", 64}, {"llama_405b", 512}, {"llama_1t", 1024}};
  const auto it = k.find(model);
  return it == k.end() ? 0 : it->second;
}

// DLIO's checkpoint sizes: argonne-lcf/dlio_benchmark
// dlio_benchmark/checkpointing/base_checkpointing.py (read as in the fork
// LouisDDN/dlio_benchmark, commit 5bf0abc413ef4af5b0fccebac52655f15901952a,
// which carries upstream's model.parallelism.data): get_num_parameters,
// get_layer_parameters, get_layer_index, get_optimization_groups, __init__
// and save_checkpoint. With h hidden, f ffn, V vocab, L layers, kv =
// h / heads x kv_heads, the parameters are
//   P = 2 V h + L (h + h (h + 2 kv) + h h + h + 3 h f) + h.
std::uint64_t dlio_parameters(const DlioTransformer& m) {
  const std::uint64_t h = m.hidden;
  const std::uint64_t kv = h / m.heads * m.kv_heads;
  const std::uint64_t layer = h + h * (h + 2 * kv) + h * h + h + 2 * h * m.ffn_hidden + h * m.ffn_hidden;
  return 2 * m.vocab * h + m.layers * layer + h;
}

namespace {

// Elements of layer `index` on one rank: 0 the embedding, L+1 the head (each
// V h / tensor), L+2 the final norm (h), the others a transformer layer split
// by tensor; ZeRO 3 shards all of it over the data-parallel ranks (sf).
std::uint64_t layer_elements(const DlioTransformer& m, std::uint64_t index) {
  const std::uint64_t sf = m.zero_stage >= 3 ? m.data : 1;
  const std::uint64_t h = m.hidden;
  const std::uint64_t tp = m.tensor;
  if (index == 0 || index == m.layers + 1) return h * m.vocab / tp / sf;
  if (index == m.layers + 2) return h / sf;
  const std::uint64_t kv = h / m.heads * m.kv_heads;
  return h / sf + h * (h + 2 * kv) / tp / sf + h * h / tp / sf + h / sf + h * 2 * m.ffn_hidden / tp / sf +
         h * m.ffn_hidden / tp / sf;
}

// The layers of pipeline stage `stage`, first and last (get_layer_index):
// transformer layers 1..L split as evenly as may be, the first stage also
// holding layer 0, the last layers L+1 and L+2.
std::pair<std::uint64_t, std::uint64_t> stage_layers(const DlioTransformer& m, std::uint64_t stage) {
  const std::uint64_t per = m.layers / m.pipeline;
  const std::uint64_t extra = m.layers % m.pipeline;
  std::uint64_t first = stage < extra ? stage * (per + 1) + 1 : extra * (per + 1) + (stage - extra) * per + 1;
  std::uint64_t last = stage < extra ? first + per : first + per - 1;
  if (stage + 1 == m.pipeline) last = m.layers + 2;
  if (stage == 0) first = 0;
  return {first, last};
}

}  // namespace

// Per rank: its layers' model state, written by every rank under ZeRO 0
// (those below tensor x pipeline) and 3, by data-parallel rank 0 only under
// ZeRO 1 and 2; and its optimizer state, three fp32-like groups of P / ranks
// (ZeRO > 0; P / (tensor x pipeline) under ZeRO 0) and three of 5 h each.
std::uint64_t dlio_rank_checkpoint_bytes(const DlioTransformer& m, std::uint64_t rank) {
  const std::uint64_t mp = m.tensor * m.pipeline;
  if (m.zero_stage == 0 && rank >= mp) return 0;  // rank_to_checkpoint is rank 0 then
  std::uint64_t model = 0;
  const bool writes_model = m.zero_stage == 0 || m.zero_stage == 3 || rank / mp == 0;
  if (writes_model) {
    const auto [first, last] = stage_layers(m, rank / m.tensor % m.pipeline);
    for (std::uint64_t i = first; i <= last; ++i) model += layer_elements(m, i);
  }
  const std::uint64_t share = dlio_parameters(m) / (m.zero_stage > 0 ? m.data * mp : mp);
  return model * m.model_dtype_bytes + (3 * share + 15 * m.hidden) * m.optimizer_dtype_bytes;
}

namespace {

// The file's keys as dotted entries, then the overrides over them.
class ConfigReader {
 public:
  explicit ConfigReader(std::string name) : name_(std::move(name)) {}

  void load(std::string_view text);
  void apply(const std::vector<DlioOverride>& overrides);
  DlioWorkload finish();

 private:
  std::string where(const YAML::Node& n) const { return name_ + ":" + std::to_string(n.Mark().line + 1); }
  void add(Entry e, bool replace);
  void section(const std::string& name, const YAML::Node& key, const YAML::Node& value);
  void check_key(const Entry& e) const;
  void check_format(const State& st) const;
  void set_samples(State& st) const;
  bool flag(const std::string& key, bool fallback) const;
  void check_required(const State& st, const std::vector<std::pair<std::string, std::string>>& keys) const;
  void check_transformer(State& st) const;
  void set_data_ranks(State& st) const;
  void finish_checkpoint(State& st) const;
  [[noreturn]] void refuse(const State& st, const std::string& key, const std::string& why) const;
  const Entry& entry(const std::string& key) const;

  std::string name_;
  std::vector<Entry> entries_;
};

void ConfigReader::add(Entry e, bool replace) {
  for (Entry& old : entries_) {
    if (old.key != e.key) continue;
    if (!replace) throw DlioError{e.where + ": " + e.key + ": given twice (first at " + old.where + ")"};
    old = std::move(e);
    return;
  }
  if (entries_.size() >= k_dlio_max_keys) {
    throw DlioError{e.where + ": more than " + std::to_string(k_dlio_max_keys) + " keys"};
  }
  entries_.push_back(std::move(e));
}

void ConfigReader::section(const std::string& name, const YAML::Node& key, const YAML::Node& value) {
  if (!known_section(name)) {
    std::vector<std::string> all(std::begin(k_sections), std::end(k_sections));
    const std::string near = closest_name(name, all);
    throw DlioError{where(key) + ": " + name + ": unknown section" +
                    (near.empty() ? " (DLIO's: " + join_names(all) + ")" : "; did you mean \"" + near + "\"?")};
  }
  if (name == "framework" || (name == "model" && value.IsScalar())) {
    add({name == "model" ? "model.name" : name, value, where(key)}, false);
    return;
  }
  if (value.IsNull()) return;
  if (!value.IsMap()) throw DlioError{where(key) + ": " + name + ": expected a map of keys, not " + shape_of(value)};
  for (const auto& kv : value) {
    if (!kv.first.IsScalar()) throw DlioError{where(kv.first) + ": " + name + ": a key must be a name"};
    const std::string dotted = name + "." + kv.first.Scalar();
    const bool model_map =
        std::find(std::begin(k_model_maps), std::end(k_model_maps), dotted) != std::end(k_model_maps);
    if (!model_map || !kv.second.IsMap()) {
      if (!model_map || !kv.second.IsNull()) add({dotted, kv.second, where(kv.first)}, false);
      continue;
    }
    for (const auto& sub : kv.second) {
      if (!sub.first.IsScalar()) throw DlioError{where(sub.first) + ": " + dotted + ": a key must be a name"};
      add({dotted + "." + sub.first.Scalar(), sub.second, where(sub.first)}, false);
    }
  }
}

void ConfigReader::load(std::string_view text) {
  if (text.size() > k_dlio_max_config_bytes) {
    throw DlioError{name_ + ": " + std::to_string(text.size()) + " bytes, at most " +
                    std::to_string(k_dlio_max_config_bytes)};
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw DlioError{name_ + ":" + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg};
  }
  if (root.IsNull()) throw DlioError{name_ + ": empty: expected DLIO's sections (dataset, reader, train, ...)"};
  if (!root.IsMap()) {
    throw DlioError{where(root) + ": expected DLIO's sections (dataset, reader, train, ...), not " + shape_of(root)};
  }
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) throw DlioError{where(kv.first) + ": a section's name must be a name"};
    section(kv.first.Scalar(), kv.first, kv.second);
  }
}

void ConfigReader::apply(const std::vector<DlioOverride>& overrides) {
  for (const DlioOverride& o : overrides) {
    const std::string at = name_ + ": overrides[\"" + o.key + "\"]";
    const std::size_t dot = o.key.find('.');
    const std::string sec = o.key.substr(0, dot);
    if (!known_section(sec) || (dot == std::string::npos && o.key != "framework")) {
      throw DlioError{at + ": expected \"section.key\" of DLIO's sections (\"reader.batch_size\")"};
    }
    if (o.value.size() > k_dlio_max_text_chars) throw DlioError{at + ": a value longer than the limit"};
    add({o.key == "model" ? "model.name" : o.key, YAML::Node(o.value), at}, true);
  }
}

void ConfigReader::check_key(const Entry& e) const {
  if (spec_of(e.key) != nullptr) return;
  const std::string sec = e.key.substr(0, e.key.find('.'));
  std::vector<std::string> same;
  for (const std::string& k : dlio_known_keys()) {
    if (k.rfind(sec + ".", 0) == 0) same.push_back(k);
  }
  const std::string near = closest_name(e.key, same);
  throw DlioError{e.where + ": " + e.key + ": unknown key" +
                  (near.empty() ? " (" + sec + " has " + join_names(same) + ")" : "; did you mean \"" + near + "\"?")};
}

const Entry& ConfigReader::entry(const std::string& key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return e;
  }
  throw std::logic_error("internal error: no entry " + key);
}

void ConfigReader::check_format(const State& st) const {
  if (st.samples_per_file > 1 && whole_file_format(st.format)) {
    const std::string key =
        st.given.count("dataset.num_samples_per_file") != 0 ? "dataset.num_samples_per_file" : "dataset.format";
    fail(entry(key), std::to_string(st.samples_per_file) + " samples per " + st.format +
                         " file: DLIO's reader loads the whole file and serves its samples from memory, which "
                         "train_epoch does not model (it reads each sample on its own); modelled with 1");
  }
}

void ConfigReader::set_samples(State& st) const {
  if (st.files > k_workload_max_items_per_rank / st.samples_per_file) {
    fail(entry("dataset.num_files_train"),
         std::to_string(st.files) + " files x " + std::to_string(st.samples_per_file) + " samples: more than " +
             std::to_string(k_workload_max_items_per_rank) + " samples (k_workload_max_items_per_rank)");
  }
  TrainEpochConfig& t = st.out.train;
  t.samples = st.files * st.samples_per_file;
  t.samples_per_file = static_cast<std::uint32_t>(st.samples_per_file);
  t.sample_bytes = static_cast<std::uint64_t>(std::llround(st.record_bytes));
  t.prefetch_depth = st.prefetch.value_or(0) == 0 ? k_dlio_zero_prefetch_batches : *st.prefetch;
  // A tfrecord file is streamed in order and its records shuffled in memory
  // (shuffle_size); where a file holds one sample, shuffling files is
  // shuffling samples.
  const bool streamed = st.format == "tfrecord" && st.samples_per_file > 1;
  t.shuffle = !streamed && (st.sample_shuffle || st.file_shuffle);
}

// Every rank's bytes into c's total, least and most. A rank's bytes depend
// on its pipeline stage and on whether it is data-parallel rank 0, not on its
// tensor rank: one rank of each kind per stage stands for the others, so the
// sum takes O(layers), not O(ranks x layers).
void add_rank_bytes(DlioCheckpoint& c) {
  const DlioTransformer& m = c.transformer;
  c.min_rank_bytes = std::numeric_limits<std::uint64_t>::max();
  const auto add = [&](std::uint64_t bytes, std::uint64_t count) {
    c.checkpoint_bytes += bytes * count;
    c.min_rank_bytes = std::min(c.min_rank_bytes, bytes);
    c.max_rank_bytes = std::max(c.max_rank_bytes, bytes);
  };
  for (std::uint64_t stage = 0; stage < m.pipeline; ++stage) {
    add(dlio_rank_checkpoint_bytes(m, stage * m.tensor), m.tensor);
    if (m.data > 1) {
      add(dlio_rank_checkpoint_bytes(m, m.tensor * m.pipeline + stage * m.tensor), m.tensor * (m.data - 1));
    }
  }
}

// A refusal naming the key's place, or the file where the key is a default.
void ConfigReader::refuse(const State& st, const std::string& key, const std::string& why) const {
  if (st.given.count(key) != 0) fail(entry(key), why);
  throw DlioError{name_ + ": " + key + ": " + why};
}

bool ConfigReader::flag(const std::string& key, bool fallback) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return parse_bool(e);
  }
  return fallback;
}

void ConfigReader::check_required(const State& st, const std::vector<std::pair<std::string, std::string>>& keys) const {
  for (const auto& [key, what] : keys) {
    const bool alias = key == "dataset.record_length_bytes" && st.given.count("dataset.record_length") != 0;
    if (st.given.count(key) == 0 && !alias) throw DlioError{name_ + ": " + key + ": missing (" + what + ")"};
  }
}

// The sections DLIO reads only when it trains.
bool training_key(const std::string& key) {
  for (const char* s : {"dataset.", "reader.", "train.", "evaluation.", "metric."}) {
    if (key.rfind(s, 0) == 0) return true;
  }
  return false;
}

DlioWorkload ConfigReader::finish() {
  State st;
  TrainEpochConfig& t = st.out.train;
  t.setup_dataset = true;  // sluice's file system starts empty
  t.dataset_dir = k_dlio_default_dataset_dir;
  t.read_threads = k_dlio_default_read_threads;
  t.epochs = k_dlio_default_epochs;
  t.shuffle_seed = k_dlio_default_seed;
  // DLIO's workflow defaults: train on, checkpoint off (docs/source/config.rst).
  st.checkpoint_run = !flag("workflow.train", true) && flag("workflow.checkpoint", false);
  for (const Entry& e : entries_) {
    check_key(e);
    if (st.checkpoint_run && training_key(e.key)) {
      record_any(st, e, "unused: DLIO does not train when workflow.train is false");
    } else {
      spec_of(e.key)->handle(st, e);
    }
    st.given[e.key] = e.where;
  }
  if (st.checkpoint_run) {
    finish_checkpoint(st);
    return std::move(st.out);
  }
  check_required(st, {{"dataset.format", "the files' format, which sets the read pattern"},
                      {"dataset.num_files_train", "the training set's files"},
                      {"dataset.record_length_bytes", "the bytes of one sample (or dataset.record_length)"},
                      {"reader.data_loader", "pytorch or tensorflow"},
                      {"reader.batch_size", "samples per step and rank"},
                      {"train.computation_time", "seconds of compute per step"}});
  check_format(st);
  set_samples(st);
  if (Status s = TrainEpoch::validate(st.out.train); !s.ok()) throw DlioError{name_ + ": " + s.message()};
  return std::move(st.out);
}

// The data-parallel ranks: model.parallelism.data, else MLPerf Storage's
// ranks of the model over tensor x pipeline.
void ConfigReader::set_data_ranks(State& st) const {
  DlioTransformer& m = st.model;
  const std::uint64_t mlperf = mlperf_checkpoint_ranks(st.out.model);
  if (st.data_ranks) {
    m.data = *st.data_ranks;
  } else if (mlperf == 0) {
    throw DlioError{name_ + ": model.parallelism.data: missing (the data-parallel ranks; MLPerf Storage sets them " +
                    "only for llama_8b, llama_70b, llama_405b and llama_1t)"};
  } else if (mlperf % (m.tensor * m.pipeline) != 0) {
    refuse(st, "model.parallelism.tensor",
           "MLPerf Storage's " + std::to_string(mlperf) + " ranks of " + st.out.model +
               " are no multiple of tensor x pipeline; give " + "model.parallelism.data");
  } else {
    m.data = mlperf / (m.tensor * m.pipeline);
  }
  if (m.ranks() > k_dlio_max_ranks) {
    refuse(
        st, st.data_ranks ? "model.parallelism.data" : "model.parallelism.tensor",
        std::to_string(m.ranks()) + " ranks (tensor x pipeline x data), at most " + std::to_string(k_dlio_max_ranks));
  }
}

void ConfigReader::check_transformer(State& st) const {
  check_required(st, {{"model.num_layers", "the transformer's layers"},
                      {"checkpoint.num_checkpoints_write", "checkpoints written"},
                      {"checkpoint.num_checkpoints_read", "checkpoints read back after the writes"}});
  DlioTransformer& m = st.model;
  m.zero_stage = st.zero_stage.value_or(m.zero_stage);
  if (m.zero_stage == 3 && m.pipeline > 1) {
    refuse(st, "model.parallelism.zero_stage", "ZeRO 3 with pipeline parallelism: DLIO refuses it too");
  }
  if (m.heads > m.hidden) fail(entry("model.transformer.num_attention_heads"), "more heads than hidden_size");
  if (m.kv_heads > m.heads) fail(entry("model.transformer.num_kv_heads"), "more than num_attention_heads");
  if (m.pipeline > m.layers) {
    refuse(st, "model.parallelism.pipeline",
           std::to_string(m.pipeline) + " pipeline stages of " + std::to_string(m.layers) +
               " layers: a stage without layers");
  }
  if (st.reads > st.writes) {
    fail(entry("checkpoint.num_checkpoints_read"), std::to_string(st.reads) + " reads of " + std::to_string(st.writes) +
                                                       " checkpoints written: the reads are of this run's");
  }
  set_data_ranks(st);
}

void ConfigReader::finish_checkpoint(State& st) const {
  check_transformer(st);
  DlioCheckpoint c;
  c.transformer = st.model;
  add_rank_bytes(c);
  const std::uint64_t ranks = st.model.ranks();
  CheckpointConfig& k = c.config;
  k.shard_bytes = (c.checkpoint_bytes + ranks - 1) / ranks;
  if (k.shard_bytes > k_workload_max_bytes_per_rank) {
    fail(entry("model.num_layers"), std::to_string(k.shard_bytes) + " bytes per rank, more than " +
                                        std::to_string(k_workload_max_bytes_per_rank) +
                                        " (k_workload_max_bytes_per_rank)");
  }
  if (c.min_rank_bytes != c.max_rank_bytes) {
    st.out.notes.push_back(
        {"model.parallelism",
         std::to_string(c.min_rank_bytes) + ".." + std::to_string(c.max_rank_bytes) + " bytes per rank",
         st.given.count("model.parallelism.zero_stage") != 0 ? st.given.at("model.parallelism.zero_stage") : name_,
         "DLIO's ranks write unequal shares (embedding and head on the first and last pipeline "
         "stages; ZeRO 1 and 2: the model state on data-parallel rank 0 only; ZeRO 0: only the "
         "first tensor x pipeline ranks write); every rank writes the mean, " +
             std::to_string(k.shard_bytes) + " bytes: the same total",
         true});
  }
  k.dir = st.checkpoint_dir;
  k.checkpoints = static_cast<std::uint32_t>(st.writes);
  k.sync = st.fsync;
  k.read_back = st.reads > 0;
  k.read_checkpoints = static_cast<std::uint32_t>(std::max<std::uint64_t>(st.reads, 1));
  c.reads = static_cast<std::uint32_t>(st.reads);
  if (Status s = CheckpointBurst::validate(k); !s.ok()) throw DlioError{name_ + ": " + s.message()};
  st.out.checkpoint = std::move(c);
}

}  // namespace

Result<DlioWorkload> read_dlio_config(std::string_view text, const std::string& name,
                                      const std::vector<DlioOverride>& overrides) {
  try {
    ConfigReader reader(name);
    reader.load(text);
    reader.apply(overrides);
    return reader.finish();
  } catch (const DlioError& e) {
    return error(StatusCode::invalid_argument, e.message);
  } catch (const YAML::Exception& e) {
    return error(StatusCode::invalid_argument, name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return error(StatusCode::invalid_argument, name + ": " + e.what());
  }
}

}  // namespace sluice::scenario
