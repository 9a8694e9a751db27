#include "scenarios/cli/netns_hosts.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "base/run_marker.hpp"
#include "scenarios/netns/cluster_emulator.hpp"
#include "scenarios/deploy/deploy.hpp"
#include "scenarios/netns/dead_runs.hpp"
#include "scenarios/cli/emulate_command.hpp"
#include "scenarios/netns/emulation_plan.hpp"
#include "scenarios/netns/netns_cluster.hpp"

namespace sluice::emulate {
namespace {

constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;
constexpr int k_poll_interval_ms = 200;

struct NetnsHostsCli {
  std::uint32_t nodes = 4;
  std::string link = "10gbit";
  std::string subnet = "10.215.0.0/24";
  std::uint32_t mtu_bytes = 1500;
  std::vector<std::string> command;
};

// Becomes host `name`: enters its network namespace (/run/netns/NAME) and a
// UTS namespace of its own whose host name is NAME, so that every host has
// its own name as on a cluster (Open MPI keys its session directories and
// node map by it). The reason otherwise.
std::string become_host(const std::string& name) {
  if (Status st = enter_network_namespace(name); !st.ok()) return st.message();
  if (::unshare(CLONE_NEWUTS) != 0) return std::string("unshare(CLONE_NEWUTS): ") + std::strerror(errno);
  if (::sethostname(name.data(), name.size()) != 0) return "sethostname " + name + ": " + std::strerror(errno);
  return {};
}

// The command's words with the placeholders replaced.
std::vector<std::string> expand(const std::vector<std::string>& words, const std::string& hostfile,
                                const std::string& hosts, const std::string& agent) {
  std::vector<std::string> out;
  for (std::string w : words) {
    for (const auto& [key, value] :
         {std::pair<std::string, std::string>{"{hostfile}", hostfile}, {"{hosts}", hosts}, {"{agent}", agent}}) {
      for (std::size_t at = w.find(key); at != std::string::npos; at = w.find(key, at + value.size())) {
        w.replace(at, key.size(), value);
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

// The command in its own process group inside `netns`; its pid, or -1.
// Open MPI's session directories go under `dir` (unless the caller chose a
// place), so that processes killed at the end leave none in /tmp.
pid_t start_command(const std::vector<std::string>& words, const std::string& netns, const std::string& dir) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  ::setenv("OMPI_MCA_orte_tmpdir_base", dir.c_str(), 0);
  if (const std::string why = become_host(netns); !why.empty()) {
    fmt::print(stderr, "sluice netns-hosts: {}\n", why);
    ::_exit(127);
  }
  std::vector<char*> argv;
  for (const std::string& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  fmt::print(stderr, "sluice netns-hosts: cannot run {}: {}\n", words.front(), std::strerror(errno));
  ::_exit(127);
}

// Waits for the command; a stop signal is passed on to its process group,
// then SIGKILL after the grace time. Its exit status as a shell gives it.
int wait_command(pid_t pid, int stop_fd) {
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0 && errno != EINTR) return k_exit_failed;
    pollfd p{stop_fd, POLLIN, 0};
    if (stop_fd >= 0 && ::poll(&p, 1, k_poll_interval_ms) > 0 && !kill_at) {
      char byte = 0;
      [[maybe_unused]] const auto n = ::read(stop_fd, &byte, 1);
      ::kill(-pid, SIGTERM);
      kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(k_netns_hosts_grace_s);
    } else if (stop_fd < 0) {
      ::poll(nullptr, 0, k_poll_interval_ms);
    }
    if (kill_at && std::chrono::steady_clock::now() >= *kill_at) ::kill(-pid, SIGKILL);
  }
}

// What still runs in the hosts once the command ended (ranks writing their
// results, removing their directories): SIGTERM, then SIGKILL for what is
// left after the grace time.
void end_host_processes(const EmulationPlan& plan) {
  const auto kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(k_netns_hosts_grace_s);
  for (bool first = true;; first = false) {
    std::vector<int> left;
    for (const EmulatedNode& n : plan.nodes) {
      for (int pid : namespace_pids(n.netns)) left.push_back(pid);
    }
    if (left.empty()) return;
    const bool late = std::chrono::steady_clock::now() >= kill_at;
    if (first || late) {
      for (int pid : left) ::kill(pid, late ? SIGKILL : SIGTERM);
    }
    if (late) return;
    ::poll(nullptr, 0, k_poll_interval_ms);
  }
}

int run_netns_hosts(const NetnsHostsCli& cli) {
  if (std::string why = netns_permitted(); !why.empty()) {
    fmt::print(stderr, "sluice netns-hosts: cannot make namespaces here: {}\n", why);
    return k_exit_failed;
  }
  Result<LinkSpec> link = parse_link_spec(cli.link);
  if (!link.ok()) {
    fmt::print(stderr, "sluice netns-hosts: --link: {}\n", link.status().message());
    return k_exit_usage;
  }
  PlanOptions po;
  po.nodes = cli.nodes;
  po.link = *link;
  po.subnet = cli.subnet;
  po.mtu_bytes = cli.mtu_bytes;
  po.launcher_pid = ::getpid();
  po.tag = "hosts";
  Result<EmulationPlan> plan = plan_emulation(po);
  if (!plan.ok()) {
    fmt::print(stderr, "sluice netns-hosts: {}\n", plan.status().message());
    return k_exit_usage;
  }
  const int stop_fd = install_emulate_stop_signals();
  sweep_dead_runs({}, [](std::string_view line) { fmt::print(stderr, "sluice netns-hosts: dead run: {}\n", line); });
  Result<std::unique_ptr<NetnsCluster>> made = NetnsCluster::create(*plan, stop_fd);
  if (!made.ok()) {
    fmt::print(stderr, "sluice netns-hosts: {}\n", made.status().message());
    return k_exit_failed;
  }
  // The hostfile's directory, marked as this process's: the next command
  // sweeps it with the namespaces if this process is killed (dead_runs.hpp).
  const std::string dir = "/tmp/" + plan->prefix;
  std::error_code made_dir;
  std::filesystem::create_directories(dir, made_dir);
  if (made_dir || !base::write_run_marker(dir).ok()) {
    fmt::print(stderr, "sluice netns-hosts: cannot make {}\n", dir);
    return k_exit_failed;
  }
  const std::string hostfile = dir + "/hostfile";
  std::string hosts;
  {
    std::ofstream out(hostfile);
    for (const EmulatedNode& n : plan->nodes) {
      out << n.netns << " slots=1\n";
      hosts += (hosts.empty() ? "" : ",") + n.netns;
    }
  }
  for (const EmulatedNode& n : plan->nodes) fmt::print(stderr, "sluice netns-hosts: {} {}\n", n.netns, n.address);
  const std::vector<std::string> words =
      expand(cli.command, hostfile, hosts, this_program("sluice").string() + " netns-exec");
  const pid_t pid = start_command(words, plan->nodes.front().netns, dir);
  const int code = pid < 0 ? k_exit_failed : wait_command(pid, stop_fd);
  end_host_processes(*plan);
  const std::vector<std::string> left = (*made)->remove();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!left.empty()) fmt::print(stderr, "sluice netns-hosts: namespaces left behind: {}\n", fmt::join(left, " "));
  return code;
}

}  // namespace

int netns_exec(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "sluice netns-exec: usage: sluice netns-exec HOST WORD... (a launch agent, as ssh)\n");
    return k_exit_usage;
  }
  if (const std::string why = become_host(argv[0]); !why.empty()) {
    fmt::print(stderr, "sluice netns-exec: {}\n", why);
    return k_exit_failed;
  }
  std::string line;
  for (int i = 1; i < argc; ++i) line += (i > 1 ? " " : "") + std::string(argv[i]);
  ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
  fmt::print(stderr, "sluice netns-exec: /bin/sh: {}\n", std::strerror(errno));
  return k_exit_failed;
}

void add_netns_hosts_command(CLI::App& app, cli::CommandExit& exit) {
  auto cli = std::make_shared<NetnsHostsCli>();
  CLI::App* cmd =
      app.add_subcommand("netns-hosts",
                         "network namespaces as hosts for a launcher: runs `-- COMMAND` with {hostfile}, {hosts} and "
                         "{agent} (needs root)");
  cmd->add_option("--nodes", cli->nodes, "hosts (namespaces)")->capture_default_str()->check(CLI::Range(1u, 64u));
  cmd->add_option("--link", cli->link, "link rate[,one-way latency] of each host")->capture_default_str();
  cmd->add_option("--subnet", cli->subnet, "private /24 for the hosts' addresses")->capture_default_str();
  cmd->add_option("--mtu", cli->mtu_bytes, "MTU of the links")->capture_default_str();
  cmd->add_option("command", cli->command, "the command (after --)")->required();
  cli::on_parsed(cmd, exit, [cli] { return run_netns_hosts(*cli); });
}

}  // namespace sluice::emulate
