#include "core/services/meta_store.hpp"

#include "core/namespace/name_hash.hpp"

namespace sluice {

std::uint64_t listing_hash(std::string_view name) {
  return (fnv_1a_64(name) & ((std::uint64_t{1} << 62) - 1)) + 1;  // in [1, 2^62]
}

Result<proto::InodeDesc> InMemoryMetaStore::get_dir(std::string_view dir_path) const {
  auto it = dirs_.find(dir_path);
  if (it == dirs_.end() || !it->second.has_record) {
    return error(StatusCode::not_found, "no directory " + std::string(dir_path));
  }
  return it->second.inode;
}

Status InMemoryMetaStore::put_dir(std::string_view dir_path, const proto::InodeDesc& inode) {
  auto it = dirs_.find(dir_path);
  if (it == dirs_.end()) it = dirs_.emplace(std::string(dir_path), Dir{}).first;
  it->second.has_record = true;
  it->second.inode = inode;
  return ok_status();
}

Status InMemoryMetaStore::remove_dir(std::string_view dir_path) {
  auto it = dirs_.find(dir_path);
  if (it == dirs_.end() || !it->second.has_record) {
    return error(StatusCode::not_found, "no directory " + std::string(dir_path));
  }
  if (!it->second.entries.empty()) {
    return error(StatusCode::not_empty, "directory " + std::string(dir_path) + " has " +
                                            std::to_string(it->second.entries.size()) + " entries");
  }
  dirs_.erase(it);
  return ok_status();
}

Result<proto::InodeDesc> InMemoryMetaStore::get_entry(std::string_view dir_path, std::string_view name) const {
  auto it = dirs_.find(dir_path);
  if (it != dirs_.end()) {
    auto e = it->second.entries.find(std::make_pair(listing_hash(name), std::string(name)));
    if (e != it->second.entries.end()) return e->second;
  }
  return error(StatusCode::not_found, "no entry " + std::string(name) + " in " + std::string(dir_path));
}

Status InMemoryMetaStore::put_entry(std::string_view dir_path, std::string_view name, const proto::InodeDesc& inode) {
  auto it = dirs_.find(dir_path);
  if (it == dirs_.end()) it = dirs_.emplace(std::string(dir_path), Dir{}).first;
  it->second.entries.insert_or_assign(std::make_pair(listing_hash(name), std::string(name)), inode);
  return ok_status();
}

Status InMemoryMetaStore::remove_entry(std::string_view dir_path, std::string_view name) {
  auto it = dirs_.find(dir_path);
  if (it == dirs_.end() || it->second.entries.erase(std::make_pair(listing_hash(name), std::string(name))) == 0) {
    return error(StatusCode::not_found, "no entry " + std::string(name) + " in " + std::string(dir_path));
  }
  if (!it->second.has_record && it->second.entries.empty()) dirs_.erase(it);
  return ok_status();
}

std::uint64_t InMemoryMetaStore::entry_count(std::string_view dir_path) const {
  auto it = dirs_.find(dir_path);
  return it == dirs_.end() ? 0 : it->second.entries.size();
}

MetaListPage InMemoryMetaStore::list(std::string_view dir_path, std::uint64_t cookie, std::uint32_t max_entries) const {
  MetaListPage page;
  auto it = dirs_.find(dir_path);
  if (it == dirs_.end()) return page;
  const auto& entries = it->second.entries;
  auto e = entries.lower_bound(std::make_pair(cookie, std::string()));
  std::uint64_t last_hash = 0;
  for (; e != entries.end(); ++e) {
    // Stop only between different hashes, so the cookie (next hash) is exact.
    if (page.entries.size() >= max_entries && e->first.first != last_hash) break;
    page.entries.emplace_back(e->first.second, e->second);
    last_hash = e->first.first;
  }
  page.eof = e == entries.end();
  page.next_cookie = page.eof ? 0 : e->first.first;
  return page;
}

std::vector<std::string> InMemoryMetaStore::list_dirs(std::string_view after, std::uint32_t max_dirs) const {
  std::vector<std::string> out;
  for (auto it = dirs_.upper_bound(after); it != dirs_.end() && out.size() < max_dirs; ++it) out.push_back(it->first);
  return out;
}

std::vector<KeptReply> InMemoryMetaStore::kept_replies() const {
  std::vector<KeptReply> out;
  out.reserve(kept_.size());
  for (const auto& [seq, reply] : kept_) out.push_back(reply);
  return out;
}

}  // namespace sluice
