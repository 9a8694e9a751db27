// ResyncLog: what the primary target of a buddy group must copy to its
// secondary before the secondary is good again.
//
// BeeGFS's buddy resyncer finds the chunk files to copy by walking the
// primary's chunk directories for files modified since the last successful
// resync (BuddyResyncJob, with a full resync when that time is unknown).
// sluice's primary records them instead, as it writes while its secondary is
// not good: per chunk object (file id) the extent of the object that changed,
// or that the object was removed. The resync then copies, per recorded file,
// that extent of the primary's object (or removes the secondary's object).
//
// Bounded: at most max_files files are recorded. A change to a further file
// switches the log to a full resync (every object of the primary target is
// copied whole); removals recorded before the overflow are still replayed,
// but a file removed once the log is full and not recorded leaves its object
// on the secondary as an orphan (counted in lost_removals(); BeeGFS's full
// resync would delete it by comparing directories, which needs a listing of
// the secondary that the Env does not offer).
//
// Pure bookkeeping: no Env, no time. Single-threaded like its service.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"

namespace sluice {

// One file to bring up to date on the secondary: copy [begin_offset,
// end_offset) of the primary's object (as far as the object now reaches), or,
// when the primary's object no longer exists, remove the secondary's.
struct ResyncChange {
  FileId file_id = 0;
  bool removed = false;            // the last recorded change was a removal
  std::uint64_t begin_offset = 0;  // extent of the object written since the last resync
  std::uint64_t end_offset = 0;

  bool operator==(const ResyncChange&) const = default;
};

class ResyncLog {
 public:
  // 100,000 files of a few hundred bytes of bookkeeping each: a few tens of MiB
  // per buddy at most, and past it a full resync is cheaper to describe.
  static constexpr std::size_t k_default_max_files = 100'000;

  explicit ResyncLog(std::size_t max_files = k_default_max_files) : max_files_(max_files) {}

  // Checks a would-be limit (at least one file); the message names the field.
  static Status validate(std::size_t max_files);

  // [object_offset, object_offset + length) of file_id's object changed.
  void record_write(FileId file_id, std::uint64_t object_offset, std::uint64_t length);
  // file_id's object was removed.
  void record_remove(FileId file_id);
  // Puts a change back (a resync step that failed), merged with what was recorded since.
  void restore(const ResyncChange& change);
  // Asks for a full resync (what an overflow does; also a resync that failed during a full one).
  void require_full() { full_ = true; }

  // No recorded change and no full resync asked for.
  bool empty() const { return !full_ && changes_.empty(); }
  bool full() const { return full_; }
  std::size_t size() const { return changes_.size(); }
  std::size_t max_files() const { return max_files_; }
  std::uint64_t overflows() const { return overflows_; }
  std::uint64_t lost_removals() const { return lost_removals_; }

  // Removes and returns the recorded change of the lowest file id.
  std::optional<ResyncChange> take();
  // Ends the full-resync request: true if one was pending (the caller then copies every object).
  bool take_full();
  void clear();

 private:
  // The entry for file_id, or nullptr when the log has no room for it (it then turns full).
  ResyncChange* slot(FileId file_id);

  std::size_t max_files_;
  std::map<FileId, ResyncChange> changes_;
  bool full_ = false;
  std::uint64_t overflows_ = 0;
  std::uint64_t lost_removals_ = 0;
};

}  // namespace sluice
