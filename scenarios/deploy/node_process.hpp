// A node of a `--backend cluster` point hosted in a child process of its
// rank, so that a fault plan's kill of its server is a real SIGKILL of the
// process that hosts it, and the restart a new process that opens the same
// storage root: its chunk files and metadata store come back from disk
// (issue 18, "Real crashes").
//
// Which nodes (runs_in_child_process): a rank other than 0 whose node hosts
// one server only (storage, or a metadata server of a shard: no mgmt, other
// server or client, which a kill of the process would take too) and whose
// server the point's fault plan kills. Every other node runs in its rank's
// own process (run_node); there a kill is a crash of the service inside the
// process, and results.json's deployment says which was done
// ("storage_kills", "meta_kills").
//
// How: the rank starts `sluice node --config F --fs-settings S --rank R
// --bootstrap-fd 3` (the node program `sluice mount` starts; S the study's
// server settings, server_settings_codec.hpp) with one end of a socket pair
// as fd 3, and stands in as its launcher. Each collective the child asks for
// (node_collectives, in order) the rank makes on the point's Bootstrap, on
// a worker thread (a barrier can last the whole workload), and sends the
// answer back. Every answer is kept, so that a process started again after a
// kill gets the collectives that already happened at once, from the record
// (the endpoint table among them: it listens on the rails its peers know,
// given with --listen-rails), and then takes part live.
//
// Fault times count from the "servers-up" barrier, as NodeFaults' do. A kill
// that falls after "clients-done" is not made (the workload is over), nor a
// restart due after it. A child that ends before the sequence is over
// (killed for good by the plan, crashed, stopped by a signal) is stood in
// for: the rank makes the remaining collectives itself, with a node document
// that says what happened. The node's document gets counters
// "faults.<storage|meta>_process_kills" and "..._restarts" (meta for both
// metadata roles) and the list of its processes ("processes": pid, how each
// ended).
//
// Every child gets PR_SET_PDEATHSIG (SIGKILL): a rank that dies takes its
// node process with it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "scenarios/deploy/bootstrap.hpp"
#include "scenarios/deploy/cluster_config.hpp"
#include "scenarios/deploy/node_runner.hpp"

namespace sluice::emulate {

// How long a node process may take to exit after its last collective before it is killed.
inline constexpr std::uint32_t k_node_process_exit_wait_ms = 10'000;
// How often the relay looks at its child, its faults and its collectives.
inline constexpr std::uint32_t k_node_process_slice_ms = 20;

// See the top. config: the point's, with every node's address (config.nodes in id order).
bool runs_in_child_process(const ClusterConfig& config, std::uint32_t rank);

struct NodeProcessOptions {
  // As run_node would get it: addresses, run id, secret, this rank's storage root.
  ClusterConfig config;
  // The node program and its first words: {"/path/to/sluice", "node"}.
  std::vector<std::string> node_command;
  // The study's settings of the node's server (server_settings_codec.hpp),
  // written for the child (`--fs-settings`); none: the core's defaults.
  std::optional<NodeRunOptions::FsSettings> fs;
  // Where the child's config, settings and secret files go (a directory of this rank's, removed with it).
  std::string work_dir;
  std::function<void(std::string_view)> log;  // may be empty
  // SIGINT/SIGTERM at the rank: the child gets SIGTERM and is stood in for. May be empty.
  std::function<bool()> stop_requested;
};

// This rank's part of the point, its node hosted in child processes: what
// run_node returns at a rank other than 0 ({"ok"} and its node document).
Result<nlohmann::json> run_node_in_child_process(const NodeProcessOptions& options, Bootstrap& bootstrap);

}  // namespace sluice::emulate
