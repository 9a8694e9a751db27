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
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/env.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

// Callbacks for operations this service started, by OpId.
class OpTable {
 public:
  using Callback = std::function<void(Completion&)>;
  void expect(OpId op, Callback callback) { pending_.emplace(op, std::move(callback)); }
  // Runs `callback` once `units` of `kind` are charged: through env.compute
  // and its completion where compute takes time (SimEnv, TestEnv), at once
  // where it stands for work already done (Env::compute_charges_time false:
  // HwEnv), which saves a request handler the completion's loop turn. Not
  // for a loop that charges compute each turn with no other yield: run at
  // once, it would recurse.
  void after_compute(Env& env, CostKind kind, std::uint64_t units, Callback callback) {
    if (env.compute_charges_time()) return expect(env.compute(kind, units), std::move(callback));
    Completion done{};
    callback(done);
  }
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
  // Retransmission timeouts, as NFS's timeo and TCP's RTO: the first attempt
  // waits timeout_ns, or longer where replies from that server have been
  // slow (see RpcClient: a per-server estimate, srtt + 4 x rttvar, from
  // replies to first sends only, Karn's rule); each further attempt waits
  // timeout_backoff times the previous, capped at timeout_max_ns. A fixed
  // per-attempt timeout gives up on a live server whose replies queue behind
  // the bulk data of a slow link (issue 26: 8 reads of 512 KiB in flight on
  // 10 Mbit/s are 3.4 s of data ahead of the last reply, longer on a lossy
  // link while TCP recovers); backing off waits 2 + 4 + 8 = 14 s by default.
  TimeNs timeout_ns = 2 * k_ns_per_s;           // first attempt's least wait
  std::uint32_t max_attempts = 3;               // sends of one request before timed_out
  std::uint32_t timeout_backoff = 2;            // each attempt waits this times the previous
  TimeNs timeout_max_ns = 60 * k_ns_per_s;      // no attempt waits longer
  TimeNs again_backoff_ns = 200 * k_ns_per_us;  // first wait after an `again` reply; doubles
  TimeNs again_backoff_max_ns = 20 * k_ns_per_ms;
  std::uint32_t max_again_replies = 10'000;  // then the call fails with `again`
  std::size_t max_outstanding = 1 << 20;     // calls in flight; beyond: again at once
  // `in_progress` answers to one call (a server still executing it answers
  // each retry so; see RpcClient::call): each restarts the attempt count and
  // the timeout, so a slow but live server is waited for, not abandoned.
  // Past this many the call fails with timed_out: with the default 2 s
  // timeout, 10 minutes of "still working".
  std::uint32_t max_in_progress_replies = 300;

  // The wait of attempt `attempt` (1-based) when the first waits first_ns.
  constexpr TimeNs attempt_timeout_ns(std::uint32_t attempt, TimeNs first_ns) const {
    TimeNs wait = first_ns < timeout_max_ns ? first_ns : timeout_max_ns;
    const TimeNs factor = timeout_backoff > 1 ? static_cast<TimeNs>(timeout_backoff) : 1;
    for (std::uint32_t a = 1; a < attempt && wait < timeout_max_ns; ++a) {
      wait = wait * factor < timeout_max_ns ? wait * factor : timeout_max_ns;
    }
    return wait;
  }
  // How long a call to a server with no reply history waits before timed_out
  // (the sum of every attempt's wait).
  constexpr TimeNs give_up_ns() const {
    TimeNs total = 0;
    for (std::uint32_t a = 1; a <= max_attempts; ++a) total += attempt_timeout_ns(a, timeout_ns);
    return total;
  }
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, RpcLimits& c) {
  v("timeout_ns", c.timeout_ns, duration_in(0, k_field_max_unbounded, "first attempt's least wait for a reply"));
  v("max_attempts", c.max_attempts, count_of("sends", 1, 1e6, "sends of one request before it is timed_out"));
  v("timeout_backoff", c.timeout_backoff, count_of("times", 1, 1e3, "each attempt waits this times the previous"));
  v("timeout_max_ns", c.timeout_max_ns, duration_in(0, k_field_max_unbounded, "no attempt waits longer"));
  v("again_backoff_ns", c.again_backoff_ns,
    duration_in(0, k_field_max_unbounded, "first wait after an `again` reply; doubles"));
  v("again_backoff_max_ns", c.again_backoff_max_ns,
    duration_in(0, k_field_max_unbounded, "longest wait after `again`"));
  v("max_again_replies", c.max_again_replies, count_of("replies", 0, 4294967295.0, "then the call fails with `again`"));
  v("max_outstanding", c.max_outstanding, count_of("calls", 1, 1e12, "calls in flight; beyond, `again` at once"));
  v("max_in_progress_replies", c.max_in_progress_replies,
    count_of("replies", 0, 4294967295.0, "`in_progress` answers to one call before it is timed_out"));
}

class RpcClient {
 public:
  using ReplyFn = std::function<void(Result<proto::Message>)>;

  RpcClient(Env& env, OpTable& ops, RpcLimits limits);

  // Whether a call to `to` ended so because no reply came (its timed_out:
  // "no reply from <to> to ..."), not because the server answered with an
  // error (a server's own timed_out included).
  static bool unanswered(const Status& s, const Endpoint& to);

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
  // still_there (may be empty): asked when an attempt timed out and another
  // remains, before that one is sent; it answers through `resume`, once,
  // whether the server is still the one to ask. A buddy-mirrored server's
  // client refreshes its maps there: when mgmt has switched the group over
  // since, the call ends at once with unavailable (the client resends to the
  // new primary) instead of spending every attempt on a dead server (issue
  // 18: a meta:0 failover's close waited the whole 2 + 4 + 8 s, and on real
  // processes ran past its budget). A reply that arrives meanwhile finishes
  // the call as usual.
  // Returns the request id used (0 if the call failed before anything was sent).
  using StillThereFn = std::function<void(std::function<void(bool still_there)> resume)>;
  RequestId call(Endpoint to, proto::Message request, ReplyFn on_reply, RequestId resend_id = 0,
                 StillThereFn still_there = {});
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
    StillThereFn still_there;  // see call()
    std::uint32_t attempts = 0;
    std::uint32_t again_replies = 0;
    std::uint32_t in_progress_replies = 0;
    std::uint64_t generation = 0;  // bumps on every send; stale timers are ignored
    TimeNs first_sent_at = 0;      // a reply to a call sent once is a round-trip sample
    TimeNs first_timeout_ns = 0;   // this call's first attempt wait (the server's estimate when sent)
  };
  // Reply times of one server (Jacobson/Karels, RFC 6298 gains).
  struct RoundTrip {
    TimeNs srtt_ns = 0;
    TimeNs rttvar_ns = 0;
    bool sampled = false;
  };
  void send_attempt(RequestId id);
  // An attempt of call `id` timed out with attempts left: resend, or first ask still_there.
  void retry(RequestId id);
  void finish(RequestId id, Result<proto::Message> result);
  void sample_round_trip(const Endpoint& to, TimeNs sample_ns);
  // The first attempt's wait for a call to `to`.
  TimeNs first_timeout_ns(const Endpoint& to) const;

  Env& env_;
  OpTable& ops_;
  RpcLimits limits_;
  RequestId next_id_ = 1;
  std::map<RequestId, Call> calls_;
  std::map<Endpoint, RoundTrip> round_trips_;
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
  // Hashed, not ordered: a server looks every request up here, and a tree of
  // up to k_default_entries replies cost about 5% of a data-scale
  // simulation (perf, P12's configuration at 256 MiB files, fluid).
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return std::hash<Endpoint>{}(k.first) ^ (std::hash<RequestId>{}(k.second) * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::size_t max_entries_;
  std::unordered_set<Key, KeyHash> in_progress_;
  std::unordered_map<Key, proto::Message, KeyHash> replies_;
  std::deque<Key> order_;  // replies_ in the order answered: the oldest go first
};

}  // namespace sluice
