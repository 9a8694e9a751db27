#include "base/run_marker.hpp"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace sluice::base {
namespace {

// The start time of `pid` in clock ticks since boot (/proc/<pid>/stat field
// 22); 0 when the process does not exist, has exited (a zombie not yet
// reaped: state Z or X, field 3) or the file cannot be read.
std::uint64_t start_ticks(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  // Field 2 (comm) is in parentheses and may hold spaces: count from the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return 0;
    if (i == 3 && (field == "Z" || field == "X")) return 0;
  }
  try {
    return std::stoull(field);
  } catch (const std::exception&) {
    return 0;
  }
}

// The owner line of a marker: "<pid> <start ticks>", and " kept" when kept.
Status write_marker(const std::string& dir, std::string_view suffix) {
  const std::string path = dir + "/" + std::string(k_run_marker_file);
  std::ofstream out(path);
  out << ::getpid() << " " << start_ticks(::getpid()) << suffix << "\n";
  if (!out) return error(StatusCode::io_error, "cannot write " + path);
  return ok_status();
}

}  // namespace

Status write_run_marker(const std::string& dir) { return write_marker(dir, ""); }

Status mark_run_kept(const std::string& dir) { return write_marker(dir, " kept"); }

bool run_dir_is_stale(const std::string& dir) {
  std::ifstream in(dir + "/" + std::string(k_run_marker_file));
  long pid = 0;
  std::uint64_t started = 0;
  if (!(in >> pid >> started) || pid <= 0) return false;
  if (std::string word; in >> word && word == "kept") return false;
  const std::uint64_t now = start_ticks(pid);
  return now == 0 || now != started;
}

bool process_runs(long pid) { return pid > 0 && start_ticks(pid) != 0; }

void RunDir::finish() {
  if (path_.empty()) return;
  std::error_code ec;
  if (keep_) {
    mark_run_kept(path_).ignore();  // without it the directory is swept once this process is gone
  } else {
    std::filesystem::remove_all(path_, ec);
  }
  path_.clear();
}

std::vector<std::string> remove_stale_run_dirs(const std::string& root, std::string_view name_prefix,
                                               const std::function<void(std::string_view)>& log) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, name_prefix.size(), name_prefix) != 0) continue;
    std::error_code type_ec;
    if (!entry.is_directory(type_ec) || entry.is_symlink(type_ec)) continue;
    const std::string path = entry.path().string();
    if (!run_dir_is_stale(path)) continue;
    std::error_code rm_ec;
    std::filesystem::remove_all(path, rm_ec);
    // Gone already: another process of this host swept it first (the ranks
    // of one launcher on one host sweep the same root at once).
    if (rm_ec == std::errc::no_such_file_or_directory) continue;
    if (log) log(rm_ec ? "could not remove " + path + ": " + rm_ec.message() : "removed " + path);
    if (!rm_ec) removed.push_back(path);
  }
  return removed;
}

}  // namespace sluice::base
