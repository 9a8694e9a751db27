// The DLIO workload reader (scenarios/lua/dlio_config.hpp) and
// sl.workload.dlio (dlio_workload.hpp), issue 52 item 1 (ctest label mlperf):
// MLPerf Storage's shipped configs land in train_epoch's fields, overrides
// apply with the same checks, and every malformed file is refused with the
// exact message naming file:line:key.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/lua/dlio_config.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sluice::scenario {
namespace {

const std::string k_mlperf = std::string(SLUICE_SOURCE_DIR) + "/lua_scripts/mlperf/";

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Shipped {
  const char* file;
  const char* model;
  const char* dataset_dir;
  std::uint64_t samples;
  std::uint64_t sample_bytes;
  std::uint32_t samples_per_file;
  std::uint32_t batch;
  TimeNs compute_ns;
  std::uint32_t read_threads;
  bool shuffle;
  double au;
  std::uint64_t size_stdev;  // record_length_bytes_stdev (0: not given)
};

// The published values (lua_scripts/mlperf/*.yaml name their sources).
const Shipped k_shipped[] = {
    {"unet3d_a100.yaml", "unet3d", "/unet3d", 168, 146'600'628, 1, 7, 636 * k_ns_per_ms, 4, true, 0.90, 68'341'808},
    {"unet3d_h100.yaml", "unet3d", "/unet3d", 168, 146'600'628, 1, 7, 323 * k_ns_per_ms, 4, true, 0.90, 68'341'808},
    {"resnet50_a100.yaml", "resnet50", "/resnet50", 1024 * 1251, 114'660, 1251, 400, 435 * k_ns_per_ms, 8, false, 0.90,
     0},
    {"resnet50_h100.yaml", "resnet50", "/resnet50", 1024 * 1251, 114'660, 1251, 400, 224 * k_ns_per_ms, 8, false, 0.90,
     0},
    {"cosmoflow_a100.yaml", "cosmoflow", "/cosmoflow", 524'288, 2'828'486, 1, 1, 5'510'000, 4, true, 0.70, 71'311},
    {"cosmoflow_h100.yaml", "cosmoflow", "/cosmoflow", 524'288, 2'828'486, 1, 1, 3'500'000, 4, true, 0.70, 71'311},
};

bool has_note(const DlioWorkload& w, const std::string& key, bool approximated) {
  for (const DlioNote& n : w.notes) {
    if (n.key == key && n.approximated == approximated) return true;
  }
  return false;
}

TEST(DlioConfig, EachShippedMlperfConfigLandsInTrainEpochsFields) {
  for (const Shipped& s : k_shipped) {
    SCOPED_TRACE(s.file);
    Result<DlioWorkload> w = read_dlio_config(file_text(k_mlperf + s.file), s.file);
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(w->model, s.model);
    EXPECT_EQ(w->train.dataset_dir, s.dataset_dir);
    EXPECT_EQ(w->train.samples, s.samples);
    EXPECT_EQ(w->train.sample_bytes, s.sample_bytes);
    EXPECT_EQ(w->train.samples_per_file, s.samples_per_file);
    EXPECT_EQ(w->train.batch_samples, s.batch);
    EXPECT_EQ(w->train.compute_ns_per_step, s.compute_ns);
    EXPECT_EQ(w->train.read_threads, s.read_threads);
    EXPECT_EQ(w->train.prefetch_depth, k_dlio_zero_prefetch_batches);  // none gives prefetch_size
    EXPECT_EQ(w->train.epochs, 5u);
    EXPECT_EQ(w->train.shuffle, s.shuffle);
    EXPECT_TRUE(w->train.setup_dataset);
    ASSERT_TRUE(w->au_threshold.has_value());
    EXPECT_DOUBLE_EQ(*w->au_threshold, s.au);
    EXPECT_EQ(w->train.sample_bytes_stdev, s.size_stdev);  // modelled now, not approximated
    EXPECT_FALSE(has_note(*w, "dataset.record_length_bytes_stdev", true));
    EXPECT_EQ(w->train.compute_time_stdev, 0);  // no shipped config gives one
    EXPECT_TRUE(has_note(*w, "framework", false));
  }
}

TEST(DlioConfig, RecordsKeysThatChangeNoStorageBehaviourWithTheirLine) {
  Result<DlioWorkload> w = read_dlio_config(file_text(k_mlperf + "unet3d_h100.yaml"), "unet3d_h100.yaml");
  ASSERT_TRUE(w.ok()) << w.status().message();
  bool found = false;
  for (const DlioNote& n : w->notes) {
    if (n.key != "dataset.record_length_bytes_resize") continue;
    found = true;
    EXPECT_EQ(n.value, "2097152");
    EXPECT_EQ(n.where, "unet3d_h100.yaml:29");
    EXPECT_FALSE(n.approximated);
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(has_note(*w, "checkpoint.checkpoint_folder", false));
  EXPECT_TRUE(has_note(*w, "model.model_size", false));
}

TEST(DlioConfig, SpreadsOfSampleSizeAndComputeTimeMapOntoTrainEpochsStdevs) {
  const std::string text = file_text(k_mlperf + "unet3d_h100.yaml");
  Result<DlioWorkload> w = read_dlio_config(
      text, "u.yaml", {{"train.computation_time_stdev", "0.05"}, {"dataset.record_length_bytes_stdev", "1000.4"}});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->train.compute_time_stdev, 50 * k_ns_per_ms);
  EXPECT_EQ(w->train.sample_bytes_stdev, 1000u);
  for (const DlioNote& n : w->notes) EXPECT_FALSE(n.approximated && n.key.find("stdev") != std::string::npos) << n.key;
}

TEST(DlioConfig, OverridesApplyOverTheFileWithTheSameChecks) {
  const std::string text = file_text(k_mlperf + "unet3d_h100.yaml");
  Result<DlioWorkload> w = read_dlio_config(text, "u.yaml",
                                            {{"reader.batch_size", "4"},
                                             {"train.computation_time", "0.5"},
                                             {"reader.prefetch_size", "3"},
                                             {"dataset.num_files_train", "40"},
                                             {"workflow.checkpoint", "false"}});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->train.batch_samples, 4u);
  EXPECT_EQ(w->train.compute_ns_per_step, 500 * k_ns_per_ms);
  EXPECT_EQ(w->train.prefetch_depth, 3u);
  EXPECT_EQ(w->train.samples, 40u);

  const std::vector<std::pair<DlioOverride, std::string>> bad = {
      {{"reader.batch_size", "-1"},
       "u.yaml: overrides[\"reader.batch_size\"]: reader.batch_size: -1 is negative; "
       "expected samples per batch"},
      {{"reader.batch_sise", "4"},
       "u.yaml: overrides[\"reader.batch_sise\"]: reader.batch_sise: unknown key; did you "
       "mean \"reader.batch_size\"?"},
      {{"batch_size", "4"},
       "u.yaml: overrides[\"batch_size\"]: expected \"section.key\" of DLIO's sections (\"reader.batch_size\")"},
      {{"dataset.format", "parquet"},
       "u.yaml: overrides[\"dataset.format\"]: dataset.format: no read pattern for format \"parquet\": modelled are "
       "npz, npy, png, jpeg (a whole file per sample) and tfrecord, hdf5 (samples read where they lie in the file)"},
      {{"workflow.evaluation", "true"},
       "u.yaml: overrides[\"workflow.evaluation\"]: workflow.evaluation: evaluation "
       "steps are not modelled: train_epoch reads the training set only"},
  };
  for (const auto& [o, message] : bad) {
    Result<DlioWorkload> r = read_dlio_config(text, "u.yaml", {o});
    ASSERT_FALSE(r.ok()) << o.key;
    EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(r.status().message(), message);
  }
}

// A small valid config; each malformed case replaces one of its lines.
const std::vector<std::string> k_base = {
    "model:",                        // 1
    "  name: tiny",                  // 2
    "framework: pytorch",            // 3
    "workflow:",                     // 4
    "  train: True",                 // 5
    "dataset:",                      // 6
    "  data_folder: data/tiny/",     // 7
    "  format: npz",                 // 8
    "  num_files_train: 16",         // 9
    "  num_samples_per_file: 1",     // 10
    "  record_length_bytes: 65536",  // 11
    "reader:",                       // 12
    "  data_loader: pytorch",        // 13
    "  batch_size: 2",               // 14
    "  read_threads: 2",             // 15
    "train:",                        // 16
    "  epochs: 1",                   // 17
    "  computation_time: 0.01",      // 18
    "metric:",                       // 19
    "  au: 0.9",                     // 20
};

std::string with_line(int line, const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < k_base.size(); ++i) out += (static_cast<int>(i) + 1 == line ? text : k_base[i]) + "\n";
  return out;
}

TEST(DlioConfig, TheBaseOfTheMalformedCasesIsValid) {
  Result<DlioWorkload> w = read_dlio_config(with_line(0, ""), "bad.yaml");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->train.samples, 16u);
  EXPECT_EQ(w->train.dataset_dir, "/tiny");
  EXPECT_EQ(w->train.compute_ns_per_step, 10 * k_ns_per_ms);
}

struct Malformed {
  int line;
  const char* text;
  const char* message;
};

const Malformed k_malformed[] = {
    // YAML syntax, with its line
    {8, "  format: [npz", "bad.yaml:9: not YAML: end of sequence flow not found"},
    // wrong types
    {14, "  batch_size: seven", "bad.yaml:14: reader.batch_size: expected samples per batch, not \"seven\""},
    {14, "  batch_size: 2.5", "bad.yaml:14: reader.batch_size: expected a whole number (samples per batch), not 2.5"},
    {5, "  train: maybe", "bad.yaml:5: workflow.train: expected true or false, not \"maybe\""},
    {20, "checkpoint: 5", "bad.yaml:20: checkpoint: expected a map of keys, not \"5\""},
    {3, "framework: [pytorch]", "bad.yaml:3: framework: expected a value, not a list"},
    {9, "  num_files_train: {a: 1}", "bad.yaml:9: dataset.num_files_train: expected a value, not a map"},
    // unknown section and key
    {19, "hydra:",
     "bad.yaml:19: hydra: unknown section (DLIO's: model, framework, workflow, dataset, reader, train, "
     "evaluation, checkpoint, metric, output, profiling)"},
    {19, "metrics:", "bad.yaml:19: metrics: unknown section; did you mean \"metric\"?"},
    {15, "  read_thread: 2", "bad.yaml:15: reader.read_thread: unknown key; did you mean \"reader.read_threads\"?"},
    // keys it cannot model
    {8, "  format: parquet",
     "bad.yaml:8: dataset.format: no read pattern for format \"parquet\": modelled are npz, npy, png, jpeg (a whole "
     "file per sample) and tfrecord, hdf5 (samples read where they lie in the file)"},
    {13, "  data_loader: dali",
     "bad.yaml:13: reader.data_loader: no read pattern for data loader \"dali\": modelled are pytorch and tensorflow"},
    {5, "  checkpoint: True",
     "bad.yaml:5: workflow.checkpoint: checkpoints during training are not modelled here; run "
     "sl.workload.checkpoint_burst beside it"},
    {10, "  num_samples_per_file: 4",
     "bad.yaml:10: dataset.num_samples_per_file: 4 samples per npz file: DLIO's reader loads the whole file and "
     "serves its samples from memory, which train_epoch does not model (it reads each sample on its own); "
     "modelled with 1"},
    {18, "  computation_time: {min: 0.1, max: 0.2, type: uniform}",
     "bad.yaml:18: train.computation_time.min: a compute-time distribution other than {mean, stdev, type = normal} "
     "is not modelled"},
    {15, "  read_threads: 0",
     "bad.yaml:15: reader.read_threads: 0 (loading on the training thread, no overlap with compute) is not modelled"},
    // negative and out-of-range sizes
    {11, "  record_length_bytes: -5",
     "bad.yaml:11: dataset.record_length_bytes: -5 is negative; expected bytes of one "
     "sample"},
    {11, "  record_length_bytes: 2e9",
     "bad.yaml:11: dataset.record_length_bytes: 2e9 is out of range: bytes of one sample from 1 to 1073741824"},
    {20, "  au: 1.5", "bad.yaml:20: metric.au: 1.5 is out of range: the AU threshold (a fraction) from 0 to 1"},
    // a key given twice
    {15, "  batch_size: 3", "bad.yaml:15: reader.batch_size: given twice (first at bad.yaml:14)"},
    // missing required keys
    {14, "", "bad.yaml: reader.batch_size: missing (samples per step and rank)"},
    {11, "", "bad.yaml: dataset.record_length_bytes: missing (the bytes of one sample (or dataset.record_length))"},
    {8, "", "bad.yaml: dataset.format: missing (the files' format, which sets the read pattern)"},
};

TEST(DlioConfig, RefusesMalformedFilesWithTheExactPlaceAndKey) {
  for (const Malformed& m : k_malformed) {
    Result<DlioWorkload> w = read_dlio_config(with_line(m.line, m.text), "bad.yaml");
    ASSERT_FALSE(w.ok()) << "line " << m.line << ": " << m.text;
    EXPECT_EQ(w.status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(w.status().message(), m.message) << "line " << m.line << ": " << m.text;
  }
}

TEST(DlioConfig, RefusesWhatIsNoConfigAtAll) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "bad.yaml: empty: expected DLIO's sections (dataset, reader, train, ...)"},
      {"- 1\n- 2\n", "bad.yaml:1: expected DLIO's sections (dataset, reader, train, ...), not a list"},
      {std::string(k_dlio_max_config_bytes + 1, '#'), "bad.yaml: 1048577 bytes, at most 1048576"},
  };
  for (const auto& [text, message] : cases) {
    Result<DlioWorkload> w = read_dlio_config(text, "bad.yaml");
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().message(), message);
  }
}

// MLPerf Storage v2.0's checkpointing configs (lua_scripts/mlperf/llama3_*.yaml)
// against DLIO's formula (dlio_config.cpp cites it), worked by hand:
//
// kv = h / heads x kv_heads; a transformer layer holds
//   h + h (h + 2 kv) + h h + h + 3 h f elements; P = 2 V h + L layer + h.
// 8B (h 4096, f 14336, V 128256, L 32, heads 32, kv_heads 8; TP 1, PP 1,
// ZeRO 3, 8 ranks so DP 8): kv = 1024, layer = 8192 + 25165824 + 16777216
// + 176160768 = 218112000, P = 1050673152 + 6979584000 + 4096 = 8030261248.
//   Model state, ZeRO 3 sharding every layer over DP 8 (fp16, 2 bytes):
//   embedding and head 525336576 / 8 = 65667072 each, norm 512, a layer
//   512 + 3145728 + 2097152 + 512 + 14680064 + 7340032 = 27264000, x 32 =
//   872448000; 1003782656 elements = 2007565312 bytes.
//   Optimizer (fp32, 4 bytes): 3 x P / 8 = 3011347968 plus 3 x 5h = 61440:
//   12045637632 bytes. Each rank: 14053202944; 8 ranks: 112425623552
//   (104.7 GiB; Table 2: "105 GB").
// 70B (h 8192, f 28672, L 80, heads 128, kv_heads 8; TP 8, PP 1, ZeRO 3, 64
// ranks so DP 8): kv = 512, layer = 847265792, P = 69882617856. Model per
// rank: embedding 8192 x 128256 / 8 / 8 = 16416768 (twice), norm 1024, a
// layer 1024 + 75497472/64 + 67108864/64 + 1024 + 469762048/64 + 234881024/64
// = 13240320 (x 80): 1092060160 elements = 2184120320 bytes. Optimizer:
// (3 x P / 64 + 15 x 8192) x 4 = (3 x 1091915904 + 122880) x 4 = 13103482368.
// Each rank: 15287602688; 64 ranks: 978406572032 (911.2 GiB; "912 GB").
// 405B (h 16384, f 53248, L 126, heads 128, kv_heads 8; TP 8, PP 32, ZeRO 1,
// 512 ranks so DP 2): kv = 1024, layer = 3187703808, P = 405853388800.
//   Optimizer on every rank: (3 x P / 512 + 15 x 16384) x 4 = (3 x 792682400
//   + 245760) x 4 = 9513171840. Model state on data-parallel rank 0 (ranks
//   0..255) only, by pipeline stage: 126 layers over 32 stages = 4 each for
//   stages 0..29, 3 for 30 and 31; a layer per tensor rank 16384 + 805306368/8
//   + 268435456/8 + 16384 + 1744830464/8 + 872415232/8 = 398491648, the
//   embedding and head 262668288, the norm 16384.
//   Rank 0 (stage 0: embedding + 4 layers): 1856634880 x 2 = 3713269760,
//   13226441600 in all; rank 8 (stage 1, 4 layers): 3187933184 -> 12701105024;
//   rank 255 (stage 31: 3 layers, head, norm): 1458159616 x 2 = 2916319232 ->
//   12429491072; rank 256 (data-parallel rank 1): 9513171840.
//   512 ranks: 5682508791808 (5292.2 GiB; Table 2 "5.29 TB").
// 1T (h 25872, f 98304, L 128, heads 192, kv_heads 32; TP 8, PP 64, ZeRO 1,
// 1024 ranks so DP 2): kv = 25872 / 192 (134) x 32 = 4288, P = 1183035102480;
// optimizer (3 x 1155307717 + 388080) x 4 = 13865244924; rank 0 adds 2 layers
// and the embedding, 5425047936 bytes; rank 1023 (data-parallel rank 1)
// writes the optimizer alone. 1024 ranks: 16564174094592 = 15426.6 GiB, where
// Table 2 says "18 TB" (the config's header keeps the miss visible).
struct CheckpointCase {
  const char* file;
  const char* model;
  std::uint64_t ranks;
  std::uint64_t parameters;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rank_bytes;  // rank, bytes of one checkpoint
  std::uint64_t checkpoint_bytes;
};

const CheckpointCase k_checkpoints[] = {
    {"llama3_8b.yaml", "llama_8b", 8, 8'030'261'248, {{0, 14'053'202'944}, {7, 14'053'202'944}}, 112'425'623'552},
    {"llama3_70b.yaml", "llama_70b", 64, 69'882'617'856, {{0, 15'287'602'688}, {63, 15'287'602'688}}, 978'406'572'032},
    {"llama3_405b.yaml",
     "llama_405b",
     512,
     405'853'388'800,
     {{0, 13'226'441'600}, {8, 12'701'105'024}, {255, 12'429'491'072}, {256, 9'513'171'840}},
     5'682'508'791'808},
    {"llama3_1t.yaml",
     "llama_1t",
     1024,
     1'183'035'102'480,
     {{0, 13'865'244'924 + 5'425'047'936}, {1023, 13'865'244'924}},
     16'564'174'094'592},
};

TEST(DlioConfig, EachMlperfCheckpointConfigWritesDliosBytesPerRank) {
  for (const CheckpointCase& k : k_checkpoints) {
    SCOPED_TRACE(k.file);
    Result<DlioWorkload> w = read_dlio_config(file_text(k_mlperf + k.file), k.file);
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE(w->checkpoint.has_value());
    const DlioCheckpoint& c = *w->checkpoint;
    EXPECT_EQ(w->model, k.model);
    EXPECT_EQ(c.transformer.ranks(), k.ranks);
    EXPECT_EQ(mlperf_checkpoint_ranks(k.model), k.ranks);
    EXPECT_EQ(dlio_parameters(c.transformer), k.parameters);
    for (const auto& [rank, bytes] : k.rank_bytes) {
      EXPECT_EQ(dlio_rank_checkpoint_bytes(c.transformer, rank), bytes) << "rank " << rank;
    }
    EXPECT_EQ(c.checkpoint_bytes, k.checkpoint_bytes);
    EXPECT_EQ(c.config.shard_bytes, (k.checkpoint_bytes + k.ranks - 1) / k.ranks);  // the ranks' mean
    EXPECT_EQ(c.config.checkpoints, 10u);
    EXPECT_EQ(c.reads, 10u);
    EXPECT_TRUE(c.config.read_back);
    EXPECT_EQ(c.config.read_checkpoints, 10u);
    EXPECT_TRUE(c.config.sync);  // checkpoint.fsync: True
    EXPECT_EQ(c.config.dir, std::string("/") + k.model);
    // Unequal ranks (405B, 1T) are an approximation, said so.
    EXPECT_EQ(has_note(*w, "model.parallelism", true), c.min_rank_bytes != c.max_rank_bytes);
    EXPECT_TRUE(has_note(*w, "checkpoint.time_between_checkpoints", true));
  }
}

TEST(DlioConfig, OverridesShrinkACheckpointConfig) {
  const std::string text = file_text(k_mlperf + "llama3_8b.yaml");
  Result<DlioWorkload> w = read_dlio_config(text, "l.yaml",
                                            {{"model.parallelism.data", "2"},
                                             {"model.num_layers", "2"},
                                             {"model.transformer.vocab_size", "1024"},
                                             {"checkpoint.num_checkpoints_write", "3"},
                                             {"checkpoint.num_checkpoints_read", "2"},
                                             {"checkpoint.fsync", "false"}});
  ASSERT_TRUE(w.ok()) << w.status().message();
  const DlioCheckpoint& c = *w->checkpoint;
  EXPECT_EQ(c.transformer.ranks(), 2u);
  // P = 2 x 1024 x 4096 + 2 x 218112000 + 4096 = 444616704; per rank (ZeRO 3
  // over 2): model (2 x 2097152 + 2 x 109056000 + 2048) x 2 = 444616704 bytes,
  // optimizer (3 x 222308352 + 61440) x 4 = 2667945984; 3112562688 in all.
  EXPECT_EQ(dlio_parameters(c.transformer), 444'616'704u);
  EXPECT_EQ(c.config.shard_bytes, 3'112'562'688u);
  EXPECT_EQ(c.config.checkpoints, 3u);
  EXPECT_EQ(c.config.read_checkpoints, 2u);
  EXPECT_FALSE(c.config.sync);
  Result<DlioWorkload> none = read_dlio_config(text, "l.yaml", {{"checkpoint.num_checkpoints_read", "0"}});
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->checkpoint->config.read_back);
}

// A small checkpoint-only config; each malformed case replaces one of its lines.
const std::vector<std::string> k_checkpoint_base = {
    "model:",                          // 1
    "  name: tiny_llm",                // 2
    "  type: transformer",             // 3
    "  num_layers: 4",                 // 4
    "  model_datatype: fp16",          // 5
    "  optimizer_datatype: fp32",      // 6
    "  parallelism:",                  // 7
    "    tensor: 2",                   // 8
    "    pipeline: 2",                 // 9
    "    zero_stage: 1",               // 10
    "    data: 2",                     // 11
    "  transformer:",                  // 12
    "    vocab_size: 1024",            // 13
    "    hidden_size: 256",            // 14
    "    ffn_hidden_size: 512",        // 15
    "    num_attention_heads: 8",      // 16
    "    num_kv_heads: 2",             // 17
    "workflow:",                       // 18
    "  train: False",                  // 19
    "  checkpoint: True",              // 20
    "checkpoint:",                     // 21
    "  checkpoint_folder: ckpt/tiny",  // 22
    "  num_checkpoints_write: 2",      // 23
    "  num_checkpoints_read: 1",       // 24
    "  fsync: True",                   // 25
    "dataset:",                        // 26
    "  format: parquet",               // 27: unused without training
};

std::string checkpoint_with_line(int line, const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < k_checkpoint_base.size(); ++i) {
    out += (static_cast<int>(i) + 1 == line ? text : k_checkpoint_base[i]) + "\n";
  }
  return out;
}

TEST(DlioConfig, TheBaseOfTheMalformedCheckpointCasesIsValid) {
  Result<DlioWorkload> w = read_dlio_config(checkpoint_with_line(0, ""), "ck.yaml");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->checkpoint->transformer.ranks(), 8u);
  EXPECT_EQ(w->checkpoint->config.dir, "/tiny");
  EXPECT_TRUE(has_note(*w, "dataset.format", false));  // a training key, recorded as unused
}

const Malformed k_malformed_checkpoints[] = {
    {10, "    zero_stage: 4", "ck.yaml:10: model.parallelism.zero_stage: 4 is out of range: a ZeRO stage from 0 to 3"},
    {8, "    tensr: 2", "ck.yaml:8: model.parallelism.tensr: unknown key; did you mean \"model.parallelism.tensor\"?"},
    {14, "    hidden_size: big", "ck.yaml:14: model.transformer.hidden_size: expected a dimension, not \"big\""},
    {5, "  model_datatype: fp12",
     "ck.yaml:5: model.model_datatype: \"fp12\" is not one of int8, uint8, fp16, bf16, fp32, fp64; did you mean "
     "\"fp16\"?"},
    {3, "  type: cnn",
     "ck.yaml:3: model.type: only a transformer's checkpoint (DLIO's layer and optimizer states) is modelled"},
    {24, "  num_checkpoints_read: 3",
     "ck.yaml:24: checkpoint.num_checkpoints_read: 3 reads of 2 checkpoints written: the reads are of this run's"},
    {24, "  mode: subset",
     "ck.yaml:24: checkpoint.mode: a subset run (fewer ranks than the model's, each writing its full-run share) is "
     "not modelled; give model.parallelism.data for fewer ranks"},
    {9, "    pipeline: 5",
     "ck.yaml:9: model.parallelism.pipeline: 5 pipeline stages of 4 layers: a stage without layers"},
    {17, "    num_kv_heads: 9", "ck.yaml:17: model.transformer.num_kv_heads: more than num_attention_heads"},
    {11, "",
     "ck.yaml: model.parallelism.data: missing (the data-parallel ranks; MLPerf Storage sets them only for "
     "llama_8b, llama_70b, llama_405b and llama_1t)"},
    {23, "", "ck.yaml: checkpoint.num_checkpoints_write: missing (checkpoints written)"},
    {4, "", "ck.yaml: model.num_layers: missing (the transformer's layers)"},
    {10, "    zero_stage: 3",
     "ck.yaml:10: model.parallelism.zero_stage: ZeRO 3 with pipeline parallelism: DLIO refuses it too"},
    {20, "  checkpoint: False",
     "ck.yaml:19: workflow.train: a run without training or checkpoints (data generation alone) is no workload here"},
};

TEST(DlioConfig, RefusesMalformedCheckpointKeysWithTheirPlace) {
  for (const Malformed& m : k_malformed_checkpoints) {
    Result<DlioWorkload> w = read_dlio_config(checkpoint_with_line(m.line, m.text), "ck.yaml");
    ASSERT_FALSE(w.ok()) << "line " << m.line << ": " << m.text;
    EXPECT_EQ(w.status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(w.status().message(), m.message) << "line " << m.line << ": " << m.text;
  }
}

// sl.workload.dlio in a script: a train_epoch workload for the runner.
struct DlioScript {
  testing::ScratchDir dir;
  std::vector<ScenarioSpec> specs;
  std::ostringstream out;

  Result<ScriptOutcome> run(const std::string& workload_call) {
    const std::string script =
        dir.write("dlio.lua",
                  "local sl = require \"sluice\"\n"
                  "local m = sl.machines.generic{ sockets = 1, gpus = 2, nics = 1, nvmes = 2 }\n"
                  "local c = sl.cluster{ nodes = 2, node = m, fabric = sl.fabric.infiniband() }\n"
                  "local fs = sl.fs.beeond{}\n"
                  "local w = " +
                      workload_call +
                      "\n"
                      "print(w.type, w.label, w.dlio.model, w.dlio.au, w.dlio.config)\n"
                      "print(w.dlio.approximated[\"dataset.record_length_bytes_stdev\"])\n"
                      "sl.run{ cluster = c, fs = fs, workload = w }\n");
    ScriptOptions options;
    options.out = &out;
    options.run = [this](const std::vector<ScenarioSpec>& points, Backend) -> Result<std::vector<RunResult>> {
      std::vector<RunResult> results;
      for (const ScenarioSpec& p : points) {
        specs.push_back(p);
        RunResult r;
        r.spec = p;
        r.ok = true;
        results.push_back(r);
      }
      return results;
    };
    return run_script(script, options);
  }
};

TEST(DlioWorkload, AScriptRunsAShippedConfigAsATrainEpochWorkload) {
  DlioScript s;
  s.dir.write("unet3d_h100.yaml", file_text(k_mlperf + "unet3d_h100.yaml"));
  Result<ScriptOutcome> r = s.run(
      "sl.workload.dlio{ config = \"unet3d_h100.yaml\", ranks_per_node = 1,"
      " overrides = { [\"dataset.num_files_train\"] = 8, [\"dataset.record_length_bytes\"] = 65536 } }");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(s.specs.size(), 1u);
  const WorkloadSpec& w = s.specs[0].workloads.at(0);
  EXPECT_EQ(w.label, "unet3d");
  const auto* c = std::get_if<TrainEpochConfig>(&w.config);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->samples, 8u);
  EXPECT_EQ(c->sample_bytes, 65536u);
  EXPECT_EQ(c->batch_samples, 7u);
  EXPECT_EQ(c->compute_ns_per_step, 323 * k_ns_per_ms);
  EXPECT_TRUE(c->setup_dataset);
  EXPECT_EQ(w.clients.nodes.size(), 2u);  // beeond: every node a client
  EXPECT_EQ(w.clients.ranks_per_node, 1u);
  EXPECT_NE(s.out.str().find("train_epoch\tunet3d\tunet3d\t0.9\tunet3d_h100.yaml\n"), std::string::npos) << s.out.str();
  EXPECT_EQ(c->sample_bytes_stdev, 68'341'808u);
  EXPECT_NE(s.out.str().find("unet3d_h100.yaml\nnil\n"), std::string::npos) << s.out.str();  // not approximated
}

TEST(DlioWorkload, AFieldTheConfigSetsIsRefusedNamingTheKeyToOverride) {
  DlioScript s;
  s.dir.write("u.yaml", file_text(k_mlperf + "unet3d_h100.yaml"));
  Result<ScriptOutcome> r = s.run("sl.workload.dlio{ config = \"u.yaml\", batch_samples = 2 }");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dlio.lua:5: sl.workload.dlio: batch_samples comes from the config's "
                                      "reader.batch_size; change it with overrides = {[\"reader.batch_size\"] = ...}"),
            std::string::npos)
      << r.status().message();
}

TEST(DlioWorkload, ACheckpointConfigRunsAsACheckpointBurstWithItsRanks) {
  DlioScript s;
  s.dir.write("llama3_8b.yaml", file_text(k_mlperf + "llama3_8b.yaml"));
  Result<ScriptOutcome> r = s.run(
      "sl.workload.dlio{ config = \"llama3_8b.yaml\", ranks_per_node = 1, block_bytes = 1048576,"
      " overrides = { [\"model.parallelism.data\"] = 2, [\"checkpoint.num_checkpoints_write\"] = 1,"
      " [\"checkpoint.num_checkpoints_read\"] = 1 } }\n"
      "print(w.ranks, w.shard_bytes, w.model, w.checkpoint_bytes, w.writes, w.reads)");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(s.specs.size(), 1u);
  const WorkloadSpec& w = s.specs[0].workloads.at(0);
  EXPECT_EQ(w.label, "llama_8b");
  const auto* c = std::get_if<CheckpointConfig>(&w.config);
  ASSERT_NE(c, nullptr);
  // 8B over 2 ranks (ZeRO 3): the model state 2 x 8030261248 / 2 bytes and
  // the optimizer (3 x 4015130624 + 61440) x 4, each rank.
  EXPECT_EQ(c->shard_bytes, 8'030'261'248u + 48'181'813'248u);
  EXPECT_EQ(c->checkpoints, 1u);
  EXPECT_TRUE(c->sync);
  EXPECT_TRUE(c->read_back);
  EXPECT_EQ(c->read_checkpoints, 1u);
  EXPECT_EQ(c->block_bytes, 1'048'576u);
  EXPECT_EQ(c->dir, "/llama_8b");
  EXPECT_NE(s.out.str().find("checkpoint_burst\tllama_8b\tllama_8b\tnil\tllama3_8b.yaml\n"), std::string::npos)
      << s.out.str();
  EXPECT_NE(s.out.str().find("2\t56212074496\tllama_8b\t112424148992\t1\t1\n"), std::string::npos) << s.out.str();

  for (const auto& [call, message] : std::vector<std::pair<std::string, std::string>>{
           {"sl.workload.dlio{ config = \"llama3_8b.yaml\", shard_bytes = 4096 }",
            "sl.workload.dlio: shard_bytes comes from the config's model.num_layers; change it with overrides"},
           {"sl.workload.dlio{ config = \"llama3_8b.yaml\", batch_samples = 2 }",
            "sl.workload.dlio: unknown field \"batch_samples\""}}) {
    Result<ScriptOutcome> bad = s.run(call);
    ASSERT_FALSE(bad.ok()) << call;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << call << ": " << bad.status().message();
  }
}

TEST(DlioWorkload, ABadConfigIsAScriptErrorNamingTheScriptLineAndTheFileLine) {
  DlioScript s;
  s.dir.write("bad.yaml", with_line(14, "  batch_size: seven"));
  Result<ScriptOutcome> r = s.run("sl.workload.dlio{ config = \"bad.yaml\" }");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(r.status().message().find("dlio.lua:5: sl.workload.dlio: bad.yaml:14: reader.batch_size: expected "
                                      "samples per batch, not \"seven\""),
            std::string::npos)
      << r.status().message();
  s.dir.write("ok.yaml", with_line(0, ""));
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"sl.workload.dlio{ config = \"nowhere.yaml\" }", "sl.workload.dlio: cannot read nowhere.yaml"},
      {"sl.workload.dlio{}", "sl.workload.dlio: config: expected the path of a DLIO workload YAML file"},
      {"sl.workload.dlio{ config = \"ok.yaml\", overrides = { 1, 2 } }",
       "sl.workload.dlio: overrides: expected {[\"section.key\"] = value, ...}, not a list"},
      {"sl.workload.dlio{ config = \"ok.yaml\", overrides = { [\"reader.batch_size\"] = {1, 2} } }",
       "overrides[\"reader.batch_size\"]: expected a number, boolean or string, not a table"},
      {"sl.workload.dlio{ config = \"ok.yaml\", thread = 2 }", "sl.workload.dlio: unknown field \"thread\""},
  };
  for (const auto& [call, message] : calls) {
    Result<ScriptOutcome> bad = s.run(call);
    ASSERT_FALSE(bad.ok()) << call;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << call << ": " << bad.status().message();
  }
}

}  // namespace
}  // namespace sluice::scenario
