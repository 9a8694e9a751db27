#include "scenarios/netns/netns_cluster.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "base/fd_io.hpp"
#include "base/run_marker.hpp"
#include "scenarios/deploy/deploy.hpp"

namespace sluice::emulate {

std::string netns_file(const std::string& name) { return "/run/netns/" + name; }

std::string netns_owner_dir(const std::string& prefix) { return std::string(k_netns_owner_root) + "/" + prefix; }

Status enter_network_namespace(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) {
    return error(StatusCode::invalid_argument, "a namespace name, not a path or empty: \"" + name + "\"");
  }
  const std::string path = netns_file(name);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error(StatusCode::not_found, "cannot open " + path + ": " + std::strerror(errno));
  const int rc = ::setns(fd, CLONE_NEWNET);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return error(StatusCode::unavailable, "setns into " + path + ": " + std::strerror(err));
  return ok_status();
}

std::vector<int> namespace_pids(const std::string& netns) {
  std::vector<int> out;
  Result<CommandOutput> pids = run_command({"ip", "netns", "pids", netns}, k_ip_command_timeout_ms);
  if (!pids.ok() || pids->exit_code != 0) return out;
  std::istringstream in(pids->output);
  int pid = 0;
  while (in >> pid) {
    if (pid > 1 && pid != ::getpid()) out.push_back(pid);
  }
  return out;
}

void kill_namespace_processes(const std::string& netns) {
  for (int pid : namespace_pids(netns)) ::kill(pid, SIGKILL);
}

Result<std::vector<std::string>> our_namespaces() {
  Result<CommandOutput> r = run_command({"ip", "netns", "list"}, k_ip_command_timeout_ms);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return error(StatusCode::unavailable, "ip netns list: " + r->output);
  std::vector<std::string> ours;
  for (std::string& n : parse_netns_list(r->output)) {
    if (n.rfind(std::string(k_netns_prefix), 0) == 0) ours.push_back(std::move(n));
  }
  return ours;
}

Result<std::unique_ptr<NetnsCluster>> NetnsCluster::create(const EmulationPlan& plan, int stop_fd) {
  std::unique_ptr<NetnsCluster> cluster(new NetnsCluster(plan));
  // From here on a failure returns through the destructor, which removes
  // whatever was made. First the owner mark of the namespaces, so that a sweep
  // tells them from those of a dead run even once this pid is reused.
  const std::string owner = netns_owner_dir(plan.prefix);
  std::error_code made;
  std::filesystem::create_directories(owner, made);
  if (made) return error(StatusCode::io_error, "emulate set-up: cannot make " + owner + ": " + made.message());
  if (Status st = base::write_run_marker(owner); !st.ok()) return error(st.code(), "emulate set-up: " + st.message());
  for (const CommandLine& c : setup_commands(plan)) {
    if (readable_now(stop_fd)) return error(StatusCode::unavailable, "emulate: interrupted during set-up");
    if (Status st = run_checked(c, k_ip_command_timeout_ms); !st.ok()) {
      const bool netem = std::find(c.begin(), c.end(), "netem") != c.end();
      if (netem && st.message().find("unknown") != std::string::npos) {
        return error(StatusCode::unavailable,
                     "emulate set-up: this kernel has no netem qdisc (sch_netem), so a link "
                     "latency cannot be emulated here; give --link without a latency (" +
                         st.message() + ")");
      }
      return error(st.code(), "emulate set-up: " + st.message());
    }
  }
  return cluster;
}

NetnsCluster::~NetnsCluster() { static_cast<void>(remove()); }

Status NetnsCluster::set_link_rate(std::uint64_t rate_bits_per_s) {
  LinkSpec rate_only = plan_.link;
  rate_only.rate_bits_per_s = rate_bits_per_s;
  rate_only.latency_ns = 0;  // only the root tbf is replaced; a netem child stays as made
  for (const EmulatedNode& n : plan_.nodes) {
    for (const auto& [netns, device] :
         {std::pair{n.netns, std::string("eth0")}, std::pair{plan_.bridge_netns, n.bridge_port}}) {
      for (const CommandLine& c : shaping_commands(netns, device, rate_only)) {
        if (Status st = run_checked(c, k_ip_command_timeout_ms); !st.ok()) {
          return error(st.code(), "emulate: changing the link rate: " + st.message());
        }
      }
    }
  }
  plan_.link.rate_bits_per_s = rate_bits_per_s;
  return ok_status();
}

std::string NetnsCluster::netns_path(std::size_t node) const {
  return node < plan_.nodes.size() ? netns_file(plan_.nodes[node].netns) : std::string();
}

std::vector<std::string> NetnsCluster::remove() {
  if (removed_) return {};
  removed_ = true;
  for (const EmulatedNode& n : plan_.nodes) kill_namespace_processes(n.netns);
  kill_namespace_processes(plan_.bridge_netns);
  for (const CommandLine& c : cleanup_commands(plan_)) {
    run_command(c, k_ip_command_timeout_ms).status().ignore();  // a piece never made is fine
  }
  std::vector<std::string> left;
  Result<std::vector<std::string>> names = our_namespaces();
  if (names.ok()) {
    for (const std::string& n : *names) {
      if (n.rfind(plan_.prefix + "-", 0) == 0) left.push_back(n);
    }
  }
  std::error_code ec;
  if (left.empty()) std::filesystem::remove_all(netns_owner_dir(plan_.prefix), ec);  // else a sweep's to judge
  return left;
}

}  // namespace sluice::emulate
