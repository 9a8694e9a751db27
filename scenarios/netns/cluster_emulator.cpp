#include "scenarios/netns/cluster_emulator.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "base/fd_io.hpp"
#include "base/run_marker.hpp"
#include "scenarios/deploy/deploy.hpp"
#include "transports/shared_secret.hpp"

namespace sluice::emulate {
namespace {

using Clock = std::chrono::steady_clock;

// Everything a run made, undone in reverse when it goes out of scope. The
// work directory goes too unless kept (--keep, or keep_work_dir() for a run
// whose logs tell why it failed): then it is marked kept, and no later sweep
// removes it (base/run_marker.hpp).
class RunGuard {
 public:
  RunGuard(const EmulationPlan& plan, const std::function<void(std::string_view)>& log, const std::string& dir,
           bool keep)
      : plan_(plan), log_(log), dir_(dir, keep) {}
  ~RunGuard() { cleanup(); }
  RunGuard(const RunGuard&) = delete;
  RunGuard& operator=(const RunGuard&) = delete;

  std::vector<ChildProcess>& children() { return children_; }
  void set_network(std::unique_ptr<NetnsCluster> network) { network_ = std::move(network); }
  void set_storage_dir(std::string dir) { storage_dir_ = std::move(dir); }
  void keep_work_dir() { dir_.keep(); }

  // Stops the processes, deletes the namespaces; returns the names still there.
  std::vector<std::string> cleanup() {
    if (done_) return {};
    done_ = true;
    for (ChildProcess& c : children_) c.stop(k_node_stop_grace_ms);
    children_.clear();
    std::vector<std::string> left = network_ ? network_->remove() : std::vector<std::string>{};
    network_.reset();
    std::error_code ec;
    if (!storage_dir_.empty()) std::filesystem::remove_all(storage_dir_, ec);
    dir_.finish();
    if (log_)
      log_(left.empty() ? "cleaned up " + plan_.prefix : "namespaces left behind: " + std::to_string(left.size()));
    return left;
  }

 private:
  EmulationPlan plan_;
  const std::function<void(std::string_view)>& log_;
  std::vector<ChildProcess> children_;
  std::unique_ptr<NetnsCluster> network_;
  base::RunDir dir_;
  std::string storage_dir_;
  bool done_ = false;
};

// iperf3 from node 1 to node 0 (the direction of the client's reads),
// through the same namespaces and shaped links; bits/s received.
Result<double> measure_iperf(const EmulationPlan& plan, std::uint32_t seconds, const std::string& dir,
                             std::uint32_t streams, RunGuard& guard) {
  if (plan.nodes.size() < 2) return error(StatusCode::invalid_argument, "iperf3 needs two nodes");
  const std::string log_path = dir + "/iperf3-server.log";
  Result<ChildProcess> server = ChildProcess::spawn(
      in_netns(plan.nodes[0].netns, {"iperf3", "-s", "-1", "--forceflush", "-B", plan.nodes[0].address}), log_path, -1);
  if (!server.ok()) return server.status();
  guard.children().push_back(std::move(server).value());
  // The server says when it listens; bounded wait on its log.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (read_text_file(log_path).find("listening") == std::string::npos) {
    if (Clock::now() >= deadline) return error(StatusCode::timed_out, "iperf3 server did not start");
    ::poll(nullptr, 0, 20);
  }
  Result<CommandOutput> client =
      run_command(in_netns(plan.nodes[1].netns, {"iperf3", "-c", plan.nodes[0].address, "-t", std::to_string(seconds),
                                                 "-P", std::to_string(streams), "-J"}),
                  (seconds + 30) * 1000);
  if (!client.ok()) return client.status();
  if (client->exit_code != 0) return error(StatusCode::unavailable, "iperf3 failed: " + client->output.substr(0, 400));
  const nlohmann::json j = nlohmann::json::parse(client->output, nullptr, false);
  if (j.is_discarded()) return error(StatusCode::corrupt, "iperf3 output is not JSON");
  try {
    return j.at("end").at("sum_received").at("bits_per_second").get<double>();
  } catch (const nlohmann::json::exception&) {
    return error(StatusCode::corrupt, "iperf3 JSON has no end.sum_received.bits_per_second");
  }
}

}  // namespace

std::string default_run_tag() {
  const auto ticks = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  static constexpr char k_digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string tag;
  std::uint64_t v = ticks / 1000;
  for (int i = 0; i < 6; ++i) {
    tag += k_digits[v % 36];
    v /= 36;
  }
  return tag;
}

Status make_marked_work_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return error(StatusCode::io_error, "emulate: cannot create " + dir + ": " + ec.message());
  if (Status st = base::write_run_marker(dir); !st.ok()) return error(st.code(), "emulate: " + st.message());
  return ok_status();
}

std::string netns_permitted() {
  if (::geteuid() != 0) return "not root (ip netns needs CAP_SYS_ADMIN and CAP_NET_ADMIN)";
  Result<CommandOutput> r = run_command({"ip", "netns", "list"}, k_ip_command_timeout_ms);
  if (!r.ok()) return "`ip netns list` failed: " + r.status().message();
  if (r->exit_code != 0) return "`ip netns list` exited " + std::to_string(r->exit_code) + ": " + r->output;
  // Creating one is the real test (a container may forbid mounts or unshare).
  const std::string probe = std::string(k_netns_prefix) + std::to_string(::getpid()) + "-probe";
  Result<CommandOutput> add = run_command({"ip", "netns", "add", probe}, k_ip_command_timeout_ms);
  if (!add.ok() || add->exit_code != 0) {
    return "`ip netns add` is not permitted here: " + (add.ok() ? add->output : add.status().message());
  }
  run_command({"ip", "netns", "delete", probe}, k_ip_command_timeout_ms)
      .status()
      .ignore();  // checked by callers' leak checks
  return "";
}

namespace {

// Authenticated unless the user said insecure: a fresh secret for this run
// (0600, in the work directory) unless one was given.
Status give_secret(ClusterConfig& cluster, const std::string& dir) {
  if (cluster.insecure || !cluster.shared_secret_file.empty()) return ok_status();
  Result<std::string> secret = transport::make_shared_secret();
  if (!secret.ok()) return error(secret.status().code(), "emulate: " + secret.status().message());
  cluster.shared_secret_file = dir + "/secret";
  if (Status st = transport::write_shared_secret_file(cluster.shared_secret_file, *secret); !st.ok()) {
    return error(st.code(), "emulate: " + st.message());
  }
  return ok_status();
}

}  // namespace

namespace {

// The node processes of the run, each in its namespace with its bootstrap
// socket (filed in guard); the launcher's ends of the sockets.
Result<std::vector<LineChannel>> spawn_nodes(const EmulationPlan& plan, const ClusterConfig& cluster,
                                             const EmulateOptions& options, const std::string& dir,
                                             const std::string& config_path, RunGuard& guard) {
  std::vector<LineChannel> channels;
  const std::vector<std::string> node_command = options.node_command.empty()
                                                    ? std::vector<std::string>{this_program("sluice").string(), "node"}
                                                    : options.node_command;
  for (std::size_t i = 0; i < plan.nodes.size(); ++i) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      return error(StatusCode::io_error, "emulate: socketpair failed");
    }
    std::vector<std::string> argv = node_command;
    for (std::string a : {std::string("--config"), config_path, std::string("--rank"), std::to_string(i),
                          std::string("--bootstrap-fd"), std::to_string(k_child_bootstrap_fd)}) {
      argv.push_back(std::move(a));
    }
    // A mounting client joins its namespace's network only (`--netns`, setns):
    // `ip netns exec` would also give it a mount namespace of its own, where
    // the FUSE mount would be invisible to this host's programs.
    const bool mounts = cluster.workload.mounted() && cluster.nodes[i].has(Role::client);
    if (mounts) {
      argv.push_back("--netns");
      argv.push_back(plan.nodes[i].netns);
    }
    Result<ChildProcess> child = ChildProcess::spawn(mounts ? argv : in_netns(plan.nodes[i].netns, argv),
                                                     dir + "/node" + std::to_string(i) + ".log", pair[1]);
    ::close(pair[1]);
    if (!child.ok()) {
      ::close(pair[0]);
      return child.status();
    }
    guard.children().push_back(std::move(child).value());
    channels.emplace_back(pair[0]);
  }
  return channels;
}

// The cluster the emulation runs: the options', or the default one of
// --nodes with the options' workload, wait and seed.
Result<ClusterConfig> cluster_for(const EmulateOptions& options) {
  ClusterConfig cluster = options.cluster;
  if (cluster.nodes.empty()) {
    Result<ClusterConfig> def = default_cluster(options.nodes);
    if (!def.ok()) return def.status();
    const ClusterWorkload workload = cluster.workload;
    const std::uint32_t max_wait = cluster.max_wait_s;
    cluster = std::move(def).value();
    cluster.workload = workload;
    cluster.max_wait_s = max_wait;
    cluster.seed = options.cluster.seed;
  }
  if (cluster.nodes.size() != options.nodes) {
    return error(StatusCode::invalid_argument, "emulate: the cluster has " + std::to_string(cluster.nodes.size()) +
                                                   " nodes, --nodes says " + std::to_string(options.nodes));
  }
  return cluster;
}

// The cluster placed on the plan's namespaces: its run id, storage under
// `dir`, each node's address, the run's secret; checked.
Status place_cluster(ClusterConfig& cluster, const EmulationPlan& plan, const std::string& dir) {
  cluster.run_id = plan.prefix.substr(k_netns_prefix.size());
  cluster.storage_root = dir + "/storage";
  std::sort(cluster.nodes.begin(), cluster.nodes.end(),
            [](const NodeSpec& a, const NodeSpec& b) { return a.id < b.id; });
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) cluster.nodes[i].address = plan.nodes[i].address;
  if (Status st = give_secret(cluster, dir); !st.ok()) return st;
  if (Status st = validate(cluster); !st.ok()) return st;
  if (cluster.workload.mounted() && cluster.client_count() != 1) {
    return error(StatusCode::invalid_argument,
                 "emulate: a mount needs exactly one client node on this host, the "
                 "cluster has " +
                     std::to_string(cluster.client_count()));
  }
  return ok_status();
}

// What the run's document says of the emulated network.
nlohmann::json emulation_doc(const EmulationPlan& plan) {
  nlohmann::json emulation = {{"prefix", plan.prefix},
                              {"nodes", plan.nodes.size()},
                              {"link", plan.link.to_string()},
                              {"rate_bits_per_s", plan.link.rate_bits_per_s},
                              {"latency_ns", plan.link.latency_ns},
                              {"mtu_bytes", plan.mtu_bytes},
                              {"subnet", plan.subnet + ".0/24"}};
  for (const EmulatedNode& n : plan.nodes) emulation["addresses"].push_back(n.address);
  return emulation;
}

// Serves the nodes' bootstrap until every node reported, waits for their
// processes and combines their documents; an error carries the tails of the
// node logs where the nodes did not all report.
Result<nlohmann::json> serve_and_gather(const EmulationPlan& plan, const ClusterConfig& cluster, const std::string& dir,
                                        std::vector<LineChannel> channels, int stop_fd, RunGuard& guard) {
  BootstrapCoordinator coordinator(std::move(channels));
  const auto deadline =
      Clock::now() + std::chrono::seconds(2 * std::uint64_t{cluster.max_wait_s} + 60 +
                                          (cluster.workload.mounted() ? cluster.workload.mount.max_mount_s : 0));
  Result<std::vector<std::string>> docs = coordinator.serve(deadline, stop_fd);
  if (!docs.ok()) {
    std::string tail;
    for (std::size_t i = 0; i < plan.nodes.size(); ++i) {
      std::string text = read_text_file(dir + "/node" + std::to_string(i) + ".log");
      if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
      if (!text.empty()) tail += "\n  node " + std::to_string(i) + " log: " + text;
    }
    return error(docs.status().code(), "emulate: " + docs.status().message() + tail);
  }
  std::vector<int> exit_codes;
  for (std::size_t i = 0; i < guard.children().size(); ++i) {
    Result<int> code = guard.children()[i].wait(30'000);
    if (!code.ok()) {
      return error(StatusCode::timed_out, "emulate: node " + std::to_string(i) +
                                              " process did not exit after the run: " + code.status().message());
    }
    exit_codes.push_back(*code);
  }
  Result<nlohmann::json> run = combine_node_results(cluster.run_id, *docs);
  if (!run.ok()) return run.status();
  for (std::size_t i = 0; i < exit_codes.size() && i < (*run)["nodes"].size(); ++i) {
    (*run)["nodes"][i]["exit_code"] = exit_codes[i];
    if (exit_codes[i] != 0) (*run)["ok"] = false;
  }
  return run;
}

}  // namespace

Result<nlohmann::json> run_emulation(const EmulateOptions& options, int stop_fd) {
  const auto& log = options.log;
  PlanOptions po;
  po.nodes = options.nodes;
  po.link = options.link;
  po.subnet = options.subnet;
  po.mtu_bytes = options.mtu_bytes;
  po.launcher_pid = ::getpid();
  po.tag = options.tag.empty() ? default_run_tag() : options.tag;
  Result<EmulationPlan> planned = plan_emulation(po);
  if (!planned.ok()) return planned.status();
  const EmulationPlan& plan = *planned;

  Result<ClusterConfig> chosen = cluster_for(options);
  if (!chosen.ok()) return chosen.status();
  ClusterConfig cluster = std::move(chosen).value();
  const std::string dir = options.work_dir.empty() ? "/tmp/" + plan.prefix : options.work_dir;
  if (Status st = make_marked_work_dir(dir); !st.ok()) return st;
  // A run that fails before its nodes report (a bad secret, a node that does
  // not start) removes the directory: the error carries the logs' tails.
  RunGuard guard(plan, log, dir, options.keep_work_dir);
  if (Status st = place_cluster(cluster, plan, dir); !st.ok()) return st;
  const std::string config_path = dir + "/cluster.json";
  {
    std::ofstream out(config_path);
    out << to_json(cluster).dump(2) << "\n";
    if (!out) return error(StatusCode::io_error, "emulate: cannot write " + config_path);
  }

  guard.set_storage_dir(cluster.storage_root);

  if (log)
    log("emulate " + plan.prefix + ": " + std::to_string(plan.nodes.size()) + " nodes, link " + plan.link.to_string() +
        ", mtu " + std::to_string(plan.mtu_bytes) + ", subnet " + plan.subnet + ".0/24, work dir " + dir);
  Result<std::unique_ptr<NetnsCluster>> network = NetnsCluster::create(plan, stop_fd);
  if (!network.ok()) return network.status();
  guard.set_network(std::move(network).value());
  nlohmann::json emulation = emulation_doc(plan);
  if (options.iperf_seconds > 0) {
    Result<double> bits = measure_iperf(plan, std::min(options.iperf_seconds, k_iperf_seconds_max), dir,
                                        cluster.connections_per_rail, guard);
    if (!bits.ok()) return error(bits.status().code(), "emulate: iperf3: " + bits.status().message());
    emulation["iperf_bits_per_s"] = *bits;
    if (log) log("iperf3 node 1 -> node 0: " + std::to_string(*bits / 1e6) + " Mbit/s");
    for (ChildProcess& c : guard.children()) c.stop(k_node_stop_grace_ms);
    guard.children().clear();
  }

  // The node processes, each in its namespace, each with its bootstrap socket.
  Result<std::vector<LineChannel>> spawned = spawn_nodes(plan, cluster, options, dir, config_path, guard);
  if (!spawned.ok()) return spawned.status();
  if (log) log(std::to_string(plan.nodes.size()) + " node processes started (logs in " + dir + ")");
  Result<nlohmann::json> run = serve_and_gather(plan, cluster, dir, std::move(spawned).value(), stop_fd, guard);
  if (!run.ok()) return run.status();
  (*run)["emulation"] = emulation;
  (*run)["work_dir"] = dir;
  (*run)["storage_root"] = cluster.storage_root;        // where the nodes' chunk files and metadata went
  if (!run->value("ok", false)) guard.keep_work_dir();  // its node logs say why (the report points there)
  const std::vector<std::string> left = guard.cleanup();
  (*run)["left_behind"] = left;
  if (!left.empty()) {
    return error(StatusCode::internal, "emulate: namespaces left behind: " + left.front());
  }
  return run;
}

}  // namespace sluice::emulate
