#include "scenarios/mount/inode_table.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace sluice::mount {

std::string child_path(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

InodeTable::InodeTable() {
  nodes_[k_root_ino] = Node{{"/"}, 1};
  by_path_["/"] = k_root_ino;
}

Result<Ino> InodeTable::remember(const std::string& path) {
  std::lock_guard lock(mu_);
  if (auto it = by_path_.find(path); it != by_path_.end()) {
    ++nodes_[it->second].lookups;
    return it->second;
  }
  if (nodes_.size() >= k_max_mount_inodes) {
    return error(StatusCode::unavailable,
                 "the mount holds " + std::to_string(nodes_.size()) + " inodes, its limit (k_max_mount_inodes)");
  }
  const Ino ino = next_ino_++;
  nodes_[ino] = Node{{path}, 1};
  by_path_[path] = ino;
  return ino;
}

std::optional<std::string> InodeTable::path_of(Ino ino) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || it->second.paths.empty()) return std::nullopt;
  return it->second.paths.front();
}

Result<Ino> InodeTable::link(Ino ino, const std::string& path) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return error(StatusCode::not_found, "inode " + std::to_string(ino) + " is not in the table");
  unbind_locked(path);  // a stale binding of the new name
  it->second.paths.push_back(path);
  ++it->second.lookups;
  by_path_[path] = ino;
  return ino;
}

void InodeTable::forget(Ino ino, std::uint64_t n) {
  std::lock_guard lock(mu_);
  if (ino == k_root_ino) return;
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return;
  it->second.lookups -= std::min(n, it->second.lookups);
  if (it->second.lookups > 0) return;
  for (const std::string& path : it->second.paths) by_path_.erase(path);
  nodes_.erase(it);
}

void InodeTable::unbind_locked(const std::string& path) {
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return;
  std::vector<std::string>& paths = nodes_[it->second].paths;
  paths.erase(std::remove(paths.begin(), paths.end(), path), paths.end());
  by_path_.erase(it);
}

void InodeTable::unbind(const std::string& path) {
  std::lock_guard lock(mu_);
  unbind_locked(path);
}

void InodeTable::rename(const std::string& from, const std::string& to) {
  std::lock_guard lock(mu_);
  unbind_locked(to);
  // The inode at `from` and those below it (a directory's children keep their names under the new path).
  std::vector<std::pair<std::string, Ino>> moved;
  const std::string below = from + "/";
  if (auto it = by_path_.find(from); it != by_path_.end()) moved.emplace_back(it->first, it->second);
  for (auto it = by_path_.lower_bound(below); it != by_path_.end() && it->first.starts_with(below); ++it) {
    moved.emplace_back(it->first, it->second);
  }
  for (const auto& [old_path, ino] : moved) {
    by_path_.erase(old_path);
    const std::string new_path = to + old_path.substr(from.size());
    std::replace(nodes_[ino].paths.begin(), nodes_[ino].paths.end(), old_path, new_path);
    by_path_[new_path] = ino;
  }
}

std::size_t InodeTable::size() const {
  std::lock_guard lock(mu_);
  return nodes_.size();
}

bool InodeTable::opened(Ino ino, const proto::InodeDesc& inode, std::uint64_t open_id) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = open_.try_emplace(ino);
  if (fresh) {
    it->second.inode = inode;
    it->second.size = inode.size_bytes;
  } else {
    it->second.inode.stripe = inode.stripe;  // a dirty size of ours stays
  }
  ++it->second.opens;
  if (it->second.open_id != 0) return false;
  it->second.open_id = open_id;
  return true;
}

std::uint64_t InodeTable::take_open_if_last(Ino ino) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it == open_.end() || it->second.opens != 1) return 0;
  return std::exchange(it->second.open_id, 0);
}

void InodeTable::wrote(Ino ino, std::uint64_t offset, std::uint64_t bytes, std::int64_t now_ns) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it == open_.end()) return;
  it->second.size = std::max(it->second.size, offset + bytes);
  it->second.dirty = true;
  it->second.last_write_ns = now_ns;
  it->second.mtime_set = false;
}

void InodeTable::mtime_set(Ino ino) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it != open_.end()) it->second.mtime_set = true;
}

void InodeTable::was_read(Ino ino) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it != open_.end()) it->second.read = true;
}

void InodeTable::resized(Ino ino, std::uint64_t size) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it == open_.end()) return;
  it->second.size = size;
}

std::uint64_t InodeTable::replaced(Ino ino, const proto::InodeDesc& inode, std::uint64_t open_id) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it == open_.end()) return open_id;  // closed meanwhile: the new open goes too
  it->second.inode = inode;
  it->second.size = inode.size_bytes;
  it->second.dirty = false;
  return std::exchange(it->second.open_id, open_id);
}

std::optional<OpenFile> InodeTable::open_file(Ino ino) const {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it == open_.end()) return std::nullopt;
  return it->second;
}

void InodeTable::recorded(Ino ino, std::uint64_t size) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it != open_.end() && it->second.size == size) it->second.dirty = false;
}

std::optional<OpenFile> InodeTable::released(Ino ino) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ino);
  if (it == open_.end() || --it->second.opens > 0) return std::nullopt;
  OpenFile last = std::move(it->second);
  open_.erase(it);
  return last;
}

std::optional<proto::InodeDesc> InodeTable::open_inode_at(const std::string& path) const {
  std::lock_guard lock(mu_);
  auto bound = by_path_.find(path);
  if (bound == by_path_.end()) return std::nullopt;
  auto it = open_.find(bound->second);
  if (it == open_.end()) return std::nullopt;
  return it->second.inode;
}

bool InodeTable::orphan_at(const std::string& path) {
  std::lock_guard lock(mu_);
  auto bound = by_path_.find(path);
  if (bound == by_path_.end()) return false;
  auto it = open_.find(bound->second);
  if (it == open_.end()) return false;
  it->second.orphaned = true;
  return true;
}

}  // namespace sluice::mount
