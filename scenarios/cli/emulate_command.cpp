#include "scenarios/cli/emulate_command.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>
#include <atomic>
#include <sstream>

#include <fmt/core.h>

#include "base/json_text.hpp"
#include "core/common/byte_size.hpp"
#include "scenarios/netns/cluster_emulator.hpp"
#include "scenarios/deploy/deploy.hpp"
#include "scenarios/netns/dead_runs.hpp"
#include "transports/shared_secret.hpp"

namespace sluice::emulate {
namespace {

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;

// Authentication and the metadata store, for mount and node (ClusterConfig's fields).
struct SecurityCli {
  std::string shared_secret_file;
  bool insecure = false;
  std::string meta_store;  // "" = the config's (rocksdb by default)
};

struct NodeCli {
  std::string config;
  std::int64_t rank = -1;
  int bootstrap_fd = -1;
  bool mpi = false;
  std::string listen;
  std::string out;
  std::string netns;                      // join this network namespace (setns) before anything else
  std::vector<std::string> listen_rails;  // NodeRunOptions::listen_rails (a node process started again)
  std::string fs_settings;                // NodeRunOptions::fs's servers (server_settings_codec.hpp); empty: defaults
  SecurityCli security;
};

// --netns: this process joins the named network namespace (/run/netns/NAME)
// and keeps the host's mount namespace (a FUSE mount made here is the host's).
Status enter_netns(const std::string& name) {
  if (name.empty()) return ok_status();
  Status st = enter_network_namespace(name);
  if (!st.ok()) return error(st.code(), "--netns: " + st.message());
  return ok_status();
}

void add_security_options(CLI::App* command, SecurityCli& security) {
  command->add_option("--shared-secret-file", security.shared_secret_file,
                      "the cluster secret (first line; not readable by others) instead of a fresh one per run");
  command->add_flag("--insecure", security.insecure,
                    "no authentication of the nodes' connections (benchmarks; the results say so)");
  command->add_option("--meta-store", security.meta_store, "where metadata servers keep the namespace")
      ->check(CLI::IsMember({"rocksdb", "memory"}));
}

// The command line's word over the config's; invalid_argument when they contradict.
Status apply_security(const SecurityCli& security, ClusterConfig& config) {
  if (security.insecure && !security.shared_secret_file.empty()) {
    return error(StatusCode::invalid_argument, "--insecure and --shared-secret-file contradict each other");
  }
  if (!security.shared_secret_file.empty()) {
    config.shared_secret_file = security.shared_secret_file;
    config.insecure = false;
  }
  if (security.insecure) {
    config.insecure = true;
    config.shared_secret_file.clear();
  }
  if (!security.meta_store.empty()) config.meta_store = security.meta_store;
  return ok_status();
}

int g_signal_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int /*signo*/) {
  const char byte = 1;
  [[maybe_unused]] const auto n = ::write(g_signal_pipe[1], &byte, 1);
}

// SIGINT/SIGTERM/SIGHUP write to a pipe that the run polls: the run stops
// and removes what it made (no work in the handler itself).
int install_stop_signals() {
  if (g_signal_pipe[0] < 0 && ::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return g_signal_pipe[0];
}

// A size flag reads the tree's one size grammar (core/common/byte_size.hpp):
// "4MiB", "1 GiB", "4096"; "4MB" is refused with the spelling to use, a usage
// error naming the flag ("--chunk-size: ..."). (A function option, not a
// transforming CLI::Validator, whose move GCC 12 flags with -Wnull-dereference.)
void add_size_option(CLI::App* cmd, const std::string& flag, std::uint64_t& bytes, const std::string& help) {
  cmd->add_option_function<std::string>(
         flag,
         [flag, &bytes](const std::string& text) {
           const Result<std::uint64_t> parsed = parse_size(text);
           if (!parsed.ok()) throw CLI::ValidationError(flag, parsed.status().message());
           bytes = *parsed;
         },
         help)
      ->type_name("SIZE");
}

// The command line's security options applied to `config`, then checked, the
// secret file included (as `sluice run` checks it): before mount starts a
// namespace or a node, not in the nodes afterwards.
Status configure_cluster(const SecurityCli& security, ClusterConfig& config) {
  if (Status st = apply_security(security, config); !st.ok()) return st;
  if (!config.insecure && !config.shared_secret_file.empty()) {
    if (Result<std::string> secret = transport::read_shared_secret_file(config.shared_secret_file); !secret.ok()) {
      return secret.status();
    }
  }
  return validate(config);
}

Result<ClusterConfig> load_config(const std::string& path) {
  std::string text = read_text_file(path);
  if (text.empty()) return error(StatusCode::invalid_argument, path + ": cannot read or empty");
  Result<ClusterConfig> c = parse_cluster_config_text(text);
  if (!c.ok()) return error(c.status().code(), path + ": " + c.status().message());
  return c;
}

// --fs-settings: the servers' settings a rank wrote for its node process.
Result<NodeRunOptions::FsSettings> load_server_settings(const std::string& path) {
  const std::string text = read_text_file(path);
  if (text.empty()) return error(StatusCode::invalid_argument, "--fs-settings " + path + ": cannot read or empty");
  Result<nlohmann::json> document = base::parse_json_text(text);
  if (!document.ok())
    return error(StatusCode::invalid_argument, "--fs-settings " + path + ": " + document.status().message());
  Result<NodeRunOptions::FsSettings> fs = server_settings_from_json(*document);
  if (!fs.ok()) return error(fs.status().code(), "--fs-settings " + path + ": " + fs.status().message());
  return fs;
}

void print_summary(const nlohmann::json& run) {
  for (const auto& node : run["nodes"]) {
    std::string roles;
    for (const auto& r : node["roles"]) roles += (roles.empty() ? "" : "+") + r.get<std::string>();
    fmt::print("node {} ({}): {}\n", node.value("node", 0), roles, node.value("status", std::string("?")));
    const nlohmann::json counters = node.value("counters", nlohmann::json::object());
    const double lookups = counters.value("mount.lookups", 0.0);
    const double listed = counters.value("mount.listed_with_attrs", 0.0);
    if (lookups + listed > 0) {
      fmt::print("node {} mount: {:.0f} lookups; {:.0f} entries with their attributes from listings (readdirplus)\n",
                 node.value("node", 0), lookups, listed);
    }
  }
  for (const char* phase : {"write", "read"}) {
    const std::string line = phase_summary_line(run, phase);
    if (!line.empty()) fmt::print("{}\n", line);
  }
}

Status write_json(const std::string& path, const nlohmann::json& j) {
  if (path.empty()) return ok_status();
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) return error(StatusCode::io_error, "cannot write " + path);
  return ok_status();
}

// What dead runs left (dead_runs.hpp), each thing swept said as `command`'s.
void sweep_dead_runs_of(std::string_view command, const std::string& work_dir) {
  const std::string root =
      work_dir.empty() ? std::string() : std::filesystem::absolute(work_dir).parent_path().string();
  sweep_dead_runs({root},
                  [command](std::string_view line) { fmt::print(stderr, "sluice {}: dead run: {}\n", command, line); });
}

// `sluice emulate --cleanup-stale`: what killed runs left, removed; nothing else runs.
int run_cleanup_stale() {
  if (std::string why = netns_permitted(); !why.empty()) {
    fmt::print(stderr, "sluice emulate: {}\n", why);
    return k_exit_failed;
  }
  const std::vector<std::string> removed =
      sweep_dead_runs({}, [](std::string_view line) { fmt::print(stderr, "sluice emulate: {}\n", line); });
  fmt::print("removed {} stale namespaces, mounts and work directories\n", removed.size());
  return k_exit_ok;
}

// "auto": the first IPv4 address of this host's name.
std::string resolve_listen(const std::string& listen) {
  if (listen != "auto") return listen;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host, nullptr, &hints, &found) != 0 || found == nullptr) return "127.0.0.1";
  char text[INET_ADDRSTRLEN] = {};
  const auto* sin = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  ::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
  ::freeaddrinfo(found);
  return text;
}

// --mpi: the MPI bootstrap, and this rank's --listen address in the cluster
// config; k_exit_ok, or the exit code to stop with.
int start_mpi_bootstrap(const NodeCli& cli, ClusterConfig& config, std::unique_ptr<Bootstrap>& bootstrap) {
  Result<std::unique_ptr<MpiBootstrap>> mpi = MpiBootstrap::create(nullptr, nullptr);
  if (!mpi.ok()) {
    fmt::print(stderr, "sluice node: {}\n", mpi.status().message());
    return k_exit_failed;
  }
  bootstrap = std::move(mpi).value();
  if (!cli.listen.empty()) {
    std::sort(config.nodes.begin(), config.nodes.end(),
              [](const NodeSpec& a, const NodeSpec& b) { return a.id < b.id; });
    if (bootstrap->rank() < config.nodes.size()) config.nodes[bootstrap->rank()].address = resolve_listen(cli.listen);
  }
  return k_exit_ok;
}

// A fresh secret from rank 0 to every rank (Bootstrap::all_gather; the others send nothing).
Status share_run_secret(Bootstrap& bootstrap, ClusterConfig& config) {
  std::string mine;
  if (bootstrap.rank() == 0) {
    Result<std::string> made = transport::make_shared_secret();
    if (!made.ok()) return made.status();
    mine = std::move(made).value();
  }
  Result<std::vector<std::string>> all = bootstrap.all_gather(mine);
  if (!all.ok()) return error(all.status().code(), "sharing the run's secret: " + all.status().message());
  if (all->empty() || all->front().empty()) return error(StatusCode::internal, "rank 0 sent no secret");
  config.shared_secret = all->front();
  return ok_status();
}

// This node's chunk files go with the run (the run and storage roots too, once empty).
void remove_node_storage(ClusterConfig& config, std::uint32_t rank) {
  std::error_code ec;
  std::sort(config.nodes.begin(), config.nodes.end(), [](const NodeSpec& a, const NodeSpec& b) { return a.id < b.id; });
  if (rank < config.nodes.size()) {
    const std::string run_root = config.storage_root + "/" + config.run_id;
    std::filesystem::remove_all(run_root + "/node" + std::to_string(config.nodes[rank].id), ec);
    std::filesystem::remove(run_root, ec);  // only when empty: the other nodes' are theirs to remove
    std::filesystem::remove(config.storage_root, ec);
  }
}

// Prints or writes run_node's result: at the root of an MPI run, all nodes
// gathered, written under --out in the standard layout (gathered_results.hpp);
// the exit code.
int report_node_result(const NodeCli& cli, const ClusterConfig& config, const Result<nlohmann::json>& result,
                       std::uint32_t rank, double wall_s) {
  if (!result.ok()) {
    fmt::print(stderr, "sluice node: rank {}: {}\n", rank, result.status().to_string());
    return k_exit_failed;
  }
  if (result->contains("nodes")) {  // the root of an MPI run
    print_summary(*result);
    if (!cli.out.empty()) {
      GatheredRunInfo info;
      info.scenario = "mpi_" + std::string(config.workload.mounted() ? "mount" : "file_sweep");
      info.backend = scenario::Backend::hw;
      info.cluster_description = fmt::format("{} processes under mpirun", config.nodes.size());
      info.wall_s = wall_s;
      if (Status st = write_gathered_results(cli.out, *result, config, info); !st.ok()) {
        fmt::print(stderr, "sluice node: {}\n", st.message());
        return k_exit_failed;
      }
    }
  } else if (cli.mpi) {
    // Other ranks: their documents went to rank 0.
  } else if (Status st = write_json(cli.out, *result); !st.ok()) {
    fmt::print(stderr, "sluice node: {}\n", st.message());
  }
  std::fflush(stdout);
  return result->value("ok", false) ? k_exit_ok : k_exit_failed;
}

int run_node_command(const NodeCli& cli) {
  ::signal(SIGPIPE, SIG_IGN);
  if (Status st = enter_netns(cli.netns); !st.ok()) {
    fmt::print(stderr, "sluice node: {}\n", st.message());
    return k_exit_usage;
  }
  ClusterConfig config;
  if (!cli.config.empty()) {
    Result<ClusterConfig> c = load_config(cli.config);
    if (!c.ok()) {
      fmt::print(stderr, "sluice node: {}\n", c.status().message());
      return k_exit_usage;
    }
    config = std::move(c).value();
  }
  std::unique_ptr<Bootstrap> bootstrap;
  if (cli.mpi && cli.config.empty()) {
    fmt::print(stderr,
               "sluice node: --mpi needs --config CLUSTER.json (a study on real hosts: mpirun -np N sluice run "
               "STUDY.lua --backend cluster)\n");
    return k_exit_usage;
  }
  if (cli.mpi) {
    if (const int code = start_mpi_bootstrap(cli, config, bootstrap); code != k_exit_ok) return code;
  } else {
    if (cli.config.empty() || cli.rank < 0 || cli.bootstrap_fd < 0) {
      fmt::print(
          stderr,
          "sluice node: needs --mpi --config, or --config, --rank and --bootstrap-fd (as a deployment starts it)\n");
      return k_exit_usage;
    }
    // A mount keeps the other nodes at the "clients-done" barrier for as long as it lives.
    const std::uint32_t wait_s = (config.max_wait_s > 0 ? config.max_wait_s : k_default_max_wait_s) * 2 + 60 +
                                 (config.workload.mounted() ? config.workload.mount.max_mount_s : 0);
    bootstrap = std::make_unique<SocketBootstrap>(cli.bootstrap_fd, static_cast<std::uint32_t>(cli.rank),
                                                  static_cast<std::uint32_t>(config.nodes.size()),
                                                  std::chrono::seconds(wait_s));
  }
  if (Status st = configure_cluster(cli.security, config); !st.ok()) {
    fmt::print(stderr, "sluice node: {}\n", st.message());
    return k_exit_usage;
  }
  // Under mpirun with no secret given: rank 0 makes one for the run and hands
  // it to the others through MPI (as trusted as mpirun's own channel).
  if (cli.mpi && !config.insecure && config.shared_secret_file.empty()) {
    if (Status st = share_run_secret(*bootstrap, config); !st.ok()) {
      fmt::print(stderr, "sluice node: {}\n", st.message());
      return k_exit_failed;
    }
  }
  NodeRunOptions options;
  options.config = config;
  options.listen_rails = cli.listen_rails;
  if (!cli.fs_settings.empty()) {
    Result<NodeRunOptions::FsSettings> fs = load_server_settings(cli.fs_settings);
    if (!fs.ok()) {
      fmt::print(stderr, "sluice node: {}\n", fs.status().message());
      return k_exit_usage;
    }
    options.fs = std::move(fs).value();
  }
  const std::uint32_t rank = bootstrap->rank();
  options.log = [rank](std::string_view line) { fmt::print(stderr, "[rank {}] {}\n", rank, line); };
  const auto start = std::chrono::steady_clock::now();
  const Result<nlohmann::json> result = run_node(options, *bootstrap);
  remove_node_storage(config, rank);
  return report_node_result(cli, config, result, rank,
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// `sluice mount`: a deployment in network namespaces (emulate) whose client
// node serves a FUSE mount at the mount point until it is unmounted.
struct MountCli {
  std::string mount_point;
  std::uint32_t nodes = 3;
  std::string link = "10gbit";
  std::string subnet = "10.214.0.0/24";
  std::string config;
  std::string work_dir;
  bool keep = false;
  bool direct_io = false;
  bool sync_writes = false;
  bool mirror = false;
  std::uint32_t cache_ms = 1000;
  std::uint32_t threads = 16;
  std::uint64_t chunk_bytes = 0;
  std::int64_t stripe_count = -1;
  std::uint32_t max_wait_s = 0;
  SecurityCli security;
};

// A mount point as /proc/self/mountinfo names it: absolute, normalised, no trailing slash.
std::string normal_mount_point(const std::string& path) {
  std::string p = std::filesystem::absolute(path).lexically_normal().string();
  if (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// The first SIGINT/SIGTERM unmounts (the node then stops the deployment
// cleanly); a second one aborts the run (abort_fd). Also says when the mount
// is up. Ends when `done` is set.
void watch_mount(const std::string& mount_point, int signal_fd, int abort_fd, const std::atomic<bool>& done) {
  bool announced = false, unmounting = false;
  while (!done.load()) {
    pollfd p{signal_fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (!announced && sluice_mounted_at(mount_point)) {
      announced = true;
      fmt::print("sluice mount: {} is ready (stop with `sluice umount {}` or Ctrl-C)\n", mount_point, mount_point);
      std::fflush(stdout);
    }
    if (ready <= 0) continue;
    char byte = 0;
    if (::read(signal_fd, &byte, 1) != 1) continue;
    if (!unmounting) {
      unmounting = true;
      fmt::print(stderr, "sluice mount: unmounting {} (a second signal aborts)\n", mount_point);
      ::umount2(mount_point.c_str(), MNT_DETACH);
    } else {
      [[maybe_unused]] const auto n = ::write(abort_fd, &byte, 1);
    }
  }
}

Result<EmulateOptions> mount_options(const MountCli& cli) {
  Result<LinkSpec> link = parse_link_spec(cli.link);
  if (!link.ok()) return error(StatusCode::invalid_argument, "--link: " + link.status().message());
  EmulateOptions o;
  o.link = *link;
  o.subnet = cli.subnet;
  o.work_dir = cli.work_dir;
  o.keep_work_dir = cli.keep;
  o.log = [](std::string_view line) { fmt::print(stderr, "sluice mount: {}\n", line); };
  Result<ClusterConfig> c = cli.config.empty() ? default_cluster(cli.nodes) : load_config(cli.config);
  if (!c.ok()) return c.status();
  o.cluster = std::move(c).value();
  o.nodes = static_cast<std::uint32_t>(o.cluster.nodes.size());
  if (cli.config.empty()) o.cluster.max_wait_s = 120;
  ClusterMount& m = o.cluster.workload.mount;
  m.mount_point = normal_mount_point(cli.mount_point);
  m.direct_io = cli.direct_io;
  m.sync_writes = cli.sync_writes;
  m.entry_timeout_ms = m.attr_timeout_ms = cli.cache_ms;
  m.threads = cli.threads;
  if (cli.mirror) o.cluster.mirror.storage = true;
  if (cli.chunk_bytes > 0) o.cluster.workload.chunk_bytes = cli.chunk_bytes;
  if (cli.stripe_count >= 0) o.cluster.workload.stripe_count = static_cast<std::uint32_t>(cli.stripe_count);
  if (cli.max_wait_s > 0) o.cluster.max_wait_s = cli.max_wait_s;
  if (Status st = configure_cluster(cli.security, o.cluster); !st.ok()) return st;
  return o;
}

int run_mount(const MountCli& cli) {
  Result<EmulateOptions> o = mount_options(cli);
  if (!o.ok()) {
    fmt::print(stderr, "sluice mount: {}\n", o.status().message());
    return k_exit_usage;
  }
  const std::string& mount_point = o->cluster.workload.mount.mount_point;
  sweep_dead_runs_of("mount", cli.work_dir);
  // A sluice mount whose server is gone (its run killed) answers nothing but ENOTCONN: replaced.
  if (detach_dead_mount(mount_point))
    fmt::print(stderr, "sluice mount: detached the dead sluice mount at {}\n", mount_point);
  if (std::error_code ec; !std::filesystem::is_directory(mount_point, ec)) {
    fmt::print(stderr, "sluice mount: {} is not a directory (make it first)\n", mount_point);
    return k_exit_usage;
  }
  if (sluice_mounted_at(mount_point)) {
    fmt::print(stderr, "sluice mount: {} is already a sluice mount\n", mount_point);
    return k_exit_failed;
  }
  if (std::string why = netns_permitted(); !why.empty()) {
    fmt::print(stderr, "sluice mount: cannot start the deployment here: {}\n", why);
    return k_exit_failed;
  }
  const int signal_fd = install_stop_signals();
  int abort_pipe[2];
  if (signal_fd < 0 || ::pipe2(abort_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    fmt::print(stderr, "sluice mount: cannot make the signal pipes\n");
    return k_exit_failed;
  }
  fmt::print("sluice mount: {} nodes, link {}, mounting at {}\n", o->nodes, o->link.to_string(), mount_point);
  std::fflush(stdout);
  std::atomic<bool> done{false};
  std::thread watcher(watch_mount, mount_point, signal_fd, abort_pipe[1], std::cref(done));
  Result<nlohmann::json> run = run_emulation(*o, abort_pipe[0]);
  done.store(true);
  watcher.join();
  // A node that died leaves its mount dead ("transport endpoint is not connected"): detach it.
  if (sluice_mounted_at(mount_point)) ::umount2(mount_point.c_str(), MNT_DETACH);
  if (!run.ok()) {
    fmt::print(stderr, "sluice mount: {}\n", run.status().to_string());
    return k_exit_failed;
  }
  print_summary(*run);
  if (!run->value("ok", false)) {
    fmt::print(stderr, "sluice mount: the deployment failed (node logs kept in {})\n",
               run->value("work_dir", std::string()));
    return k_exit_failed;
  }
  fmt::print("sluice mount: {} unmounted; the deployment stopped cleanly\n", mount_point);
  return k_exit_ok;
}

int run_umount(const std::string& mount_point, bool lazy) {
  const std::string point = normal_mount_point(mount_point);
  if (!sluice_mounted_at(point)) {
    fmt::print(stderr, "sluice umount: {} is not a sluice mount\n", point);
    return k_exit_usage;
  }
  if (::umount2(point.c_str(), lazy ? MNT_DETACH : 0) != 0) {
    const int err = errno;
    fmt::print(stderr, "sluice umount: {}: {}{}\n", point, std::strerror(err),
               err == EBUSY ? " (files are open there; --lazy detaches it now and it goes when they close)" : "");
    return k_exit_failed;
  }
  sweep_dead_runs_of("umount", "");  // the dead run whose mount this was
  return k_exit_ok;
}

}  // namespace

int install_emulate_stop_signals() { return install_stop_signals(); }

void add_mount_commands(CLI::App& app, cli::CommandExit& exit) {
  auto cli = std::make_shared<MountCli>();
  CLI::App* mount = app.add_subcommand(
      "mount", "a deployment in network namespaces mounted here with FUSE until `sluice umount` (needs root)");
  mount->add_option("mountpoint", cli->mount_point, "an existing directory")->required();
  mount->add_option("--nodes", cli->nodes, "nodes (node 0: mgmt+meta+client, the mount; others storage)");
  mount->add_option("--link", cli->link, "link rate[,one-way latency] between the nodes");
  mount->add_option("--subnet", cli->subnet, "private /24 for the node addresses");
  mount->add_option("--config", cli->config, "cluster JSON (roles); its workload becomes the mount");
  mount->add_option("--work-dir", cli->work_dir, "logs and storage (default /tmp/<run prefix>)");
  mount->add_flag("--keep", cli->keep, "keep the work dir (logs, chunk files) after a clean unmount");
  mount->add_flag("--direct-io", cli->direct_io, "no page cache: every read and write reaches the cluster");
  mount->add_flag("--sync-writes", cli->sync_writes, "every write durable on its storage server before it returns");
  mount->add_flag("--mirror", cli->mirror, "storage buddy mirroring: targets paired across nodes, failover by mgmt");
  mount->add_option("--cache-ms", cli->cache_ms, "kernel entry and attribute cache timeout in ms (0: none)");
  mount->add_option("--threads", cli->threads, "FUSE worker threads");
  add_size_option(mount, "--chunk-size", cli->chunk_bytes, "stripe chunk bytes of new files");
  mount->add_option("--stripe-count", cli->stripe_count, "targets per new file (0: all)");
  mount->add_option("--max-wait", cli->max_wait_s, "bound in seconds on every start-up wait");
  add_security_options(mount, cli->security);
  cli::on_parsed(mount, exit, [cli] { return run_mount(*cli); });
  auto umount_point = std::make_shared<std::string>();
  auto lazy = std::make_shared<bool>(false);
  CLI::App* umount = app.add_subcommand("umount", "unmount a `sluice mount` (its deployment then stops)");
  umount->add_option("mountpoint", *umount_point, "the mount point")->required();
  umount->add_flag("--lazy", *lazy, "detach now even if files are open there");
  cli::on_parsed(umount, exit, [umount_point, lazy] { return run_umount(*umount_point, *lazy); });
}

void add_emulate_commands(CLI::App& app, cli::CommandExit& exit) {
  // Hidden: `sluice run STUDY --backend emulate` runs studies on netns hosts;
  // this command only removes what killed runs left (which every such run
  // also does first), for tests and scripts that clean up after themselves.
  CLI::App* emulate = app.add_subcommand(
      "emulate", "remove what killed runs left (namespaces, processes, mounts, work directories), then exit");
  emulate->group("");
  auto cleanup_stale = std::make_shared<bool>(false);
  emulate->add_flag("--cleanup-stale", *cleanup_stale, "what the command does (its only form)")->required();
  cli::on_parsed(emulate, exit, [cleanup_stale] { return *cleanup_stale ? run_cleanup_stale() : k_exit_usage; });

  auto node_cli = std::make_shared<NodeCli>();
  add_mount_commands(app, exit);
  CLI::App* node = app.add_subcommand("node", "one node process of a multi-process deployment");
  node->group("");  // hidden: started by a deployment (sluice run, mount) or mpirun
  node->add_option("--config", node_cli->config, "cluster JSON");
  node->add_option("--rank", node_cli->rank, "this process's rank (node index by id)");
  node->add_option("--bootstrap-fd", node_cli->bootstrap_fd, "socket to the emulate launcher");
  node->add_option("--listen-rails", node_cli->listen_rails,
                   "listen on these a.b.c.d:port, one per rail (a node process started again after a crash)");
  node->add_option("--fs-settings", node_cli->fs_settings,
                   "the servers' settings (JSON, as a `--backend cluster` rank writes them for its node process)");
  node->add_flag("--mpi", node_cli->mpi, "bootstrap through MPI (under mpirun/srun)");
  node->add_option("--listen", node_cli->listen, "with --mpi: this rank's IPv4 address, or auto (host name)");
  node->add_option("--out", node_cli->out,
                   "with --mpi: results folder (docs/results.md); else this node's document (JSON)");
  node->add_option("--netns", node_cli->netns,
                   "join this network namespace first (the mounting node of `sluice mount`)");
  add_security_options(node, node_cli->security);
  cli::on_parsed(node, exit, [node_cli] { return run_node_command(*node_cli); });
}

}  // namespace sluice::emulate
