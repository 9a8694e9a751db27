#include "scenarios/deploy/cluster_point_run.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <charconv>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/deploy/gathered_results.hpp"
#include "scenarios/deploy/node_process.hpp"
#include "scenarios/deploy/node_runner.hpp"
#include "scenarios/runner/fs_deployment.hpp"
#include "scenarios/runner/hw_point_run.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/workload_run.hpp"
#include "scenarios/runner/sweep_schedule.hpp"
#include "transports/shared_secret.hpp"
#include "transports/transport.hpp"

namespace sluice::emulate {
namespace {

using nlohmann::json;

scenario::RunResult failed(const scenario::ScenarioSpec& spec, const ClusterPointOptions& options, std::string why) {
  return failed_cluster_point(spec, options, std::move(why));
}

// "a.b.c.d/n" -> network and mask (host order); nullopt when it is not one.
std::optional<std::pair<std::uint32_t, std::uint32_t>> parse_subnet(const std::string& text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  in_addr a{};
  if (::inet_pton(AF_INET, text.substr(0, slash).c_str(), &a) != 1) return std::nullopt;
  unsigned bits = 0;
  const char* first = text.data() + slash + 1;
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, bits);
  if (ec != std::errc() || end != last || first == last || bits > 32) return std::nullopt;
  const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
  return std::make_pair(ntohl(a.s_addr) & mask, mask);
}

std::string text_of(const in_addr& a) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, text, sizeof text);
  return text;
}

// The first answer of `pick` over this host's up IPv4 interfaces.
template <typename Pick>
std::optional<std::string> find_interface_address(Pick pick) {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (const ifaddrs* i = all; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_UP) == 0) continue;
    const in_addr a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
    if (pick(*i, ntohl(a.s_addr))) found = text_of(a);
  }
  ::freeifaddrs(all);
  return found;
}

}  // namespace

scenario::RunResult failed_cluster_point(const scenario::ScenarioSpec& spec, const ClusterPointOptions& options,
                                         std::string why) {
  scenario::RunResult r;
  r.spec = spec;
  r.backend = options.backend;
  r.ok = false;
  r.error = std::string(scenario::to_string(options.backend)) + ": " + std::move(why);
  return r;
}

Result<std::string> listen_address(const std::string& listen) {
  if (listen.empty() || listen == "auto") {
    std::optional<std::string> a =
        find_interface_address([](const ifaddrs& i, std::uint32_t) { return (i.ifa_flags & IFF_LOOPBACK) == 0; });
    return a ? *a : std::string("127.0.0.1");
  }
  in_addr literal{};
  if (::inet_pton(AF_INET, listen.c_str(), &literal) == 1) return listen;
  if (listen.find('/') != std::string::npos) {
    const auto subnet = parse_subnet(listen);
    if (!subnet) return error(StatusCode::invalid_argument, "--listen " + listen + ": not an IPv4 subnet a.b.c.d/n");
    std::optional<std::string> a = find_interface_address(
        [&](const ifaddrs&, std::uint32_t host) { return (host & subnet->second) == subnet->first; });
    if (!a)
      return error(StatusCode::not_found, "--listen " + listen + ": this host has no up interface in that subnet");
    return *a;
  }
  std::optional<std::string> a =
      find_interface_address([&](const ifaddrs& i, std::uint32_t) { return listen == i.ifa_name; });
  if (!a) {
    return error(StatusCode::not_found, "--listen " + listen +
                                            ": not an IPv4 address, subnet, \"auto\" or an up interface with an "
                                            "IPv4 address on this host");
  }
  return *a;
}

namespace {

// What each rank says before a point: the point it evaluated, its address (or
// why it has none), and from rank 0 the run id and secret of the point.
struct Hello {
  std::string digest;
  std::string address;
  std::string problem;
  std::string run_id;
  std::string secret;
  std::string note;  // this rank's, for the result's log (not sent)
};

Result<std::vector<Hello>> say_hello(Bootstrap& bootstrap, const Hello& mine) {
  const json j = {{"digest", mine.digest},
                  {"address", mine.address},
                  {"problem", mine.problem},
                  {"run_id", mine.run_id},
                  {"secret", mine.secret}};
  Result<std::vector<std::string>> all = bootstrap.all_gather(j.dump());
  if (!all.ok()) return all.status();
  std::vector<Hello> out;
  for (std::size_t r = 0; r < all->size(); ++r) {
    const json h = json::parse((*all)[r], nullptr, false);
    if (h.is_discarded() || !h.is_object()) {
      return error(StatusCode::corrupt, "rank " + std::to_string(r) + " sent a malformed hello");
    }
    out.push_back(Hello{h.value("digest", std::string()), h.value("address", std::string()),
                        h.value("problem", std::string()), h.value("run_id", std::string()),
                        h.value("secret", std::string()), std::string()});
  }
  return out;
}

// A fresh run id for a point: the launcher's job, this host's pid and a clock.
std::string fresh_run_id() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return "cluster-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

// The hellos agree, or why not (the same text on every rank).
std::string check_hellos(const std::vector<Hello>& hellos) {
  for (std::size_t r = 0; r < hellos.size(); ++r) {
    if (!hellos[r].problem.empty()) return "rank " + std::to_string(r) + ": " + hellos[r].problem;
    if (hellos[r].digest != hellos[0].digest) {
      return "rank " + std::to_string(r) + " evaluated another point than rank 0 (digest " + hellos[r].digest + " vs " +
             hellos[0].digest + "): the ranks' scripts, --set values or versions differ";
    }
  }
  return {};
}

// How the fault plan's kills of servers of one kind (storage, or metadata:
// both of its roles) were made (node_process.hpp), "" without any.
std::string kills_of(const ClusterConfig& c, bool metadata) {
  std::string process;
  std::string in_process;
  for (std::uint32_t rank = 0; rank < c.nodes.size(); ++rank) {
    const NodeId id = c.nodes[rank].id;  // nodes in id order: rank i is nodes[i]
    if (std::none_of(c.faults.begin(), c.faults.end(), [&](const ClusterFault& f) {
          return f.node == id &&
                 (metadata ? f.role == Role::meta || f.role == Role::meta_mirror : f.role == Role::storage);
        }))
      continue;
    std::string& list = runs_in_child_process(c, rank) ? process : in_process;
    list += (list.empty() ? "" : ",") + std::to_string(id);
  }
  std::string text;
  if (!process.empty()) {
    text = "SIGKILL of the node process; a restart is a new process on its storage root" +
           std::string(metadata ? (c.meta_store == "rocksdb" ? ", its metadata store reopened"
                                                             : ", its metadata store (in memory) empty")
                                : "") +
           " (nodes " + process + ")";
  }
  if (!in_process.empty()) {
    text += std::string(text.empty() ? "" : "; ") +
            "crash of the service inside its node process, which hosts other services too (nodes " + in_process + ")";
  }
  return text;
}

std::map<std::string, std::string> deployment_of(const ClusterConfig& c, const ClusterPointOptions& o) {
  std::string hosts;
  for (const NodeSpec& n : c.nodes) hosts += (hosts.empty() ? "" : ",") + n.address;
  std::map<std::string, std::string> d = {
      {"launcher", o.launcher},
      {"transport", c.transport},
      {"storage_backend", c.storage_backend},
      {"storage_root", c.storage_root},
      {"meta_store", c.meta_store},
      {"node_memory_limit_bytes", std::to_string(c.node_memory_limit_bytes)},
      {"hosts", hosts},
      {"authentication",
       o.deployment.insecure ? "off" : (o.deployment.shared_secret_file.empty() ? "per-run secret" : "secret file")}};
  if (const std::string kills = kills_of(c, false); !kills.empty()) d["storage_kills"] = kills;
  if (const std::string kills = kills_of(c, true); !kills.empty()) d["meta_kills"] = kills;
  return d;
}

// Ctrl-C under mpirun: mpirun SIGKILLs the ranks 1 s after its SIGTERM
// (Open MPI's odls_base_sigkill_timeout), sooner than a node can end its
// point, so a rank's directory outlived it in about a third of the runs. So
// the rank removes its directory as soon as a stop is asked: the files its
// services hold open stay usable until closed, and nothing stays behind
// when the SIGKILL comes. Polls stop_requested every k_stop_sweep_poll_ms
// on a thread of its own until it goes.
class StopSweeper {
 public:
  StopSweeper(std::string dir, std::function<bool()> stop_requested) {
    if (dir.empty() || !stop_requested) return;
    thread_ = std::thread([this, dir = std::move(dir), stop = std::move(stop_requested)] {
      std::unique_lock lock(mu_);
      while (!done_) {
        if (stop()) {
          std::error_code ec;
          std::filesystem::remove_all(dir, ec);
          return;
        }
        cv_.wait_for(lock, std::chrono::milliseconds(k_stop_sweep_poll_ms));
      }
    });
  }
  ~StopSweeper() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  StopSweeper(const StopSweeper&) = delete;
  StopSweeper& operator=(const StopSweeper&) = delete;

 private:
  static constexpr int k_stop_sweep_poll_ms = 50;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// This rank's node in child processes (node_process.hpp): the program is this one's `node` command.
Result<json> run_in_child_process(const NodeRunOptions& node, const std::string& work_dir,
                                  const ClusterPointOptions& options, Bootstrap& bootstrap) {
  NodeProcessOptions o;
  o.config = node.config;
  o.node_command = options.node_command;
  if (o.node_command.empty()) {
    const std::filesystem::path self = this_program({});
    if (self.empty()) return error(StatusCode::unavailable, "cannot find this program (/proc/self/exe)");
    o.node_command = {self.string(), "node"};
  }
  o.fs = node.fs;
  o.work_dir = work_dir;
  o.log = options.log;
  o.stop_requested = options.stop_requested;
  return run_node_in_child_process(o, bootstrap);
}

// Why this rank cannot give its client ranks the GPU buffers the workload
// asks for, "" when it can or needs none.
std::string gpu_problem(const scenario::ScenarioSpec& spec, const ClusterConfig& config, std::uint32_t rank,
                        const ClusterPointOptions& options) {
  if (!scenario::uses_gpu_memory(spec) || rank >= config.nodes.size() || !config.nodes[rank].has(Role::client)) {
    return "";
  }
  Status gpu = options.deployment.gpu_memory == nullptr || !options.deployment.gpu_available
                   ? error(StatusCode::unavailable, "this build or launcher gives no GPU memory")
                   : options.deployment.gpu_available();
  if (gpu.ok()) return "";
  const auto first = std::find_if(spec.workloads.begin(), spec.workloads.end(),
                                  [](const scenario::WorkloadSpec& w) { return scenario::uses_gpu_memory(w); });
  const std::string label = first == spec.workloads.end() ? std::string() : first->label;
  return "workload " + label + " puts its buffers in GPU memory and node " + std::to_string(config.nodes[rank].id) +
         " has no usable GPU: " + gpu.message();
}

// Why this host cannot run the deployment's transport (ucx in a build
// without UCX, say), "" when it can: said in the hello, so that every rank
// fails the point with it instead of waiting for this one.
std::string transport_problem(const std::string& name) {
  for (const transport::TransportListing& t : transport::list_transports()) {
    if (t.name == name) return t.available ? "" : "transport " + name + " is unavailable here: " + t.why_unavailable;
  }
  return "transport " + name + " is not in this build";
}

// GPU-direct chunks need a transport that reaches GPU memory; tcp and
// tcp+shm move host bytes. As a hardware run does: gds on fails with the
// reason, auto bounces and says so (`note`), off is off.
std::string gds_problem(const scenario::ScenarioSpec& spec, const std::string& transport, std::string* note) {
  if (spec.fs.gds == scenario::GdsMode::off) return "";
  const std::string why = scenario::gpu_unreachable_by(transport);
  if (why.empty()) return "";
  if (spec.fs.gds == scenario::GdsMode::on) return "GDS on: " + why + "; use gds=\"auto\" or \"off\"";
  if (scenario::uses_gpu_memory(spec)) *note = "GDS auto -> bounce: " + why;
  return "";
}

// The study's file-system settings for the node's services (NodeRunOptions::fs).
NodeRunOptions::FsSettings fs_settings(const scenario::ScenarioSpec& spec,
                                       const std::vector<scenario::WorkloadRun>& workloads, bool gpu_reachable) {
  NodeRunOptions::FsSettings fs;
  fs.mgmt = spec.fs.mgmt;
  fs.meta = scenario::FsDeployment::meta_config_of(spec, 0);
  fs.storage = spec.fs.storage_config;
  fs.client = [&spec, &workloads, gpu_reachable](std::uint32_t workload, std::uint32_t rank) {
    ClientHostConfig c = scenario::FsDeployment::client_host_config_of(spec, workloads.at(workload), rank);
    c.client.planner.topology = nullptr;  // the hosts' own rails, not the modelled ones (as a hardware run)
    // What the study allows, where the transport can (else GPU chunks bounce: gds_problem).
    c.client.planner.caps.gpu_memory_reachable = c.client.planner.caps.gpu_memory_reachable && gpu_reachable;
    return c;
  };
  return fs;
}

// The client ranks run the study's own workloads, whatever their kind, one
// after the other: each as a WorkloadRun into `out`; the first that cannot be made says why.
Status make_workloads(const scenario::ScenarioSpec& spec, std::vector<scenario::WorkloadRun>& out) {
  for (std::size_t i = 0; i < spec.workloads.size(); ++i) {
    Result<scenario::WorkloadRun> made = scenario::WorkloadRun::create(spec.workloads[i], i, *spec.cluster);
    if (!made.ok()) return made.status();
    out.push_back(std::move(made).value());
  }
  return ok_status();
}

// This rank's hello: the first problem it found (the plan, the workload, the
// rank count, its address, the secret), its address, and at rank 0 the
// point's run id and secret.
Hello my_hello(const scenario::ScenarioSpec& spec, const Result<ClusterConfig>& planned, const Status& workload,
               const Bootstrap& bootstrap, const ClusterPointOptions& options) {
  Hello mine;
  mine.digest = scenario::sweep_digest({spec});
  if (!planned.ok()) {
    mine.problem = planned.status().message();
  } else if (!workload.ok()) {
    mine.problem = workload.message();
  } else if (planned->nodes.size() != bootstrap.size()) {
    mine.problem = "the point's cluster has " + std::to_string(planned->nodes.size()) + " nodes and the launcher " +
                   std::to_string(bootstrap.size()) + " ranks; one rank per node (mpirun -np " +
                   std::to_string(planned->nodes.size()) + ")";
  }
  if (mine.problem.empty()) mine.problem = transport_problem(options.deployment.transport);
  if (mine.problem.empty()) mine.problem = gpu_problem(spec, *planned, bootstrap.rank(), options);
  if (mine.problem.empty()) mine.problem = gds_problem(spec, options.deployment.transport, &mine.note);
  Result<std::string> address = listen_address(options.listen);
  if (!address.ok() && mine.problem.empty()) mine.problem = address.status().message();
  if (address.ok()) mine.address = *address;
  if (bootstrap.rank() == 0) {
    mine.run_id = fresh_run_id();
    if (!options.deployment.insecure && options.deployment.shared_secret_file.empty()) {
      Result<std::string> made = transport::make_shared_secret();
      if (made.ok()) {
        mine.secret = std::move(made).value();
      } else if (mine.problem.empty()) {
        mine.problem = "making the point's secret: " + made.status().message();
      }
    }
  }
  return mine;
}

}  // namespace

scenario::RunResult run_cluster_point(const scenario::ScenarioSpec& spec, Bootstrap& bootstrap,
                                      const ClusterPointOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Result<ClusterConfig> planned = SpecDeployment::cluster_of(spec);
  std::vector<scenario::WorkloadRun> workloads;
  const Status workload =
      planned.ok() ? make_workloads(spec, workloads) : error(StatusCode::invalid_argument, "the point has no workload");
  const Hello mine = my_hello(spec, planned, workload, bootstrap, options);
  // The first collective: every rank takes part even when its own point is
  // wrong, so that all fail with the same reason instead of waiting.
  Result<std::vector<Hello>> hellos = say_hello(bootstrap, mine);
  if (!hellos.ok()) return failed(spec, options, hellos.status().message());
  if (const std::string why = check_hellos(*hellos); !why.empty()) return failed(spec, options, why);

  ClusterConfig config = std::move(planned).value();  // nodes in id order (cluster_of): rank i is nodes[i]
  for (std::size_t i = 0; i < config.nodes.size(); ++i) config.nodes[i].address = (*hellos)[i].address;
  config.run_id = (*hellos)[0].run_id;
  config.max_wait_s = options.max_wait_s;
  config.storage_root = options.storage_root;
  config.storage_backend = options.deployment.storage_backend;
  config.meta_store = options.deployment.meta_store;
  config.transport = options.deployment.transport;
  config.node_memory_limit_bytes = options.deployment.node_memory_limit_bytes;
  config.insecure = options.deployment.insecure;
  config.shared_secret_file = options.deployment.shared_secret_file;
  config.shared_secret = (*hellos)[0].secret;

  // This rank's chunk files and metadata store: a directory of its own under
  // the storage root, marked with this process, so that a later `sluice run`
  // on this host sweeps it if this process dies (hw_point_run.hpp).
  const scenario::HwRunDir dir(options.storage_root, options.deployment.keep);
  const StopSweeper sweeper(options.deployment.keep ? std::string() : dir.path(), options.stop_requested);
  Result<json> ran = error(StatusCode::io_error, "cannot make a directory under " + options.storage_root);
  if (!dir.path().empty()) {
    NodeRunOptions node;
    node.config = config;
    node.config.storage_root = dir.path();
    node.log = options.log;
    node.stop_requested = options.stop_requested;
    node.make_workload = [&workloads](std::uint32_t w, std::uint32_t rank) { return workloads.at(w).make(rank); };
    node.rank_results = [&workloads](std::uint32_t w, std::uint32_t rank) {
      return workloads.at(w).rank_results(rank);
    };
    node.fs = fs_settings(spec, workloads, scenario::gpu_unreachable_by(config.transport).empty());
    node.gpu_memory = options.deployment.gpu_memory;
    node.servers_up = options.servers_up;
    ran = runs_in_child_process(config, bootstrap.rank()) ? run_in_child_process(node, dir.path(), options, bootstrap)
                                                          : run_node(node, bootstrap);
  }
  if (!ran.ok())
    return failed(spec, options, "rank " + std::to_string(bootstrap.rank()) + ": " + ran.status().message());
  // Rank 0 holds every node's document; every rank gets it, so that every
  // rank's script sees the same result.
  Result<std::vector<std::string>> shared = bootstrap.all_gather(bootstrap.rank() == 0 ? ran->dump() : std::string());
  if (!shared.ok()) return failed(spec, options, "sharing the results: " + shared.status().message());
  const json gathered = json::parse(shared->front(), nullptr, false);
  if (gathered.is_discarded()) return failed(spec, options, "rank 0 sent malformed results");
  scenario::RunResult r = SpecDeployment::result_of(spec, gathered);
  scenario::set_paths_taken(r);  // from the nodes' counters, summed
  r.backend = options.backend;
  if (!mine.note.empty()) r.log_tail.push_back(std::string(scenario::to_string(options.backend)) + ": " + mine.note);
  r.deployment = deployment_of(config, options);
  r.deployment["authenticated"] = authenticated_of(gathered);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace sluice::emulate
