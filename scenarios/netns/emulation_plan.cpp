#include "scenarios/netns/emulation_plan.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace sluice::emulate {
namespace {

Status bad(const std::string& what) { return error(StatusCode::invalid_argument, "emulate: " + what); }

struct Unit {
  std::string_view suffix;
  double scale;
};

// Parses "<number><unit>" with the unit from `units` (longest suffixes first).
Result<double> parse_quantity(std::string_view text, const std::vector<Unit>& units, std::string_view what) {
  for (const Unit& u : units) {
    if (text.size() <= u.suffix.size() || text.substr(text.size() - u.suffix.size()) != u.suffix) continue;
    const std::string number(text.substr(0, text.size() - u.suffix.size()));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(value) || value < 0) break;
    return value * u.scale;
  }
  std::string names;
  for (const Unit& u : units) names += (names.empty() ? "" : ", ") + std::string(u.suffix);
  return bad(std::string(what) + " \"" + std::string(text) + "\": expected a number with a unit (" + names + ")");
}

std::string format_rate(std::uint64_t bits_per_s) {
  if (bits_per_s % 1'000'000'000 == 0) return std::to_string(bits_per_s / 1'000'000'000) + "gbit";
  if (bits_per_s % 1'000'000 == 0) return std::to_string(bits_per_s / 1'000'000) + "mbit";
  if (bits_per_s % 1'000 == 0) return std::to_string(bits_per_s / 1'000) + "kbit";
  return std::to_string(bits_per_s) + "bit";
}

std::string format_latency(std::uint64_t ns) {
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

bool is_tag_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

std::string LinkSpec::to_string() const {
  std::string s = format_rate(rate_bits_per_s);
  if (latency_ns > 0) s += "," + format_latency(latency_ns);
  return s;
}

Result<LinkSpec> parse_link_spec(std::string_view text) {
  static const std::vector<Unit> k_rate_units = {
      {"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}};
  static const std::vector<Unit> k_latency_units = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  LinkSpec link;
  const std::size_t comma = text.find(',');
  Result<double> rate = parse_quantity(text.substr(0, comma), k_rate_units, "link rate");
  if (!rate.ok()) return rate.status();
  if (*rate < 1e3 || *rate > 4e12) return bad("link rate " + std::string(text) + " outside 1kbit..4tbit");
  link.rate_bits_per_s = static_cast<std::uint64_t>(std::llround(*rate));
  if (comma != std::string_view::npos) {
    Result<double> latency = parse_quantity(text.substr(comma + 1), k_latency_units, "link latency");
    if (!latency.ok()) return latency.status();
    if (*latency > 10e9) return bad("link latency " + std::string(text.substr(comma + 1)) + " over 10s");
    link.latency_ns = static_cast<std::uint64_t>(std::llround(*latency));
  }
  return link;
}

Result<std::string> parse_subnet24(std::string_view text) {
  unsigned a = 0, b = 0, c = 0, d = 0, bits = 0;
  char tail = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &bits, &tail) != 5 || a > 255 || b > 255 || c > 255 ||
      d != 0 || bits != 24) {
    return bad("subnet \"" + s + "\": expected a.b.c.0/24");
  }
  const bool is_private = a == 10 || (a == 172 && b >= 16 && b <= 31) || (a == 192 && b == 168);
  if (!is_private) return bad("subnet " + s + " is not a private (RFC 1918) range");
  return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c);
}

Result<EmulationPlan> plan_emulation(const PlanOptions& o) {
  if (o.nodes == 0 || o.nodes > k_max_emulated_nodes) {
    return bad(std::to_string(o.nodes) + " nodes; 1.." + std::to_string(k_max_emulated_nodes) + " can be emulated");
  }
  if (o.link.rate_bits_per_s == 0) return bad("no link rate");
  if (o.mtu_bytes < 576 || o.mtu_bytes > k_max_mtu_bytes) return bad("mtu " + std::to_string(o.mtu_bytes));
  if (o.launcher_pid <= 0) return bad("launcher pid missing");
  if (o.tag.empty() || o.tag.size() > 8 || !std::all_of(o.tag.begin(), o.tag.end(), is_tag_char)) {
    return bad("run tag \"" + o.tag + "\" must be 1..8 of [a-z0-9]");
  }
  Result<std::string> subnet = parse_subnet24(o.subnet);
  if (!subnet.ok()) return subnet.status();
  EmulationPlan plan;
  plan.prefix = std::string(k_netns_prefix) + std::to_string(o.launcher_pid) + "-" + o.tag;
  plan.bridge_netns = plan.prefix + "-br";
  plan.subnet = *subnet;
  plan.link = o.link;
  plan.mtu_bytes = o.mtu_bytes;
  for (std::uint32_t i = 0; i < o.nodes; ++i) {
    EmulatedNode n;
    n.netns = plan.prefix + "-n" + std::to_string(i);
    n.bridge_port = "v" + std::to_string(i);
    n.address = plan.subnet + "." + std::to_string(i + k_first_host_octet);
    plan.nodes.push_back(std::move(n));
  }
  return plan;
}

CommandLine in_netns(const std::string& netns, const CommandLine& argv) {
  CommandLine out = {"ip", "netns", "exec", netns};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<CommandLine> shaping_commands(const std::string& netns, const std::string& device, const LinkSpec& link) {
  const std::uint64_t rate_bytes_per_s = link.rate_bits_per_s / 8;
  const std::uint64_t burst_bytes = std::max<std::uint64_t>(k_tbf_min_burst_bytes, rate_bytes_per_s / k_tbf_burst_hz);
  std::vector<CommandLine> out;
  out.push_back({"tc", "-n", netns, "qdisc", "replace", "dev", device, "root", "handle", "1:", "tbf", "rate",
                 std::to_string(link.rate_bits_per_s) + "bit", "burst", std::to_string(burst_bytes), "latency",
                 std::to_string(k_tbf_queue_latency_ms) + "ms"});
  if (link.latency_ns > 0) {
    // netem holds a bandwidth-delay product of packets; its default limit
    // (1000) is too small for fast links with long delays.
    const double bdp_packets =
        static_cast<double>(rate_bytes_per_s) * static_cast<double>(link.latency_ns) / 1e9 / 1500.0;
    const auto limit = static_cast<std::uint64_t>(std::max(1000.0, 4 * bdp_packets));
    out.push_back({"tc", "-n", netns, "qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", "netem", "delay",
                   format_latency(link.latency_ns), "limit", std::to_string(limit)});
  }
  return out;
}

std::vector<CommandLine> setup_commands(const EmulationPlan& plan) {
  const std::string mtu = std::to_string(plan.mtu_bytes);
  std::vector<CommandLine> out;
  out.push_back({"ip", "netns", "add", plan.bridge_netns});
  out.push_back({"ip", "-n", plan.bridge_netns, "link", "add", "br0", "type", "bridge"});
  out.push_back({"ip", "-n", plan.bridge_netns, "link", "set", "br0", "mtu", mtu, "up"});
  for (const EmulatedNode& n : plan.nodes) {
    out.push_back({"ip", "netns", "add", n.netns});
    out.push_back({"ip", "-n", n.netns, "link", "set", "lo", "up"});
    out.push_back({"ip", "-n", plan.bridge_netns, "link", "add", n.bridge_port, "mtu", mtu, "type", "veth", "peer",
                   "name", "eth0", "mtu", mtu, "netns", n.netns});
    out.push_back({"ip", "-n", plan.bridge_netns, "link", "set", n.bridge_port, "master", "br0", "up"});
    out.push_back({"ip", "-n", n.netns, "addr", "add", n.address + "/24", "dev", "eth0"});
    out.push_back({"ip", "-n", n.netns, "link", "set", "eth0", "up"});
    for (CommandLine& c : shaping_commands(n.netns, "eth0", plan.link)) out.push_back(std::move(c));
    for (CommandLine& c : shaping_commands(plan.bridge_netns, n.bridge_port, plan.link)) out.push_back(std::move(c));
  }
  return out;
}

std::vector<CommandLine> cleanup_commands(const EmulationPlan& plan) {
  std::vector<CommandLine> out;
  for (const EmulatedNode& n : plan.nodes) out.push_back({"ip", "netns", "delete", n.netns});
  out.push_back({"ip", "netns", "delete", plan.bridge_netns});
  return out;
}

std::vector<std::string> parse_netns_list(std::string_view text) {
  std::vector<std::string> names;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    const std::size_t space = line.find(' ');
    if (space != std::string_view::npos) line = line.substr(0, space);
    if (!line.empty()) names.emplace_back(line);
  }
  return names;
}

int launcher_pid_of(std::string_view netns) {
  if (netns.substr(0, k_netns_prefix.size()) != k_netns_prefix) return 0;
  netns.remove_prefix(k_netns_prefix.size());
  int pid = 0;
  const auto [end, ec] = std::from_chars(netns.data(), netns.data() + netns.size(), pid);
  if (ec != std::errc() || end == netns.data() || end == netns.data() + netns.size() || *end != '-') return 0;
  return pid > 0 ? pid : 0;
}

std::string run_prefix_of(std::string_view netns) {
  const std::size_t dash = netns.rfind('-');
  if (launcher_pid_of(netns) == 0 || dash == std::string_view::npos) return "";
  return std::string(netns.substr(0, dash));
}

std::vector<std::string> stale_namespaces(const std::vector<std::string>& names,
                                          const std::function<bool(const std::string& netns, int pid)>& launcher_runs) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    const int pid = launcher_pid_of(n);
    if (pid > 0 && !launcher_runs(n, pid)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string join_command(const CommandLine& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

}  // namespace sluice::emulate
