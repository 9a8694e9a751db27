// The cluster JSON reader's numbers and types (issue 24, item 6): every
// value silently truncated before (node id 4294967297 became 1, target 1.7
// became 1, 1e30 became 0) is now an error naming the value's JSON path, as
// are negative, string and wrong-container values; none throws.
#include <gtest/gtest.h>

#include <string>

#include "scenarios/deploy/cluster_config.hpp"

namespace sluice::emulate {
namespace {

// The message of parsing the default 3-node cluster after `edit`; "" when it parsed.
template <typename Edit>
std::string error_after(Edit edit) {
  nlohmann::json j = to_json(*default_cluster(3));
  edit(j);
  Result<ClusterConfig> r = parse_cluster_config(j);
  return r.ok() ? std::string() : r.status().message();
}

std::string error_of_text(const std::string& text) {
  Result<ClusterConfig> r = parse_cluster_config_text(text);
  return r.ok() ? std::string() : r.status().message();
}

TEST(ClusterConfigNumbers, ANodeIdPast32BitsIsAnErrorNotTruncated) {
  const std::string m = error_after([](nlohmann::json& j) { j["nodes"][1]["id"] = 4294967297ULL; });
  EXPECT_EQ(m, "cluster config: nodes[1].id: expected an integer in 0..4294967295, got 4294967297");
}

TEST(ClusterConfigNumbers, AFractionalTargetIsAnError) {
  const std::string m = error_after([](nlohmann::json& j) { j["nodes"][2]["targets"] = {2, 1.7}; });
  EXPECT_EQ(m, "cluster config: nodes[2].targets[1]: expected an integer in 0..4294967295, got 1.7");
}

TEST(ClusterConfigNumbers, AHugeFloatTargetIsAnError) {
  // From the text as a user writes it: 1e30 is a JSON float.
  nlohmann::json j = to_json(*default_cluster(3));
  std::string text = j.dump();
  const std::string from = "\"targets\":[2]";
  ASSERT_NE(text.find(from), std::string::npos) << text;
  text.replace(text.find(from), from.size(), "\"targets\":[1e30]");
  const std::string m = error_of_text(text);
  EXPECT_NE(m.find("nodes[2].targets[0]: expected an integer in 0..4294967295, got 1e+30"), std::string::npos) << m;
}

TEST(ClusterConfigNumbers, ANegativeValueForAnUnsignedFieldIsAnError) {
  std::string m = error_after([](nlohmann::json& j) { j["seed"] = -1; });
  EXPECT_EQ(m, "cluster config: seed: expected an integer in 0..18446744073709551615, got -1");
  m = error_after([](nlohmann::json& j) { j["workload"]["threads"] = -1; });
  EXPECT_EQ(m, "cluster config: workload.threads: expected an integer in 0..4294967295, got -1");
}

TEST(ClusterConfigNumbers, ANumberWrittenAsAStringIsAnError) {
  const std::string m = error_after([](nlohmann::json& j) { j["nodes"][0]["id"] = "3"; });
  EXPECT_EQ(m, "cluster config: nodes[0].id: expected an integer in 0..4294967295, got the string \"3\"");
}

TEST(ClusterConfigNumbers, AnArrayWhereAnObjectIsExpectedIsAnError) {
  std::string m = error_after([](nlohmann::json& j) { j["workload"] = nlohmann::json::array({1, 2}); });
  EXPECT_EQ(m, "cluster config: workload: expected an object, got an array");
  m = error_after([](nlohmann::json& j) { j["nodes"][1] = nlohmann::json::array(); });
  EXPECT_EQ(m, "cluster config: nodes[1]: expected an object, got an array");
  m = error_of_text("[1, 2]");
  EXPECT_EQ(m, "cluster config: the document: expected an object, got an array");
}

TEST(ClusterConfigNumbers, WrongTypesInsideArraysAndObjectsNameThePath) {
  std::string m = error_after([](nlohmann::json& j) { j["nodes"][1]["roles"] = {"storage", 7}; });
  EXPECT_EQ(m, "cluster config: nodes[1].roles[1]: expected a string, got 7");
  m = error_after([](nlohmann::json& j) { j["nodes"][1]["roles"] = {"storage", "gpu"}; });
  EXPECT_NE(m.find("nodes[1].roles[1]: unknown role \"gpu\""), std::string::npos) << m;
  m = error_after([](nlohmann::json& j) { j["workload"]["pattern_data"] = 1; });
  EXPECT_EQ(m, "cluster config: workload.pattern_data: expected true or false, got 1");
  m = error_after([](nlohmann::json& j) { j["nodes"][2]["targets"] = 2; });
  EXPECT_EQ(m, "cluster config: nodes[2].targets: expected an array, got 2");
  m = error_after([](nlohmann::json& j) { j["nodes"] = nlohmann::json::object(); });
  EXPECT_EQ(m, "cluster config: nodes: expected an array, got an object");
  m = error_after([](nlohmann::json& j) { j["run_id"] = nullptr; });
  EXPECT_EQ(m, "cluster config: run_id: expected a string, got null");
}

TEST(ClusterConfigNumbers, IntegralFloatsInRangeAreAccepted) {
  nlohmann::json j = to_json(*default_cluster(3));
  j["max_wait_s"] = 120.0;
  j["workload"]["file_bytes"] = 4e6;
  Result<ClusterConfig> r = parse_cluster_config(j);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->max_wait_s, 120u);
  EXPECT_EQ(r->workload.sweep.file_bytes, 4'000'000u);
  j["max_wait_s"] = 4294967296.0;
  EXPECT_EQ(parse_cluster_config(j).status().message(),
            "cluster config: max_wait_s: expected an integer in 0..4294967295, got 4294967296.0");
}

TEST(ClusterConfigNumbers, NothingThrowsOnAnyShapeOfDocument) {
  for (const char* text : {"null", "3", "\"x\"", "{\"nodes\": [null]}", "{\"nodes\": [[1]]}",
                           "{\"workload\": {\"phases\": {\"a\": 1}}}", "{\"nodes\": [{\"targets\": [[]]}]}",
                           "{\"seed\": 1e400}", "{\"seed\": -0.0}", "{\"seed\": 18446744073709551616}"}) {
    EXPECT_NO_THROW({
      Result<ClusterConfig> r = parse_cluster_config_text(text);
      EXPECT_FALSE(r.ok()) << text;
    }) << text;
  }
}

// Issue 47 item 5: a syntax error in a cluster JSON names its line and column (it said "not valid JSON").
TEST(ClusterConfigNumbers, ASyntaxErrorNamesItsLineAndColumn) {
  const std::string m = error_of_text("{\n  \"nodes\": [,]\n}");
  EXPECT_NE(m.find("line 2, column 13: not valid JSON"), std::string::npos) << m;
}

}  // namespace
}  // namespace sluice::emulate
