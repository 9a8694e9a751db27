#include "scenarios/netns/dead_runs.hpp"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/run_marker.hpp"
#include "scenarios/deploy/deploy.hpp"
#include "scenarios/netns/emulation_plan.hpp"
#include "scenarios/netns/netns_cluster.hpp"
#include "scenarios/runner/hw_point_run.hpp"

namespace sluice::emulate {
namespace {

constexpr std::string_view k_mount_type = "fuse.sluice";
constexpr std::string_view k_mount_source_prefix = "sluice-";  // then the run id, "<pid>-<tag>" for ours
// Where the default work directories of emulate runs and of hardware runs
// (HwRunOptions::temp_root) are made: always swept.
constexpr const char* k_default_runs_root = "/tmp";

bool is_octal(char c) { return c >= '0' && c <= '7'; }

// A mount table field with its octal escapes ("\040" for a space) decoded.
std::string unescape_mount_field(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 4 <= field.size() && is_octal(field[i + 1]) && is_octal(field[i + 2]) &&
        is_octal(field[i + 3])) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// Whether the launcher of run `prefix` (sluice-emu-<pid>-<tag>) still runs:
// judged by the owner mark its NetnsCluster made (pid and start time), or by
// the pid in the name alone for namespaces without one.
bool launcher_runs(const std::string& prefix) {
  const std::string owner = netns_owner_dir(prefix);
  std::error_code ec;
  if (std::filesystem::exists(owner + "/" + std::string(base::k_run_marker_file), ec)) {
    return !base::run_dir_is_stale(owner);
  }
  return base::process_runs(launcher_pid_of(prefix));
}

void say(const std::function<void(std::string_view)>& log, const std::string& line) {
  if (log) log(line);
}

// The sluice mounts of runs whose launcher is gone, detached.
void sweep_dead_mounts(const std::vector<std::string>& namespaces, const std::function<void(std::string_view)>& log,
                       std::vector<std::string>& removed) {
  for (const SluiceMount& m : sluice_mounts()) {
    if (m.source.rfind(k_mount_source_prefix, 0) != 0) continue;
    // Judged by its run's namespaces: a mount of a run without them (under
    // mpirun, or a run id of the user's) is not ours to judge.
    const std::string prefix = std::string(k_netns_prefix) + m.source.substr(k_mount_source_prefix.size());
    const bool has_namespaces = std::any_of(namespaces.begin(), namespaces.end(),
                                            [&](const std::string& n) { return run_prefix_of(n) == prefix; });
    if (!has_namespaces || launcher_runs(prefix)) continue;
    if (::umount2(m.point.c_str(), MNT_DETACH) != 0) {
      say(log, "could not unmount " + m.point + " (its run " + prefix + " is gone): " + std::strerror(errno));
      continue;
    }
    say(log, "unmounted " + m.point + " (its run " + prefix + " is gone)");
    removed.push_back(m.point);
  }
}

// The namespaces of runs whose launcher is gone, with what still runs in them.
void sweep_dead_namespaces(const std::vector<std::string>& namespaces, const std::function<void(std::string_view)>& log,
                           std::vector<std::string>& removed) {
  const auto runs = [](const std::string& netns, int) { return launcher_runs(run_prefix_of(netns)); };
  for (const std::string& n : stale_namespaces(namespaces, runs)) {
    kill_namespace_processes(n);
    const Status st = run_checked({"ip", "netns", "delete", n}, k_ip_command_timeout_ms);
    std::error_code ec;
    if (!st.ok() && !std::filesystem::exists(netns_file(n), ec)) continue;  // another sweep took it first
    say(log, st.ok() ? "removed namespace " + n : "could not remove namespace " + n + ": " + st.message());
    if (st.ok()) removed.push_back(n);
  }
}

}  // namespace

std::vector<SluiceMount> sluice_mounts() {
  std::vector<SluiceMount> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // "<id> <parent> <dev> <root> <point> <options> [optional fields...] - <type> <source> <super options>"
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream head(line.substr(0, dash));
    std::istringstream tail(line.substr(dash + 3));
    std::string id, parent, dev, root, point, type, source;
    if (!(head >> id >> parent >> dev >> root >> point) || !(tail >> type >> source)) continue;
    if (type == k_mount_type) out.push_back({unescape_mount_field(point), unescape_mount_field(source)});
  }
  return out;
}

bool sluice_mounted_at(const std::string& point) {
  const std::vector<SluiceMount> mounts = sluice_mounts();
  return std::any_of(mounts.begin(), mounts.end(), [&](const SluiceMount& m) { return m.point == point; });
}

bool detach_dead_mount(const std::string& point) {
  struct stat where {};
  if (::stat(point.c_str(), &where) == 0 || errno != ENOTCONN || !sluice_mounted_at(point)) return false;
  return ::umount2(point.c_str(), MNT_DETACH) == 0;
}

std::vector<std::string> sweep_dead_runs(const std::vector<std::string>& roots,
                                         const std::function<void(std::string_view)>& log) {
  std::vector<std::string> removed;
  if (::geteuid() == 0) {
    // Without `ip` (a machine that never ran an emulation) there is no namespace to sweep.
    Result<std::vector<std::string>> namespaces = our_namespaces();
    const std::vector<std::string> names = namespaces.ok() ? *namespaces : std::vector<std::string>{};
    sweep_dead_mounts(names, log, removed);
    sweep_dead_namespaces(names, log, removed);
    base::remove_stale_run_dirs(std::string(k_netns_owner_root), k_netns_prefix, nullptr);  // their owner marks
  }
  std::vector<std::string> dirs = {k_default_runs_root};
  for (const std::string& r : roots) {
    if (!r.empty() && std::find(dirs.begin(), dirs.end(), r) == dirs.end()) dirs.push_back(r);
  }
  for (const std::string& root : dirs) {
    for (std::string_view prefix : {k_netns_prefix, scenario::k_hw_run_dir_prefix, k_rank_dir_prefix}) {
      for (std::string& dir : base::remove_stale_run_dirs(root, prefix, log)) removed.push_back(std::move(dir));
    }
  }
  return removed;
}

}  // namespace sluice::emulate
