#include "scenarios/lua/machine_report.hpp"

#include <fmt/core.h>

#include <stdexcept>

#include "core/sched/data_path.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/path_class.hpp"
#include "core/topology/peer_rank.hpp"
#include "core/topology/topology_text.hpp"

namespace sluice::scenario {
namespace {

std::string decision_text(const Result<sched::PathDecision>& d) {
  if (!d.ok()) return "unplannable: " + d.status().to_string();
  return std::string(sched::to_string(d->path)) + " (" + d->reason + ")";
}

nlohmann::json nics_by_rank(const topo::Topology& t, const std::vector<topo::RankedPeer>& ranked, std::string& text) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& peer : ranked) {
    const std::string cls(topo::to_string(peer.rank.path_class));
    text += fmt::format("{}{}({})", text.empty() ? "" : " ", t.vertex(peer.peer).name, cls);
    rows.push_back({{"nic", t.vertex(peer.peer).name},
                    {"index", peer.index},
                    {"path_class", cls},
                    {"pci_distance", peer.rank.pci_distance},
                    {"cross_numa", peer.rank.cross_numa},
                    {"rank_key", peer.rank.key}});
  }
  return rows;
}

// Per GPU: NICs by nvidia-fs rank, and what the scheduler does for a read into that GPU.
nlohmann::json gpu_choices(const topo::Topology& t, NodeId node, std::string& text) {
  nlohmann::json gpus = nlohmann::json::array();
  const std::uint32_t gpu_count = t.count(node, topo::VertexKind::gpu);
  if (gpu_count == 0 || t.count(node, topo::VertexKind::nic) == 0) {
    text += "\nNo GPU or no NIC on this machine: no GPU-direct scheduling to show.\n";
    return gpus;
  }
  Result<sched::RailSelector> rails = sched::RailSelector::create(t, node);
  if (!rails.ok()) throw std::runtime_error("rail selector: " + rails.status().to_string());
  text += "\nScheduler choices for a read into each GPU (core/sched):\n";
  text += fmt::format("{:<8} {:<34} {:<10} {}\n", "GPU", "NICs by nvidia-fs rank (class)", "chosen NIC",
                      "path with GPU-direct capable transport | without");
  for (std::uint32_t g = 0; g < gpu_count; ++g) {
    const topo::VertexId gpu = t.device(node, topo::VertexKind::gpu, g).value();
    Result<std::vector<topo::RankedPeer>> ranked = topo::rank_peers(t, gpu, topo::VertexKind::nic);
    if (!ranked.ok()) throw std::runtime_error("ranking NICs: " + ranked.status().to_string());
    std::string ranks;
    nlohmann::json nic_rows = nics_by_rank(t, *ranked, ranks);
    Result<std::uint32_t> nic = rails->choose(sched::MemoryPlace::gpu(g));
    if (!nic.ok()) throw std::runtime_error("choosing a NIC: " + nic.status().to_string());
    rails->release(*nic).ignore();  // a what-if: give the connection back at once
    const auto direct = sched::decide_path(t, node, sched::MemoryPlace::gpu(g), *nic, {true});
    const auto plain = sched::decide_path(t, node, sched::MemoryPlace::gpu(g), *nic, {false});
    const std::string nic_name = t.vertex(t.device(node, topo::VertexKind::nic, *nic).value()).name;
    text += fmt::format("{:<8} {:<34} {:<10} {} | {}\n", t.vertex(gpu).name, ranks, nic_name, decision_text(direct),
                        decision_text(plain));
    gpus.push_back({{"gpu", t.vertex(gpu).name},
                    {"nics_by_rank", nic_rows},
                    {"chosen_nic", nic_name},
                    {"path_gpu_direct_capable", direct.ok() ? std::string(sched::to_string(direct->path)) : "error"},
                    {"reason_gpu_direct_capable", direct.ok() ? direct->reason : direct.status().to_string()},
                    {"path_without_gpu_direct", plain.ok() ? std::string(sched::to_string(plain->path)) : "error"},
                    {"reason_without_gpu_direct", plain.ok() ? plain->reason : plain.status().to_string()}});
  }
  return gpus;
}

}  // namespace

MachineReport machine_report(const topo::Topology& t, NodeId node, const std::string& name) {
  if (node >= t.node_count()) {
    throw std::runtime_error("node " + std::to_string(node) + " does not exist (the topology has " +
                             std::to_string(t.node_count()) + ")");
  }
  if (Status s = t.validate(); !s.ok()) throw std::runtime_error(name + ": " + s.to_string());
  Result<std::string> rendered = topo::to_text(t, node);
  if (!rendered.ok()) throw std::runtime_error(rendered.status().to_string());
  MachineReport report;
  report.text = "Machine: " + name + "\n" + *rendered;
  report.doc["machine"] = name;
  report.doc["node"] = node;
  report.doc["vertices"] = t.vertex_count();
  report.doc["links"] = t.link_count();
  report.doc["gpus"] = gpu_choices(t, node, report.text);
  return report;
}

}  // namespace sluice::scenario
