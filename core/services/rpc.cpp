#include "core/services/rpc.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "core/common/assert.hpp"
#include "core/services/invariants.hpp"

namespace sluice {

bool OpTable::dispatch(Completion& c) {
  auto it = pending_.find(c.op);
  if (it == pending_.end()) return false;
  Callback cb = std::move(it->second);
  pending_.erase(it);
  cb(c);
  return true;
}

RequestId* request_id_of(proto::Message& message) {
  return std::visit(
      [](auto& m) -> RequestId* {
        if constexpr (requires { m.request_id; }) {
          return &m.request_id;
        } else {
          return nullptr;
        }
      },
      message);
}

const RequestId* request_id_of(const proto::Message& message) {
  return request_id_of(const_cast<proto::Message&>(message));  // the non-const visitor only takes an address
}

bool is_reply(const proto::Message& message) {
  return std::visit(
      [](const auto& m) {
        return requires {
          m.request_id;
          m.status;
        };
      },
      message);
}

Status reply_status(const proto::Message& message) {
  return std::visit(
      [](const auto& m) -> Status {
        if constexpr (requires {
                        m.status;
                        m.error;
                      }) {
          if (m.status == StatusCode::ok) return ok_status();
          return Status(m.status, m.error);
        } else {
          return ok_status();
        }
      },
      message);
}

namespace {
// Request ids of one client instance: a start drawn from a fork of its Rng
// (the service's own stream is not advanced) and the clock (a restarted
// instance starts later), leaving 2^62 ids of room.
constexpr std::uint64_t k_request_id_stream = 0x5250'4349'4453ULL;  // "RPCIDS"
RequestId first_request_id(Env& env) {
  std::uint64_t state = env.rng().fork(k_request_id_stream).next_u64() ^ static_cast<std::uint64_t>(env.now());
  return (splitmix64(state) >> 2) | 1;
}

// The start of the error of a call nobody answered (RpcClient::unanswered).
std::string no_reply_from(const Endpoint& to) { return "no reply from " + to.to_string() + " to "; }
}  // namespace

bool RpcClient::unanswered(const Status& s, const Endpoint& to) {
  return s.code() == StatusCode::timed_out && s.message().rfind(no_reply_from(to), 0) == 0;
}

RpcClient::RpcClient(Env& env, OpTable& ops, RpcLimits limits)
    : env_(env), ops_(ops), limits_(limits), next_id_(first_request_id(env)) {}

RequestId RpcClient::call(Endpoint to, proto::Message request, ReplyFn on_reply, RequestId resend_id,
                          StillThereFn still_there) {
  SLUICE_ASSERT_MSG(static_cast<bool>(on_reply), "RpcClient::call needs a reply callback");
  if (calls_.size() >= limits_.max_outstanding) {
    on_reply(error(StatusCode::again, "too many outstanding requests (" + std::to_string(calls_.size()) + ")"));
    return 0;
  }
  if (resend_id != 0 && (resend_id >= next_id_ || calls_.count(resend_id) != 0)) {
    on_reply(error(StatusCode::internal, "resend under request id " + std::to_string(resend_id) +
                                             ", which is not a finished call of this client"));
    return 0;
  }
  const RequestId id = resend_id != 0 ? resend_id : next_id_++;
  if (RequestId* rid = request_id_of(request)) *rid = id;
  Call call{to, std::move(request), std::move(on_reply), std::move(still_there)};
  call.first_sent_at = env_.now();
  call.first_timeout_ns = first_timeout_ns(to);
  calls_.emplace(id, std::move(call));
  send_attempt(id);
  return id;
}

void RpcClient::send_attempt(RequestId id) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  Call& call = it->second;
  ++call.attempts;
  const std::uint64_t generation = ++call.generation;
  if (Status s = env_.send(call.to, call.request); !s.ok()) {
    finish(id, s);
    return;
  }
  const TimeNs wait_ns = limits_.attempt_timeout_ns(call.attempts, call.first_timeout_ns);
  ops_.expect(env_.timer(wait_ns), [this, id, generation](Completion&) {
    auto c = calls_.find(id);
    if (c == calls_.end() || c->second.generation != generation) return;  // answered or resent since
    if (c->second.attempts >= limits_.max_attempts) {
      TimeNs waited_ns = 0;
      for (std::uint32_t a = 1; a <= c->second.attempts; ++a) {
        waited_ns += limits_.attempt_timeout_ns(a, c->second.first_timeout_ns);
      }
      finish(id, error(StatusCode::timed_out, no_reply_from(c->second.to) +
                                                  std::string(proto::message_name(c->second.request)) + " after " +
                                                  std::to_string(c->second.attempts) + " attempts in " +
                                                  std::to_string(waited_ns / k_ns_per_ms) + " ms"));
      return;
    }
    retry(id);
  });
}

void RpcClient::retry(RequestId id) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  if (!it->second.still_there) {
    env_.metrics().count("rpc.retries", 1);
    return send_attempt(id);
  }
  const std::uint64_t generation = ++it->second.generation;  // a timer or reply since makes the answer stale
  StillThereFn ask = it->second.still_there;
  ask([this, id, generation](bool still_there) {
    auto c = calls_.find(id);
    if (c == calls_.end() || c->second.generation != generation) return;  // answered, or waiting on in_progress
    if (still_there) {
      env_.metrics().count("rpc.retries", 1);
      return send_attempt(id);
    }
    env_.metrics().count("rpc.abandoned_for_new_server", 1);
    finish(id, error(StatusCode::unavailable, c->second.to.to_string() + " is no longer the server of this " +
                                                  std::string(proto::message_name(c->second.request)) + " after " +
                                                  std::to_string(c->second.attempts) +
                                                  " unanswered attempt(s) (the maps name another)"));
  });
}

bool RpcClient::expects(const Delivery& delivery) const {
  if (!is_reply(delivery.message)) return false;
  auto it = calls_.find(*request_id_of(delivery.message));
  return it != calls_.end() && it->second.to == delivery.from;
}

bool RpcClient::on_delivery(Delivery& delivery) {
  if (!is_reply(delivery.message)) return false;
  const RequestId id = *request_id_of(delivery.message);
  auto it = calls_.find(id);
  if (it == calls_.end() || it->second.to != delivery.from) return true;  // late or duplicate: drop
  Status status = reply_status(delivery.message);
  if (status.code() == StatusCode::again) {
    Call& call = it->second;
    if (++call.again_replies > limits_.max_again_replies) {
      finish(id, status);
      return true;
    }
    const std::uint64_t generation = ++call.generation;  // the pending timeout is now stale
    const TimeNs backoff = std::min(limits_.again_backoff_max_ns,
                                    limits_.again_backoff_ns << std::min<std::uint32_t>(call.again_replies - 1, 16));
    ops_.expect(env_.timer(backoff), [this, id, generation](Completion&) {
      auto c = calls_.find(id);
      if (c == calls_.end() || c->second.generation != generation) return;
      c->second.attempts = 0;  // a back-pressured request has been answered; timeouts count afresh
      send_attempt(id);
    });
    return true;
  }
  if (status.code() == StatusCode::in_progress) {
    // The server is executing this request (a retry found it in progress):
    // wait for its reply with a fresh timeout; never a second execution.
    Call& call = it->second;
    env_.metrics().count("rpc.in_progress_replies", 1);
    if (++call.in_progress_replies > limits_.max_in_progress_replies) {
      finish(id, error(StatusCode::timed_out, no_reply_from(call.to) + std::string(proto::message_name(call.request)) +
                                                  " after " + std::to_string(call.in_progress_replies - 1) +
                                                  " answers that it is still in progress (max_in_progress_replies)"));
      return true;
    }
    call.attempts = 0;
    call.first_timeout_ns = first_timeout_ns(call.to);
    const std::uint64_t generation = ++call.generation;
    ops_.expect(env_.timer(call.first_timeout_ns), [this, id, generation](Completion&) {
      auto c = calls_.find(id);
      if (c == calls_.end() || c->second.generation != generation) return;
      send_attempt(id);  // ask again: the answer, a cached reply, or in_progress once more
    });
    return true;
  }
  const Call& call = it->second;
  if (call.attempts == 1 && call.again_replies == 0 && call.in_progress_replies == 0) {
    sample_round_trip(call.to, env_.now() - call.first_sent_at);  // Karn: never a retried call's
  }
  if (!status.ok()) {
    finish(id, status);
  } else {
    finish(id, std::move(delivery.message));
  }
  return true;
}

void RpcClient::sample_round_trip(const Endpoint& to, TimeNs sample_ns) {
  RoundTrip& rt = round_trips_[to];
  if (!rt.sampled) {
    rt.srtt_ns = sample_ns;
    rt.rttvar_ns = sample_ns / 2;
    rt.sampled = true;
    return;
  }
  const TimeNs deviation = rt.srtt_ns > sample_ns ? rt.srtt_ns - sample_ns : sample_ns - rt.srtt_ns;
  rt.rttvar_ns = rt.rttvar_ns - rt.rttvar_ns / 4 + deviation / 4;  // beta = 1/4
  rt.srtt_ns = rt.srtt_ns - rt.srtt_ns / 8 + sample_ns / 8;        // alpha = 1/8
}

TimeNs RpcClient::first_timeout_ns(const Endpoint& to) const {
  auto it = round_trips_.find(to);
  if (it == round_trips_.end()) return limits_.timeout_ns;
  const TimeNs estimate = it->second.srtt_ns + 4 * it->second.rttvar_ns;
  return std::min(limits_.timeout_max_ns, std::max(limits_.timeout_ns, estimate));
}

void RpcClient::finish(RequestId id, Result<proto::Message> result) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  invariants::reply_once(static_cast<bool>(it->second.on_reply), id);
  ReplyFn fn = std::move(it->second.on_reply);
  calls_.erase(it);
  fn(std::move(result));
}

ReplyCache::Seen ReplyCache::check(Endpoint from, RequestId id, const proto::Message** cached) const {
  const Key key{from, id};
  if (in_progress_.count(key) != 0) return Seen::in_progress;
  auto it = replies_.find(key);
  if (it != replies_.end()) {
    *cached = &it->second;
    return Seen::answered;
  }
  return Seen::new_request;
}

void ReplyCache::answer(Endpoint from, RequestId id, const proto::Message& reply) {
  const Key key{from, id};
  in_progress_.erase(key);
  if (max_entries_ == 0) return;
  if (replies_.insert_or_assign(key, reply).second) order_.push_back(key);
  while (order_.size() > max_entries_) {
    replies_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace sluice
