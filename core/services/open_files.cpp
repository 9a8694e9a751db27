#include "core/services/open_files.hpp"

#include <string>

#include "core/common/assert.hpp"

namespace sluice {

Status OpenFiles::room_for(Endpoint client, std::uint64_t open_id) const {
  if (by_open_.size() < k_max_held_opens || by_open_.contains(std::make_pair(client, open_id))) return ok_status();
  return error(StatusCode::again, "metadata server holds " + std::to_string(by_open_.size()) +
                                      " opens (k_max_held_opens): close files and retry");
}

Status OpenFiles::open(Endpoint client, std::uint64_t open_id, FileId file) {
  const auto key = std::make_pair(client, open_id);
  auto it = by_open_.find(key);
  if (it != by_open_.end()) {
    if (it->second == file) return ok_status();
    let_go(it->second);
    it->second = file;
    ++holders_[file];
    return ok_status();
  }
  if (Status s = room_for(client, open_id); !s.ok()) return s;
  by_open_.emplace(key, file);
  ++holders_[file];
  return ok_status();
}

std::optional<FileId> OpenFiles::close(Endpoint client, std::uint64_t open_id) {
  auto it = by_open_.find(std::make_pair(client, open_id));
  if (it == by_open_.end()) return std::nullopt;
  const FileId file = it->second;
  by_open_.erase(it);
  let_go(file);
  return file;
}

std::optional<FileId> OpenFiles::held(Endpoint client, std::uint64_t open_id) const {
  auto it = by_open_.find(std::make_pair(client, open_id));
  if (it == by_open_.end()) return std::nullopt;
  return it->second;
}

void OpenFiles::let_go(FileId file) {
  auto it = holders_.find(file);
  SLUICE_ASSERT_MSG(it != holders_.end() && it->second > 0, "a held open counts at its file");
  if (--it->second == 0) holders_.erase(it);
}

}  // namespace sluice
