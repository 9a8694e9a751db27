// PeerTable: the peers of a transport (tcp, shm; a new one starts from it),
// by PeerId, with the groups of connections this side accepted: a connector
// opens every connection of one peer with the same group (its id and a nonce),
// so the second connection of a group finds the peer the first one made.
//
// A peer's failure (Transport::disconnect, a connection lost) takes it out
// of the table (take()); the transport then completes every operation still
// posted to it with the reason (orphaned_ops: in posting order) and pushes
// PeerDown: no operation outlives its peer without a completion.
//
// Peer must have `PeerId id`, `bool accepted` and `std::pair<uint64_t,
// uint64_t> group`. Not thread-safe: the transport's lock guards it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/common/assert.hpp"
#include "transports/transport.hpp"

namespace sluice::transport {

template <class Peer>
class PeerTable {
 public:
  using Group = std::pair<std::uint64_t, std::uint64_t>;

  // Ids from `first_id` (TransportConfig::first_peer_id: tcp+shm give their
  // two sides disjoint ranges); at most `max_peers` live at once.
  PeerTable(PeerId first_id, std::size_t max_peers) : next_id_(first_id), max_peers_(max_peers) {}

  // The id of the next peer made.
  PeerId draw_id() { return next_id_++; }
  // Whether another peer would pass max_peers (its connection is refused).
  bool full() const { return peers_.size() >= max_peers_; }
  std::size_t size() const { return peers_.size(); }

  // The live peer `id`; nullptr once it failed (or never was).
  Peer* find(PeerId id) const {
    auto it = peers_.find(id);
    return it == peers_.end() ? nullptr : it->second.get();
  }
  // The live peer this side accepted for `group`; nullptr when none.
  Peer* accepted(const Group& group) const {
    auto it = accepted_groups_.find(group);
    return it == accepted_groups_.end() ? nullptr : find(it->second);
  }

  Peer& add(std::unique_ptr<Peer> peer) {
    SLUICE_ASSERT(peer != nullptr && peers_.find(peer->id) == peers_.end());
    Peer& p = *peer;
    if (p.accepted) accepted_groups_[p.group] = p.id;
    peers_.emplace(p.id, std::move(peer));
    return p;
  }

  // Removes peer `id` (and its accepted group); nullptr when it is not live.
  std::unique_ptr<Peer> take(PeerId id) {
    auto it = peers_.find(id);
    if (it == peers_.end()) return nullptr;
    std::unique_ptr<Peer> p = std::move(it->second);
    peers_.erase(it);
    if (p->accepted) accepted_groups_.erase(p->group);
    return p;
  }

 private:
  std::unordered_map<PeerId, std::unique_ptr<Peer>> peers_;
  std::map<Group, PeerId> accepted_groups_;
  PeerId next_id_;
  std::size_t max_peers_;
};

// The ids of the operations in `ops` (id -> op with a `peer`) posted to
// `peer`, in posting order (ids grow as they are posted).
template <class OpMap>
std::vector<std::uint64_t> orphaned_ops(const OpMap& ops, PeerId peer) {
  std::vector<std::uint64_t> orphaned;
  for (const auto& [id, op] : ops) {
    if (op.peer == peer) orphaned.push_back(id);
  }
  std::sort(orphaned.begin(), orphaned.end());
  return orphaned;
}

}  // namespace sluice::transport
