// EmulationPlan: what `sluice mount` (ClusterEmulator) creates on this machine, as data, and
// the exact `ip`/`tc` command lines that create and remove it. Pure functions
// (no commands run here; command_runner.hpp runs them), so the naming,
// address planning and clean-up are unit-tested without root.
//
// Layout of a run with prefix P (P = "sluice-emu-<launcher pid>-<tag>"):
//   namespace P-br      a bridge "br0" and one veth end "v<i>" per node
//   namespace P-n<i>    node i: "eth0" (the other veth end) with the address
//                       <subnet>.<i + k_first_host_octet>/24, and "lo"
// Nothing is created in the caller's namespace: veth pairs are made inside
// P-br with their peer end moved straight into P-n<i>, so deleting the
// namespaces removes every link, even after a crash.
//
// Shaping, both directions of every node's link (node egress on eth0, node
// ingress as the bridge's egress on v<i>): tbf at the link rate (Linux
// tc-tbf(8): burst >= rate / HZ, k_tbf_min_burst_bytes at least), with a netem
// child adding the one-way latency when one is asked for (tc-netem(8)).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::emulate {

inline constexpr std::string_view k_netns_prefix = "sluice-emu-";
inline constexpr std::uint32_t k_first_host_octet = 2;  // .1 is left for a gateway that is never made
inline constexpr std::uint32_t k_max_emulated_nodes = 64;
inline constexpr std::uint64_t k_tbf_min_burst_bytes = 64 * 1024;
inline constexpr std::uint32_t k_tbf_burst_hz = 250;          // CONFIG_HZ of Debian kernels: burst >= rate/HZ
inline constexpr std::uint32_t k_tbf_queue_latency_ms = 100;  // tbf `latency`: how long a packet may queue
inline constexpr std::uint32_t k_max_mtu_bytes = 65535;

// A link: "1gbit", "10gbit,2ms", "500mbit,100us", "1.5gbit,0.5ms". Units
// kbit/mbit/gbit (decimal, as tc), latency ns/us/ms/s (one way).
struct LinkSpec {
  std::uint64_t rate_bits_per_s = 0;
  std::uint64_t latency_ns = 0;

  double rate_bytes_per_s() const { return static_cast<double>(rate_bits_per_s) / 8.0; }
  std::string to_string() const;
};
Result<LinkSpec> parse_link_spec(std::string_view text);

// "10.77.0" from "10.77.0.0/24" style input; only private ranges (RFC 1918:
// 10/8, 172.16/12, 192.168/16) and /24 are accepted.
Result<std::string> parse_subnet24(std::string_view text);

struct EmulatedNode {
  std::string netns;        // P-n<i>
  std::string bridge_port;  // v<i>, inside the bridge namespace
  std::string address;      // a.b.c.d
};

struct EmulationPlan {
  std::string prefix;        // P
  std::string bridge_netns;  // P-br
  std::string subnet;        // a.b.c (the /24)
  LinkSpec link;
  std::uint32_t mtu_bytes = 1500;
  std::vector<EmulatedNode> nodes;
};

struct PlanOptions {
  std::uint32_t nodes = 3;
  LinkSpec link;
  std::string subnet = "10.213.0.0/24";
  std::uint32_t mtu_bytes = 1500;
  int launcher_pid = 0;  // goes into the prefix, so --cleanup-stale can tell live runs from dead ones
  std::string tag;       // distinguishes runs of one launcher ([a-z0-9], <= 8 chars)
};

Result<EmulationPlan> plan_emulation(const PlanOptions& options);

using CommandLine = std::vector<std::string>;

// In order; each must succeed.
std::vector<CommandLine> setup_commands(const EmulationPlan& plan);
// The shaping commands of one side of one link (used by setup_commands).
std::vector<CommandLine> shaping_commands(const std::string& netns, const std::string& device, const LinkSpec& link);
// In order; each may fail (a piece already gone) and the rest still run.
std::vector<CommandLine> cleanup_commands(const EmulationPlan& plan);
// Wraps a command to run inside a namespace: ip netns exec <ns> argv...
CommandLine in_netns(const std::string& netns, const CommandLine& argv);

// Namespaces named in `ip netns list` output ("name" or "name (id: 3)").
std::vector<std::string> parse_netns_list(std::string_view text);
// The launcher pid encoded in a run's namespace name, or 0 when the name is
// not one of ours.
int launcher_pid_of(std::string_view netns);
// The run prefix P of one of its namespaces (P-br, P-n<i>), or "" when the
// name is not one of ours.
std::string run_prefix_of(std::string_view netns);
// The namespaces of `names` that belong to runs whose launcher is dead
// (launcher_runs(name, pid) false), sorted.
std::vector<std::string> stale_namespaces(const std::vector<std::string>& names,
                                          const std::function<bool(const std::string& netns, int pid)>& launcher_runs);

std::string join_command(const CommandLine& argv);

}  // namespace sluice::emulate
