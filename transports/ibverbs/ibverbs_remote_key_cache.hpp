// Remote regions this side has learned how to reach: (peer, local rail, the
// peer's region key) -> address, rkey and length on the peer's NIC behind
// that rail. The contract names remote memory by a 64-bit key only; the first
// put/get to a key asks the peer (a region_query over the control queue pair)
// and later ones hit this cache, as UCX caches rkeys it unpacked
// (uct_rkey_unpack) and NCCL keeps the peer's FIFO rkey per connection.
// A key the peer carried to us in a message (BulkRequest::remote_access, as
// BeeGFS carries the client buffer's rkey in its RDMA read/write requests)
// is entered with prime(): no query at all. queries() and primes() count
// which way each entry was learnt, so the fallback to queries is visible.
//
// Revocation keeps one-sided transfers safe against deregistration: the owner
// sends region_revoke before deregistering and waits for region_revoke_ack;
// this side stops using the entry at once (new operations ask again and get
// not_found), and acks when the operations already posted against it have
// completed.
//
// Bounded: at most max_entries entries; idle resolved entries are evicted
// least-recently-used first, entries with operations waiting or in flight
// never are (past the bound with none idle, want() answers again).
//
// Not thread-safe: the transport calls it with its lock held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/common/status.hpp"
#include "transports/ibverbs/ibverbs_wire.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::ibverbs {

// Remote regions remembered at once (over all peers and rails): a client
// reading through a few hundred servers' staging pools, with room to spare.
inline constexpr std::size_t k_ibv_max_cached_remote_regions = 16384;

class RemoteKeyCache {
 public:
  explicit RemoteKeyCache(std::size_t max_entries) : max_entries_(max_entries) {}

  enum class Verdict : std::uint8_t {
    hit,    // use `desc`; the use is counted until finished(use)
    query,  // the op waits; the caller sends a region_query for it
    wait,   // the op waits behind a query already sent
    full,   // no room: the caller answers again
  };
  struct Lookup {
    Verdict verdict = Verdict::full;
    RemoteRegionDesc desc;
    std::uint64_t use = 0;  // hit: pass to finished()
  };

  // Operation `op` wants the peer's region `key` through local rail `rail`.
  Lookup want(PeerId peer, std::uint32_t rail, std::uint64_t key, std::uint64_t op);

  struct Waiter {
    std::uint64_t op = 0;
    std::uint64_t use = 0;  // ok answer: the use to pass to finished()
  };
  // The peer answered the query for (peer, rail, key): the operations that
  // waited for it. On an ok answer the entry is stored and each waiter's use
  // is counted; on an error the entry is dropped.
  std::vector<Waiter> answered(PeerId peer, std::uint32_t rail, std::uint64_t key,
                               const Result<RemoteRegionDesc>& answer);

  // One use ended (its operation completed). Returns (peer, key) when this
  // was the last use holding back a revoke ack: the caller sends the ack.
  std::optional<std::pair<PeerId, std::uint64_t>> finished(std::uint64_t use);

  // The peer revokes its region `key`: every entry of it goes. true when the
  // ack may be sent now; otherwise finished() says when.
  bool revoke(PeerId peer, std::uint64_t key);

  // The peer is gone: its entries go; returns the operations that were
  // waiting for an answer (the caller fails them).
  std::vector<std::uint64_t> forget_peer(PeerId peer);

  // The peer carried `desc` for its region `key` through local rail `rail`
  // (the owner's word, newer than anything cached): the entry becomes
  // resolved with it, no query. An entry already resolved with another desc
  // is replaced (its uses in flight finish on the old one); one waiting for
  // a query is answered now, and its waiting operations are returned with
  // their uses, as answered() does (the query's answer is then ignored).
  // stored false: no room (k entries, none idle), the caller answers again.
  struct Primed {
    bool stored = false;
    std::vector<Waiter> waiters;
  };
  Primed prime(PeerId peer, std::uint32_t rail, std::uint64_t key, const RemoteRegionDesc& desc);

  std::size_t size() const { return entries_.size(); }
  // Region queries asked for (want() answered query) and carried keys taken
  // (prime() stored), since construction.
  std::uint64_t queries() const { return queries_; }
  std::uint64_t primes() const { return primes_; }

 private:
  using EntryKey = std::tuple<PeerId, std::uint32_t, std::uint64_t>;
  struct Entry {
    bool resolved = false;
    RemoteRegionDesc desc;
    std::uint64_t use = 0;  // resolved: the id of this incarnation's uses
    std::vector<std::uint64_t> waiting_ops;
    std::list<EntryKey>::iterator lru;
  };
  struct Use {
    PeerId peer = 0;
    std::uint64_t key = 0;
    std::uint64_t in_flight = 0;
    bool revoked = false;
    bool retired = false;  // replaced by a newer carried desc: dropped when idle, no ack owed
  };

  void touch(Entry& e, const EntryKey& k);
  bool evict_one();
  std::uint64_t new_use(PeerId peer, std::uint64_t key);

  std::size_t max_entries_;
  std::map<EntryKey, Entry> entries_;
  std::list<EntryKey> lru_;  // front: most recently used
  std::map<std::uint64_t, Use> uses_;
  std::uint64_t next_use_ = 1;
  std::uint64_t queries_ = 0;
  std::uint64_t primes_ = 0;
};

}  // namespace sluice::transport::ibverbs
