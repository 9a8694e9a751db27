// OpenFiles: the opens a metadata server holds for its clients (BeeGFS's
// per-client session store of open files, Lustre's open handles on the MDT),
// which decide whether the unlink or rename that takes a file's last name
// removes its data at once or keeps it as an orphan until the last close.
//
// An open is named by the client's endpoint and an open_id the client never
// reuses (proto::Stat open_id), so a resent open or close is idempotent:
// holding an open twice holds it once, closing an unknown one does nothing.
// In memory only: a metadata server that restarts, or a secondary that takes
// over, holds no opens (its orphans then go at the next close that names
// them; docs/mount.md says so).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"

namespace sluice {

// Opens one metadata server holds at once; past it an open is refused with
// `again` (the client's open fails with EAGAIN rather than the server's
// memory growing without bound: ~100 bytes each, 100 MiB at the limit).
inline constexpr std::size_t k_max_held_opens = 1'000'000;

class OpenFiles {
 public:
  // Holds `client`'s open `open_id` of `file`. again past k_max_held_opens.
  // The same open again (a resent request) is held once; an open_id already
  // holding another file moves to this one (the client reused it).
  Status open(Endpoint client, std::uint64_t open_id, FileId file);
  // again when open() of this open would be refused (checked before a create).
  Status room_for(Endpoint client, std::uint64_t open_id) const;
  // Lets the open go; the file it held, nullopt when it was not held (a
  // resend, or an open from before a restart or takeover).
  std::optional<FileId> close(Endpoint client, std::uint64_t open_id);
  // The file `client`'s open `open_id` holds, nullopt when none.
  std::optional<FileId> held(Endpoint client, std::uint64_t open_id) const;
  // Whether any client holds `file` open.
  bool is_open(FileId file) const { return holders_.contains(file); }
  std::size_t size() const { return by_open_.size(); }

 private:
  void let_go(FileId file);
  std::map<std::pair<Endpoint, std::uint64_t>, FileId> by_open_;
  std::unordered_map<FileId, std::uint64_t> holders_;  // opens held per file (never zero)
};

}  // namespace sluice
