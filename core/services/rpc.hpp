// Request/reply plumbing shared by every service: completion callbacks by op
// id, client-side calls with timeouts, retries and back-pressure handling, and
// a server-side reply cache so a retried non-idempotent request (create,
// mkdir, unlink) is answered, not executed twice (as Lustre's reply
// reconstruction and NFS's duplicate request cache do).
//
// All of it runs inside one service's event handler: single-threaded, no locks.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/env.hpp"

namespace sluice {

// Callbacks for operations this service started, by OpId.
class OpTable {
 public:
  using Callback = std::function<void(Completion&)>;
  void expect(OpId op, Callback callback) { pending_.emplace(op, std::move(callback)); }
  // Runs and forgets the callback of c.op; false if the op is not ours.
  bool dispatch(Completion& c);
  std::size_t pending() const { return pending_.size(); }

 private:
  std::unordered_map<OpId, Callback> pending_;
};

// The request id field every request and reply carries (nullptr if none).
RequestId* request_id_of(proto::Message& message);
const RequestId* request_id_of(const proto::Message& message);
// True for reply messages (they carry a status and echo a request id).
bool is_reply(const proto::Message& message);
// The status a reply carries, with its error text (ok for non-replies).
Status reply_status(const proto::Message& message);

struct RpcLimits {
  TimeNs timeout_ns = 2 * k_ns_per_s;          // per attempt
  std::uint32_t max_attempts = 3;              // sends of one request before timed_out
  TimeNs again_backoff_ns = 200 * k_ns_per_us; // first wait after an `again` reply; doubles
  TimeNs again_backoff_max_ns = 20 * k_ns_per_ms;
  std::uint32_t max_again_replies = 10'000;    // then the call fails with `again`
  std::size_t max_outstanding = 1 << 20;       // calls in flight; beyond: again at once
  // `in_progress` answers to one call (a server still executing it answers
  // each retry so; see RpcClient::call): each restarts the attempt count and
  // the timeout, so a slow but live server is waited for, not abandoned.
  // Past this many the call fails with timed_out: with the default 2 s
  // timeout, 10 minutes of "still working".
  std::uint32_t max_in_progress_replies = 300;
};

class RpcClient {
 public:
  using ReplyFn = std::function<void(Result<proto::Message>)>;

  RpcClient(Env& env, OpTable& ops, RpcLimits limits);

  // Sends `request` (its request id is set here) and calls on_reply exactly
  // once: with the reply message if its status is ok, else with the remote
  // error; with timed_out after max_attempts unanswered sends; with
  // unavailable if the endpoint is unknown. `again` replies are retried after
  // an exponential back-off. An `in_progress` reply (the server is still
  // executing this request id: a retry reached it while the first send was
  // being served) is not an answer: the call keeps waiting for the real
  // reply, its timeout restarted (bounded by max_in_progress_replies).
  // Request ids start at a value drawn from the service's Rng and the clock,
  // so that a restarted client does not reuse its previous instance's ids
  // (a server's reply cache would answer them with the old replies). resend_id != 0 sends under that request id
  // instead of a new one: a failover resend of a request another server may
  // have executed, whose reply that server replicated (metadata buddy
  // mirroring), so the new server's reply cache answers it. It must be an id
  // this client handed out before and that has no call in flight.
  // Returns the request id used (0 if the call failed before anything was sent).
  RequestId call(Endpoint to, proto::Message request, ReplyFn on_reply, RequestId resend_id = 0);
  // Whether `delivery` is the reply to one of this client's calls in flight
  // (on_delivery also swallows late replies; this tells two clients apart).
  bool expects(const Delivery& delivery) const;
  // Consumes a reply addressed to one of our calls; false if it is not one
  // (a request for this service, or a late/duplicate reply, which is dropped).
  bool on_delivery(Delivery& delivery);
  std::size_t outstanding() const { return calls_.size(); }
  const RpcLimits& limits() const { return limits_; }

 private:
  struct Call {
    Endpoint to;
    proto::Message request;
    ReplyFn on_reply;
    std::uint32_t attempts = 0;
    std::uint32_t again_replies = 0;
    std::uint32_t in_progress_replies = 0;
    std::uint64_t generation = 0;  // bumps on every send; stale timers are ignored
  };
  void send_attempt(RequestId id);
  void finish(RequestId id, Result<proto::Message> result);

  Env& env_;
  OpTable& ops_;
  RpcLimits limits_;
  RequestId next_id_ = 1;
  std::map<RequestId, Call> calls_;
};

// Server side: remembers the last replies per (client, request id) and which
// requests are being executed, so duplicates are answered or ignored.
class ReplyCache {
 public:
  static constexpr std::size_t k_default_entries = 65'536;
  explicit ReplyCache(std::size_t max_entries = k_default_entries) : max_entries_(max_entries) {}

  enum class Seen { new_request, in_progress, answered };
  // Classifies a request; for `answered`, *cached is set to the reply to resend.
  Seen check(Endpoint from, RequestId id, const proto::Message** cached) const;
  void begin(Endpoint from, RequestId id) { in_progress_.insert({from, id}); }
  void answer(Endpoint from, RequestId id, const proto::Message& reply);

 private:
  using Key = std::pair<Endpoint, RequestId>;
  std::size_t max_entries_;
  std::set<Key> in_progress_;
  std::map<Key, proto::Message> replies_;
  std::deque<Key> order_;
};

}  // namespace sluice
