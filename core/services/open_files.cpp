#include "core/services/open_files.hpp"

#include <string>

#include "core/common/assert.hpp"

namespace sluice {

Status OpenFiles::room_for(Endpoint client, std::uint64_t open_id) const {
  if (by_open_.size() < k_max_held_opens || by_open_.contains(std::make_pair(client, open_id))) return ok_status();
  return error(StatusCode::again, "metadata server holds " + std::to_string(by_open_.size()) +
                                      " opens (k_max_held_opens): close files and retry");
}

Status OpenFiles::open(Endpoint client, std::uint64_t open_id, FileId file, TimeNs now_ns) {
  const auto key = std::make_pair(client, open_id);
  auto it = by_open_.find(key);
  if (it != by_open_.end()) {
    heard_[client] = now_ns;
    if (it->second == file) return ok_status();
    let_go(it->second);
    it->second = file;
    ++holders_[file];
    return ok_status();
  }
  if (Status s = room_for(client, open_id); !s.ok()) return s;
  by_open_.emplace(key, file);
  ++holders_[file];
  heard_[client] = now_ns;
  return ok_status();
}

std::optional<FileId> OpenFiles::close(Endpoint client, std::uint64_t open_id) {
  auto it = by_open_.find(std::make_pair(client, open_id));
  if (it == by_open_.end()) return std::nullopt;
  const FileId file = it->second;
  by_open_.erase(it);
  let_go(file);
  forget_if_none(client);
  return file;
}

std::optional<FileId> OpenFiles::held(Endpoint client, std::uint64_t open_id) const {
  auto it = by_open_.find(std::make_pair(client, open_id));
  if (it == by_open_.end()) return std::nullopt;
  return it->second;
}

void OpenFiles::heard(Endpoint client, TimeNs now_ns) {
  auto it = heard_.find(client);
  if (it != heard_.end() && it->second < now_ns) it->second = now_ns;
}

OpenFiles::Expired OpenFiles::expire(TimeNs oldest_ns) {
  Expired out;
  for (auto client = heard_.begin(); client != heard_.end();) {
    if (client->second >= oldest_ns) {
      ++client;
      continue;
    }
    out.clients.push_back(client->first);
    auto it = by_open_.lower_bound(std::make_pair(client->first, std::uint64_t{0}));
    while (it != by_open_.end() && it->first.first == client->first) {
      const FileId file = it->second;
      it = by_open_.erase(it);
      ++out.opens;
      let_go(file);
      if (!holders_.contains(file)) out.unheld.push_back(file);
    }
    client = heard_.erase(client);
  }
  return out;
}

void OpenFiles::forget_if_none(Endpoint client) {
  auto it = by_open_.lower_bound(std::make_pair(client, std::uint64_t{0}));
  if (it == by_open_.end() || it->first.first != client) heard_.erase(client);
}

void OpenFiles::let_go(FileId file) {
  auto it = holders_.find(file);
  SLUICE_ASSERT_MSG(it != holders_.end() && it->second > 0, "a held open counts at its file");
  if (--it->second == 0) holders_.erase(it);
}

}  // namespace sluice
