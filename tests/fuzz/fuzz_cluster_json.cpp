// Fuzz harness: the cluster JSON reader (scenarios/deploy/cluster_config.hpp,
// parse_cluster_config_text), what every `sluice node` reads.
// Properties: never crash, and no exception escapes (issue 24: a wrong type
// must be an error, never an uncaught nlohmann exception); an error is a
// "cluster config: <path>: ..." message; an accepted config is valid
// (validate) and survives the round trip to_json -> dump -> parse unchanged,
// so no number was truncated on the way in.
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_harness.hpp"
#include "scenarios/deploy/cluster_config.hpp"

namespace sluice::fuzz {

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  std::vector<std::string> texts;
  Result<emulate::ClusterConfig> three = emulate::default_cluster(3);
  if (three.ok()) {
    nlohmann::json j = emulate::to_json(*three);
    texts.push_back(j.dump());
    j["nodes"][2]["targets"] = {2, 7, 9};
    j["workload"]["stripe_count"] = 2;
    texts.push_back(j.dump(2));
    j["nodes"][1]["id"] = 4294967297ULL;  // issue 24's truncations, as the fuzzer's starting points
    texts.push_back(j.dump());
    j["nodes"][1]["id"] = 1;
    j["nodes"][2]["targets"] = {2, 1.7, 1e30};
    texts.push_back(j.dump());
  }
  texts.emplace_back(R"({"seed": -1, "nodes": {"id": "3"}, "workload": []})");
  std::vector<std::vector<std::uint8_t>> seeds;
  for (const std::string& t : texts) seeds.emplace_back(t.begin(), t.end());
  return seeds;
}

namespace {

void check(std::string_view text) {
  Result<emulate::ClusterConfig> parsed = emulate::parse_cluster_config_text(text);
  if (!parsed.ok()) {
    if (parsed.status().message().rfind("cluster config: ", 0) != 0) {
      property_failed("cluster_json", "an error that does not say it is about the cluster config");
    }
    return;
  }
  if (!emulate::validate(*parsed).ok()) property_failed("cluster_json", "an accepted config fails validate()");
  const nlohmann::json once = emulate::to_json(*parsed);
  Result<emulate::ClusterConfig> again = emulate::parse_cluster_config_text(once.dump());
  if (!again.ok()) property_failed("cluster_json", "an accepted config does not re-parse from its own JSON");
  if (emulate::to_json(*again) != once) property_failed("cluster_json", "the round trip changed a value");
}

}  // namespace
}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sluice::fuzz::check_text("cluster_json", data, size, sluice::fuzz::check);
}
