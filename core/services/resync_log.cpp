#include "core/services/resync_log.hpp"

#include <algorithm>
#include <string>

namespace sluice {

Status ResyncLog::validate(std::size_t max_files) {
  if (max_files == 0) {
    return error(StatusCode::invalid_argument, "resync_log_max_files is 0: the log must hold at least one file");
  }
  return ok_status();
}

ResyncChange* ResyncLog::slot(FileId file_id) {
  auto it = changes_.find(file_id);
  if (it != changes_.end()) return &it->second;
  if (changes_.size() >= max_files_) {
    if (!full_) ++overflows_;
    full_ = true;
    return nullptr;
  }
  ResyncChange& c = changes_[file_id];
  c.file_id = file_id;
  return &c;
}

void ResyncLog::record_write(FileId file_id, std::uint64_t object_offset, std::uint64_t length) {
  if (length == 0) return;
  ResyncChange* c = slot(file_id);
  if (c == nullptr) return;  // the full resync copies it
  const std::uint64_t end = object_offset + length;
  if (c->removed || c->begin_offset == c->end_offset) {
    // A fresh entry, or a file written again after its removal was recorded
    // (ids are not reused, but the resync must not depend on that).
    c->removed = false;
    c->begin_offset = object_offset;
    c->end_offset = end;
    return;
  }
  c->begin_offset = std::min(c->begin_offset, object_offset);
  c->end_offset = std::max(c->end_offset, end);
}

void ResyncLog::record_remove(FileId file_id) {
  ResyncChange* c = slot(file_id);
  if (c == nullptr) {
    ++lost_removals_;
    return;
  }
  c->removed = true;
  c->begin_offset = 0;
  c->end_offset = 0;
}

void ResyncLog::restore(const ResyncChange& change) {
  auto it = changes_.find(change.file_id);
  if (it == changes_.end()) {
    if (change.removed) {
      record_remove(change.file_id);
    } else {
      record_write(change.file_id, change.begin_offset, change.end_offset - change.begin_offset);
    }
    return;
  }
  // Something newer was recorded for the file: it decides whether the object
  // exists; the failed extent is added to a write.
  if (!it->second.removed && !change.removed && change.end_offset > change.begin_offset) {
    it->second.begin_offset = std::min(it->second.begin_offset, change.begin_offset);
    it->second.end_offset = std::max(it->second.end_offset, change.end_offset);
  }
}

std::optional<ResyncChange> ResyncLog::take() {
  if (changes_.empty()) return std::nullopt;
  ResyncChange c = changes_.begin()->second;
  changes_.erase(changes_.begin());
  return c;
}

bool ResyncLog::take_full() {
  const bool was = full_;
  full_ = false;
  return was;
}

void ResyncLog::clear() {
  changes_.clear();
  full_ = false;
}

}  // namespace sluice
