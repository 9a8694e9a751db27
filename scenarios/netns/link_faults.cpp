#include "scenarios/netns/link_faults.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/faults/fault_control.hpp"
#include "scenarios/deploy/deploy.hpp"

namespace sluice::emulate {
namespace {

constexpr std::string_view k_partition_counter = "partition_drops";
constexpr std::string_view k_loss_counter = "loss_drops";

std::string table_name() { return "inet " + std::string(k_fault_table); }

Status run_nft(const std::string& netns, const std::vector<std::string>& args) {
  CommandLine argv = {"nft"};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandOutput> out = run_command(in_netns(netns, argv), k_nft_timeout_ms);
  if (!out.ok()) return error(out.status().code(), "nft in " + netns + ": " + out.status().message());
  if (out->exit_code != 0) {
    return error(StatusCode::unavailable,
                 "nft in " + netns + " exited " + std::to_string(out->exit_code) + ": " + out->output.substr(0, 400));
  }
  return ok_status();
}

std::string address_set(const std::vector<std::string>& addresses) {
  std::string s = "{ ";
  for (std::size_t i = 0; i < addresses.size(); ++i) s += (i == 0 ? "" : ", ") + addresses[i];
  return s + " }";
}

}  // namespace

std::string nft_table_script() {
  // "table X" then "delete table X" empties whatever an earlier run left.
  const std::string t = table_name();
  return "table " + t + "\n" + "delete table " + t + "\n" + "table " + t + " {\n" + "  counter " +
         std::string(k_partition_counter) + " { }\n" + "  counter " + std::string(k_loss_counter) + " { }\n" +
         "  chain output { type filter hook output priority 0; policy accept; }\n" +
         "  chain input { type filter hook input priority 0; policy accept; }\n" + "}\n";
}

std::string nft_rules_script(const NodeLinkFaults& faults) {
  const std::string t = table_name();
  std::string s = "flush chain " + t + " output\n" + "flush chain " + t + " input\n";
  if (!faults.cut_from.empty()) {
    const std::string set = address_set(faults.cut_from);
    s += "add rule " + t + " output ip daddr " + set + " counter name " + std::string(k_partition_counter) + " drop\n";
    s += "add rule " + t + " input ip saddr " + set + " counter name " + std::string(k_partition_counter) + " drop\n";
  }
  if (faults.loss_ppm >= k_loss_scale) {
    // numgen's values stop at k_loss_scale - 1, so "< k_loss_scale" is no valid match: all is lost.
    s += "add rule " + t + " output counter name " + std::string(k_loss_counter) + " drop\n";
  } else if (faults.loss_ppm > 0) {
    s += "add rule " + t + " output numgen random mod " + std::to_string(k_loss_scale) + " < " +
         std::to_string(faults.loss_ppm) + " counter name " + std::string(k_loss_counter) + " drop\n";
  }
  return s;
}

Result<LinkDropCounts> parse_nft_counters(std::string_view json) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("nftables") || !j["nftables"].is_array()) {
    return error(StatusCode::corrupt, "nft counters: not nft's JSON (no \"nftables\" array)");
  }
  LinkDropCounts counts;
  bool partition_seen = false;
  bool loss_seen = false;
  for (const nlohmann::json& item : j["nftables"]) {
    if (!item.is_object() || !item.contains("counter")) continue;
    const nlohmann::json& c = item["counter"];
    if (!c.is_object() || !c.contains("name") || !c.contains("packets") || !c["packets"].is_number_unsigned()) {
      return error(StatusCode::corrupt, "nft counters: a counter without name or packets");
    }
    const std::string name = c["name"].is_string() ? c["name"].get<std::string>() : std::string();
    const auto packets = c["packets"].get<std::uint64_t>();
    if (name == k_partition_counter) {
      counts.partition_packets += packets;
      partition_seen = true;
    } else if (name == k_loss_counter) {
      counts.loss_packets += packets;
      loss_seen = true;
    }
  }
  if (!partition_seen || !loss_seen)
    return error(StatusCode::not_found, "nft counters: the fault table's counters are missing");
  return counts;
}

Result<std::uint32_t> loss_to_ppm(double probability) {
  if (!(probability >= 0.0 && probability <= 1.0)) {
    return error(StatusCode::invalid_argument,
                 "packet loss probability " + std::to_string(probability) + " outside [0, 1]");
  }
  return static_cast<std::uint32_t>(std::lround(probability * k_loss_scale));
}

std::vector<NodeLinkFaults> partition_rules(const std::vector<std::vector<std::uint32_t>>& partitions,
                                            const std::vector<std::string>& addresses, std::uint32_t loss_ppm) {
  std::vector<NodeLinkFaults> rules(addresses.size());
  for (std::uint32_t a = 0; a < addresses.size(); ++a) {
    rules[a].loss_ppm = loss_ppm;
    for (std::uint32_t b = 0; b < addresses.size(); ++b) {
      if (faults::partitioned(partitions, a, b)) rules[a].cut_from.push_back(addresses[b]);
    }
  }
  return rules;
}

Status LinkFaults::install() {
  for (const EmulatedNode& n : plan_.nodes) {
    Status st = run_nft(n.netns, {nft_table_script()});
    if (!st.ok()) {
      return error(StatusCode::unavailable,
                   "link faults need nftables (the `nft` program, Debian package nftables, "
                   "and nf_tables in the kernel): " +
                       st.message());
    }
  }
  current_.assign(plan_.nodes.size(), NodeLinkFaults{});
  installed_ = true;
  return ok_status();
}

Status LinkFaults::set_partitions(const std::vector<std::vector<std::uint32_t>>& partitions) {
  for (const auto& side : partitions) {
    for (std::uint32_t n : side) {
      if (n >= plan_.nodes.size()) {
        return error(StatusCode::invalid_argument, "partition names node " + std::to_string(n) + " of an emulated " +
                                                       std::to_string(plan_.nodes.size()) + "-node cluster");
      }
    }
  }
  partitions_ = partitions;
  std::vector<std::string> addresses;
  for (const EmulatedNode& n : plan_.nodes) addresses.push_back(n.address);
  return apply(partition_rules(partitions_, addresses, loss_ppm_));
}

Status LinkFaults::set_loss(double probability) {
  Result<std::uint32_t> ppm = loss_to_ppm(probability);
  if (!ppm.ok()) return ppm.status();
  loss_ppm_ = *ppm;
  return set_partitions(partitions_);
}

Status LinkFaults::set_delay(std::uint64_t extra_delay_ns) const {
  if (extra_delay_ns == 0) return ok_status();
  return error(StatusCode::unavailable, "link delay of " + std::to_string(extra_delay_ns) +
                                            " ns: this kernel has no netem qdisc (sch_netem) nor sch_fq, so no "
                                            "packet delay can be emulated; loss and partitions can");
}

Status LinkFaults::heal() {
  loss_ppm_ = 0;
  return set_partitions({});
}

Status LinkFaults::apply(std::vector<NodeLinkFaults> next) {
  if (!installed_) return error(StatusCode::invalid_argument, "link faults: install() first");
  for (std::size_t i = 0; i < next.size(); ++i) {
    if (next[i] == current_[i]) continue;  // only nodes whose rules change cost a command
    if (Status st = run_nft(plan_.nodes[i].netns, {nft_rules_script(next[i])}); !st.ok()) return st;
    current_[i] = next[i];
  }
  return ok_status();
}

Result<LinkDropCounts> LinkFaults::drops() const {
  LinkDropCounts total;
  for (const EmulatedNode& n : plan_.nodes) {
    Result<CommandOutput> out =
        run_command(in_netns(n.netns, {"nft", "-j", "list", "counters", "table", "inet", std::string(k_fault_table)}),
                    k_nft_timeout_ms);
    if (!out.ok()) return out.status();
    if (out->exit_code != 0)
      return error(StatusCode::unavailable, "nft counters in " + n.netns + ": " + out->output.substr(0, 400));
    Result<LinkDropCounts> c = parse_nft_counters(out->output);
    if (!c.ok()) return error(c.status().code(), n.netns + ": " + c.status().message());
    total.partition_packets += c->partition_packets;
    total.loss_packets += c->loss_packets;
  }
  return total;
}

}  // namespace sluice::emulate
