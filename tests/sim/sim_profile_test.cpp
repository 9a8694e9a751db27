// Profile files: defaults are valid and documented values, a file round-trips,
// unknown keys and out-of-range numbers are refused naming the key, and
// profiles load by name from search directories.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "sim/sim_profile.hpp"

namespace sluice::sim {
namespace {

TEST(SimProfile, DefaultsAreValidAndKeepTcpFactorsOffPcie) {
  const SimProfile p = default_profile();
  EXPECT_TRUE(validate(p).ok());
  EXPECT_EQ(p.source.kind, "defaults");
  EXPECT_EQ(p.factors(topo::LinkClass::pcie), (LinkClassFactors{1.0, 1.0}));
  EXPECT_EQ(p.factors(topo::LinkClass::memory), (LinkClassFactors{1.0, 1.0}));
  EXPECT_DOUBLE_EQ(p.factors(topo::LinkClass::network).bandwidth_factor, 0.97);
  EXPECT_EQ(p.cost_ns(CostKind::meta_create), 5000);  // one MDT ~200,000 ops/s (docs/seeds.md)
  EXPECT_EQ(p.cost_ns(CostKind::workload_step), 1);
}

TEST(SimProfile, TheShippedDefaultFileIsTheDocumentedDefaults) {
  Result<SimProfile> shipped = load_profile_file(std::string(SLUICE_SOURCE_DIR) + "/sim/profiles/default.json");
  ASSERT_TRUE(shipped.ok()) << shipped.status().to_string();
  EXPECT_EQ(*shipped, default_profile()) << "regenerate sim/profiles/default.json from to_json(default_profile())";
}

// Issue 19: every parameter says where its number comes from (a measurement
// with its command and machine, a data sheet, a seed figure, or an identity
// with its reason); the ones not yet measured say "assumption" and are listed
// here, so that a new unsourced default fails this test.
TEST(SimProfile, EveryDefaultParameterHasASource) {
  const SimProfile p = default_profile();
  const std::vector<std::string> keys = parameter_keys();
  ASSERT_EQ(keys.size(), p.parameter_sources.size());
  const std::vector<std::string> assumed = {"cpu.cost_ns_per_unit.client_request",
                                            "cpu.cost_ns_per_unit.storage_request"};
  std::vector<std::string> found_assumed;
  for (const std::string& key : keys) {
    auto it = p.parameter_sources.find(key);
    ASSERT_NE(it, p.parameter_sources.end()) << key << " has no source";
    const std::string& text = it->second;
    const bool grounded = text.starts_with("measured: ") || text.starts_with("data sheet: ") ||
                          text.starts_with("seed: ") || text.starts_with("paper: ") || text.starts_with("identity: ") ||
                          text.starts_with("protocol headers: ") || text.starts_with("SimGrid 3.32 documentation: ") ||
                          text.starts_with("definition: ") || text.starts_with("documentation: ");
    if (text.starts_with("assumption")) {
      found_assumed.push_back(key);
    } else {
      EXPECT_TRUE(grounded) << key << ": " << text;
    }
  }
  EXPECT_EQ(found_assumed, assumed);
}

TEST(SimProfile, SourcesNameParametersAndAFitRecordsItsOwn) {
  Result<SimProfile> bad = parse_profile(R"({"format": "sluice-sim-profile", "version": 1, "name": "x",
                                             "sources": {"disk.read_latency": "fio"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sources: \"disk.read_latency\" names no parameter"), std::string::npos)
      << bad.status().message();
  Result<SimProfile> empty = parse_profile(R"({"format": "sluice-sim-profile", "version": 1, "name": "x",
                                               "sources": {"disk.read_latency_ns": ""}})");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("sources.disk.read_latency_ns"), std::string::npos);
  Result<SimProfile> fitted = parse_profile(R"({"format": "sluice-sim-profile", "version": 1, "name": "x",
                                                "disk": {"read_latency_ns": 12066},
                                                "sources": {"disk.read_latency_ns": "fit: 12066 from fio"}})");
  ASSERT_TRUE(fitted.ok()) << fitted.status().to_string();
  EXPECT_EQ(fitted->parameter_sources.at("disk.read_latency_ns"), "fit: 12066 from fio");
  EXPECT_EQ(fitted->parameter_sources.at("disk.write_latency_ns"),
            default_profile().parameter_sources.at("disk.write_latency_ns"));
}

TEST(SimProfile, AFileRoundTripsWithItsSource) {
  SimProfile p = default_profile();
  p.name = "lab-dgx";
  p.source = ProfileSource{"fit", "dgx-a100-7", "2024-05-01", "calibrate_read.lua", 3.25, "held-out: 4 runs"};
  p.link_classes[static_cast<std::size_t>(topo::LinkClass::network)] = {0.93, 2.5};
  p.disk_request_occupancy_ns = 2500;
  p.disk_read_bandwidth_factor = 0.2;
  p.disk_write_bandwidth_factor = 0.125;
  p.disk_read_request_bytes_per_s = 1.25e9;
  p.disk_write_request_bytes_per_s = 7.5e8;
  p.disk_batch_occupancy_ns = 21668;
  p.disk_channels = 4;
  p.disk_channel_stripe_bytes = 128 * 1024;
  p.cost_ns_per_unit[static_cast<std::size_t>(CostKind::meta_stat)] = 1234;
  p.cpu_cores_per_node = 16;
  Result<SimProfile> back = parse_profile(to_json(p));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, p);
}

TEST(SimProfile, MissingKeysKeepTheirDefaults) {
  Result<SimProfile> p = parse_profile(R"({"format": "sluice-sim-profile", "version": 1, "name": "tiny",
                                           "disk": {"read_latency_ns": 5000}})");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->name, "tiny");
  EXPECT_EQ(p->disk_read_latency_ns, 5000);
  EXPECT_EQ(p->disk_write_latency_ns, default_profile().disk_write_latency_ns);
}

TEST(SimProfile, TheDiskFitFieldsDefaultToTheDataSheetDrive) {
  // Factor 1 and no request rate: the drive of the topology, every earlier
  // result unchanged.
  const SimProfile d = default_profile();
  EXPECT_EQ(d.disk_read_bandwidth_factor, 1.0);
  EXPECT_EQ(d.disk_write_bandwidth_factor, 1.0);
  EXPECT_EQ(d.disk_read_request_bytes_per_s, 0.0);
  EXPECT_EQ(d.disk_write_request_bytes_per_s, 0.0);
  EXPECT_EQ(d.disk_batch_occupancy_ns, 0);
  EXPECT_EQ(d.disk_channels, 1u);
  Result<SimProfile> p = parse_profile(R"({"format": "sluice-sim-profile", "version": 1,
      "disk": {"read_bandwidth_factor": 0.5, "write_bandwidth_factor": 2,
               "read_request_bytes_per_s": 1.3e9, "write_request_bytes_per_s": 0}})");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->disk_read_bandwidth_factor, 0.5);
  EXPECT_EQ(p->disk_write_bandwidth_factor, 2.0);
  EXPECT_EQ(p->disk_read_request_bytes_per_s, 1.3e9);
  EXPECT_EQ(p->disk_write_request_bytes_per_s, 0.0);
  EXPECT_EQ(p->disk_read_latency_ns, d.disk_read_latency_ns);
}

TEST(SimProfile, BadFilesAreRefusedNamingTheKey) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {R"({"format": "other", "version": 1})", "format"},
      {R"({"format": "sluice-sim-profile", "version": 2})", "version 2"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"read_latncy_ns": 1}})", "disk.read_latncy_ns"},
      {R"({"format": "sluice-sim-profile", "version": 1, "extra": 1})", "\"extra\""},
      {R"({"format": "sluice-sim-profile", "version": 1, "link_classes": {"pcie": {"bandwidth_factor": 1e9}}})",
       "link_classes.pcie.bandwidth_factor"},
      {R"({"format": "sluice-sim-profile", "version": 1, "link_classes": {"nvlink": {}}})", "link_classes.nvlink"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"sync_latency_ns": -5}})", "disk.sync_latency_ns"},
      {R"({"format": "sluice-sim-profile", "version": 1, "cpu": {"cores_per_node": 0}})", "cores_per_node"},
      {R"({"format": "sluice-sim-profile", "version": 1, "cpu": {"cost_ns_per_unit": {"meta_teleport": 1}}})",
       "meta_teleport"},
      {R"({"format": "sluice-sim-profile", "version": 1, "memory": {"memory_op_bytes_per_s": 0}})",
       "memory_op_bytes_per_s"},
      {R"({"format": "sluice-sim-profile", "version": 1, "name": 7})", "name must be a string"},
      {R"({"format": "sluice-sim-profile", "version": 1, "network": {"message_overhead_bytes": -1}})",
       "message_overhead_bytes"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"read_bandwidth_factor": 0}})",
       "disk.read_bandwidth_factor"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"write_bandwidth_factor": 1e9}})",
       "disk.write_bandwidth_factor"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"read_request_bytes_per_s": -1}})",
       "disk.read_request_bytes_per_s"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"read_request_bytes_per_s": 10}})",
       "disk.read_request_bytes_per_s"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"write_request_bytes_per_s": 1e18}})",
       "disk.write_request_bytes_per_s"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"write_request_bytes_per_s": "fast"}})",
       "disk.write_request_bytes_per_s must be a number"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"channels": 0}})", "disk.channels = 0"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"channels": 257}})", "disk.channels = 257"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"channels": -4}})", "disk.channels must not"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"channels": 2.5}})",
       "disk.channels must be an integer"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"channels": 4294967300}})",
       "disk.channels is too large"},
      {R"({"format": "sluice-sim-profile", "version": 1, "disk": {"channel_stripe_bytes": 100}})",
       "disk.channel_stripe_bytes = 100"},
  };
  for (const Case& c : cases) {
    Result<SimProfile> p = parse_profile(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().code(), StatusCode::invalid_argument) << c.text;
    EXPECT_NE(p.status().message().find(c.expect), std::string::npos) << c.text << " -> " << p.status().message();
  }
  EXPECT_FALSE(parse_profile(std::string(k_max_profile_bytes + 1, ' ')).ok());
}

// Issue 47 item 5: a syntax error in a profile names its line and column (it said "not valid JSON").
TEST(SimProfile, ASyntaxErrorNamesItsLineAndColumn) {
  Result<SimProfile> p = parse_profile("{\n  \"disk\": [,]\n}");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("line 2, column 12: not valid JSON"), std::string::npos) << p.status().message();
}

TEST(SimProfile, ValidateRefusesANonFiniteDiskRequestRateNamingIt) {
  // JSON cannot spell infinity or NaN; a profile built in code can.
  SimProfile p = default_profile();
  p.disk_write_request_bytes_per_s = std::numeric_limits<double>::infinity();
  Status s = validate(p);
  EXPECT_EQ(s.code(), StatusCode::invalid_argument);
  EXPECT_NE(s.message().find("disk.write_request_bytes_per_s"), std::string::npos) << s.message();
  p = default_profile();
  p.disk_read_request_bytes_per_s = std::nan("");
  EXPECT_NE(validate(p).message().find("disk.read_request_bytes_per_s"), std::string::npos);
  p.disk_read_request_bytes_per_s = k_min_disk_request_bytes_per_s;
  EXPECT_TRUE(validate(p).ok()) << "the named minimum itself is a rate";
}

TEST(SimProfile, ProfilesLoadByNameFromTheSearchDirectories) {
  const auto dir = std::filesystem::temp_directory_path() / ("sluice_profile_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SimProfile p = default_profile();
  p.name = "from-disk";
  p.local_message_latency_ns = 777;
  std::ofstream(dir / "from-disk.json") << to_json(p);
  std::ofstream(dir / "broken.json") << "{";
  Result<SimProfile> loaded = load_profile("from-disk", {"/nonexistent/dir", dir.string()});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->local_message_latency_ns, 777);
  EXPECT_TRUE(load_profile("default", {}).ok());
  Result<SimProfile> missing = load_profile("nope", {dir.string()});
  EXPECT_EQ(missing.status().code(), StatusCode::not_found);
  EXPECT_NE(missing.status().message().find("nope.json"), std::string::npos) << missing.status().message();
  Result<SimProfile> broken = load_profile("broken", {dir.string()});
  EXPECT_EQ(broken.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(broken.status().message().find("broken.json"), std::string::npos) << broken.status().message();
  EXPECT_EQ(load_profile_file((dir / "absent.json").string()).status().code(), StatusCode::not_found);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice::sim
