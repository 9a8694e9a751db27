#include "scenarios/lua/dlio_config.hpp"

#include <yaml-cpp/yaml.h>

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

std::vector<KeySpec> model_keys() {
  return {
      {"model.name", [](State& st, const Entry& e) { st.out.model = parse_text(e); }},
      {"model.type", [](State& st, const Entry& e) { record_any(st, e, "the model's kind: a label"); }},
      {"model.model_size",
       [](State& st, const Entry& e) { record_any(st, e, "checkpoint bytes: no checkpoints here"); }},
      {"model.model_size_bytes",
       [](State& st, const Entry& e) { record_any(st, e, "checkpoint bytes: no checkpoints here"); }},
      {"model.model_datatype", [](State& st, const Entry& e) { record_any(st, e, "checkpoint layout"); }},
      {"model.optimizer_datatype", [](State& st, const Entry& e) { record_any(st, e, "checkpoint layout"); }},
      {"model.optimization_groups", [](State& st, const Entry& e) { record_any(st, e, "checkpoint layout"); }},
      {"model.num_layers", [](State& st, const Entry& e) { record_any(st, e, "checkpoint layout"); }},
      {"model.layer_parameters", [](State& st, const Entry& e) { record_any(st, e, "checkpoint layout"); }},
      {"model.parallelism", [](State& st, const Entry& e) { record_any(st, e, "checkpoint layout"); }},
      {"model.transformer", [](State& st, const Entry& e) { record_any(st, e, "checkpoint layout"); }},
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
       [](State&, const Entry& e) {
         if (!parse_bool(e)) {
           fail(e,
                "a run without training (data generation or checkpoints alone) is no train_epoch; "
                "sl.workload.checkpoint_burst writes checkpoints");
         }
       }},
      {"workflow.evaluation",
       [](State& st, const Entry& e) {
         refuse_if_true(st, e, "evaluation steps are not modelled: train_epoch reads the training set only",
                        "no evaluation");
       }},
      {"workflow.checkpoint",
       [](State& st, const Entry& e) {
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
         std::string dir = parse_text(e);
         while (!dir.empty() && dir.back() == '/') dir.pop_back();
         std::string last = dir.substr(dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/') + 1);
         for (char& c : last) {
           if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != '_') c = '_';
         }
         st.out.train.dataset_dir = "/" + (last.empty() || last == "." || last == ".." ? "dataset" : last);
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

std::vector<KeySpec> other_keys() {
  const auto no_eval = [](State& st, const Entry& e) { record_any(st, e, "no evaluation (workflow.evaluation)"); };
  const auto no_ckpt = [](State& st, const Entry& e) { record_any(st, e, "no checkpoints (workflow.checkpoint)"); };
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
  for (const char* key :
       {"checkpoint_folder", "checkpoint_after_epoch", "epochs_between_checkpoints", "steps_between_checkpoints",
        "model_size", "fsync", "time_between_checkpoints", "num_checkpoints_write", "num_checkpoints_read",
        "recovery_rank_shift", "rank_sync", "mode", "randomize_tensor", "ksm"}) {
    k.push_back({std::string("checkpoint.") + key, no_ckpt});
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
    add({name + "." + kv.first.Scalar(), kv.second, where(kv.first)}, false);
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

DlioWorkload ConfigReader::finish() {
  State st;
  TrainEpochConfig& t = st.out.train;
  t.setup_dataset = true;  // sluice's file system starts empty
  t.dataset_dir = k_dlio_default_dataset_dir;
  t.read_threads = k_dlio_default_read_threads;
  t.epochs = k_dlio_default_epochs;
  t.shuffle_seed = k_dlio_default_seed;
  for (const Entry& e : entries_) {
    check_key(e);
    spec_of(e.key)->handle(st, e);
    st.given[e.key] = e.where;
  }
  const std::pair<const char*, const char*> required[] = {
      {"dataset.format", "the files' format, which sets the read pattern"},
      {"dataset.num_files_train", "the training set's files"},
      {"dataset.record_length_bytes", "the bytes of one sample (or dataset.record_length)"},
      {"reader.data_loader", "pytorch or tensorflow"},
      {"reader.batch_size", "samples per step and rank"},
      {"train.computation_time", "seconds of compute per step"}};
  for (const auto& [key, what] : required) {
    const bool alias =
        std::string(key) == "dataset.record_length_bytes" && st.given.count("dataset.record_length") != 0;
    if (st.given.count(key) == 0 && !alias) throw DlioError{name_ + ": " + key + ": missing (" + what + ")"};
  }
  check_format(st);
  set_samples(st);
  if (Status s = TrainEpoch::validate(st.out.train); !s.ok()) throw DlioError{name_ + ": " + s.message()};
  return std::move(st.out);
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
