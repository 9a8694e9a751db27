// LinkFaults: partitions and packet loss on the links of an emulated cluster
// (netns_cluster.hpp), in the kernel, for everything that crosses them:
// control messages and bulk data alike, so TCP itself sees the loss and the
// silence. The fault plan's primitives (core/faults/fault_control.hpp:
// set_partitions, set_message_faults) map onto it.
//
// Mechanism: one nftables table (k_fault_table) in each node's namespace,
// with an output and an input chain:
//   output: packets to a node this one is cut from are dropped; then every
//           packet is dropped with the loss probability (nft `numgen random`,
//           the kernel's generator: the probability comes from the run's
//           seed, which packet is lost does not, as with tc netem's loss);
//   input:  packets from a node this one is cut from are dropped.
// Each drop rule counts into a named counter, so what was dropped is data
// (drops()). Both sides of a cut drop, so a partition holds in both
// directions even for the node whose rules have not been replaced yet.
//
// Why nftables and not tc netem: neither kernel here has sch_netem (see
// docs/reliability.md); nf_tables is there. Extra delay stays impossible
// without netem (or sch_fq for an eBPF departure-time delay, absent on this
// machine too), and set_delay refuses it, saying so.
//
// Needs root and the `nft` program (Debian package nftables, in make deps);
// install() says what is missing. Each change runs `ip netns exec <ns> nft`
// once per node whose rules change (bounded by k_nft_timeout_ms each).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/netns/emulation_plan.hpp"

namespace sluice::emulate {

inline constexpr std::string_view k_fault_table = "sluice_faults";
inline constexpr std::uint32_t k_loss_scale = 1'000'000;  // loss is applied in parts per million
inline constexpr std::uint32_t k_nft_timeout_ms = 10'000;

// What one node's rules say.
struct NodeLinkFaults {
  std::vector<std::string> cut_from;  // addresses this node exchanges no packet with
  std::uint32_t loss_ppm = 0;         // each packet leaving the node is lost with loss_ppm / k_loss_scale

  bool operator==(const NodeLinkFaults&) const = default;
};

// Packets dropped, by cause, summed over nodes.
struct LinkDropCounts {
  std::uint64_t partition_packets = 0;
  std::uint64_t loss_packets = 0;
};

// The nft script that (re)creates the table with its counters and empty
// chains, and the one that replaces the chains' rules; atomic, one nft run each.
std::string nft_table_script();
std::string nft_rules_script(const NodeLinkFaults& faults);
// The counters from `nft -j list counters table inet sluice_faults` output.
Result<LinkDropCounts> parse_nft_counters(std::string_view json);
// loss probability [0, 1] -> ppm; invalid_argument outside.
Result<std::uint32_t> loss_to_ppm(double probability);
// Node i's rules when `partitions` (sets of node indices) are active: cut
// from every node on the other side of any set, as a partition fault means.
std::vector<NodeLinkFaults> partition_rules(const std::vector<std::vector<std::uint32_t>>& partitions,
                                            const std::vector<std::string>& addresses, std::uint32_t loss_ppm);

class LinkFaults {
 public:
  explicit LinkFaults(EmulationPlan plan) : plan_(std::move(plan)), current_(plan_.nodes.size()) {}

  // Creates the tables (no fault yet). unavailable when `nft` is missing or
  // the kernel refuses (no nf_tables), with the output.
  [[nodiscard]] Status install();
  // The active partitions, as node indices of the plan; replaces the last.
  [[nodiscard]] Status set_partitions(const std::vector<std::vector<std::uint32_t>>& partitions);
  // Every packet leaving any node is lost with `probability`.
  [[nodiscard]] Status set_loss(double probability);
  // unavailable for delay > 0 (no sch_netem here); ok for 0.
  [[nodiscard]] Status set_delay(std::uint64_t extra_delay_ns) const;
  // No cut, no loss.
  [[nodiscard]] Status heal();
  // Packets dropped since install(), by cause.
  Result<LinkDropCounts> drops() const;

 private:
  Status apply(std::vector<NodeLinkFaults> next);

  EmulationPlan plan_;
  std::vector<std::vector<std::uint32_t>> partitions_;
  std::uint32_t loss_ppm_ = 0;
  std::vector<NodeLinkFaults> current_;  // what each node's table holds now
  bool installed_ = false;
};

}  // namespace sluice::emulate
