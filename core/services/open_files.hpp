// OpenFiles: the opens a metadata server holds for its clients (BeeGFS's
// per-client session store of open files, Lustre's open handles on the MDT),
// which decide whether the unlink or rename that takes a file's last name
// removes its data at once or keeps it as an orphan until the last close.
//
// An open is named by the client's endpoint and an open_id the client never
// reuses (proto::Stat open_id), so a resent open or close is idempotent:
// holding an open twice holds it once, closing an unknown one does nothing.
// In memory only: a metadata server that restarts, or a secondary that takes
// over, holds none until its clients' renewals (proto::RenewOpens) hold them
// again, as Lustre clients replay their opens; a restarted server removes
// the orphans no client held again one lease after it started.
//
// Opens are leases: a client holding opens is heard (any message it sends,
// and the renewals Client sends while it holds opens), and expire() lets go
// every open of a client not heard since a time, as a Lustre server evicts a
// client whose pings stopped and BeeGFS's mgmtd removes an unreachable client
// with its sessions: a client that dies with files open does not keep their
// orphans' data for as long as the server runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice {

// Opens one metadata server holds at once; past it an open is refused with
// `again` (the client's open fails with EAGAIN rather than the server's
// memory growing without bound: ~100 bytes each, 100 MiB at the limit).
inline constexpr std::size_t k_max_held_opens = 1'000'000;

class OpenFiles {
 public:
  // Holds `client`'s open `open_id` of `file`, the client heard at now_ns.
  // again past k_max_held_opens. The same open again (a resent request) is
  // held once; an open_id already holding another file moves to this one
  // (the client reused it).
  Status open(Endpoint client, std::uint64_t open_id, FileId file, TimeNs now_ns);
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

  // `client` was heard at now_ns; nothing when it holds no opens.
  void heard(Endpoint client, TimeNs now_ns);
  // What expire() let go.
  struct Expired {
    std::vector<Endpoint> clients;  // not heard since the time asked
    std::uint64_t opens = 0;        // their opens
    std::vector<FileId> unheld;     // files no open holds any more (each once)
  };
  // Lets go every open of each client last heard before oldest_ns.
  Expired expire(TimeNs oldest_ns);

 private:
  void let_go(FileId file);
  // Whether `client` still holds an open (else it is forgotten, with its time).
  void forget_if_none(Endpoint client);
  std::map<std::pair<Endpoint, std::uint64_t>, FileId> by_open_;
  std::unordered_map<FileId, std::uint64_t> holders_;  // opens held per file (never zero)
  std::map<Endpoint, TimeNs> heard_;                   // each client holding opens: when it was last heard
};

}  // namespace sluice
