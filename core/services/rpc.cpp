#include "core/services/rpc.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

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
  return std::visit([](const auto& m) { return requires { m.request_id; m.status; }; }, message);
}

Status reply_status(const proto::Message& message) {
  return std::visit(
      [](const auto& m) -> Status {
        if constexpr (requires { m.status; m.error; }) {
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
}  // namespace

RpcClient::RpcClient(Env& env, OpTable& ops, RpcLimits limits)
    : env_(env), ops_(ops), limits_(limits), next_id_(first_request_id(env)) {}

RequestId RpcClient::call(Endpoint to, proto::Message request, ReplyFn on_reply, RequestId resend_id) {
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
  calls_.emplace(id, Call{to, std::move(request), std::move(on_reply)});
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
  ops_.expect(env_.timer(limits_.timeout_ns), [this, id, generation](Completion&) {
    auto c = calls_.find(id);
    if (c == calls_.end() || c->second.generation != generation) return;  // answered or resent since
    if (c->second.attempts >= limits_.max_attempts) {
      finish(id, error(StatusCode::timed_out,
                       "no reply from " + c->second.to.to_string() + " to " +
                           std::string(proto::message_name(c->second.request)) + " after " +
                           std::to_string(c->second.attempts) + " attempts of " +
                           std::to_string(limits_.timeout_ns / k_ns_per_ms) + " ms"));
      return;
    }
    env_.metrics().count("rpc.retries", 1);
    send_attempt(id);
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
      finish(id, error(StatusCode::timed_out,
                       "no reply from " + call.to.to_string() + " to " + std::string(proto::message_name(call.request)) +
                           " after " + std::to_string(call.in_progress_replies - 1) +
                           " answers that it is still in progress (max_in_progress_replies)"));
      return true;
    }
    call.attempts = 0;
    const std::uint64_t generation = ++call.generation;
    ops_.expect(env_.timer(limits_.timeout_ns), [this, id, generation](Completion&) {
      auto c = calls_.find(id);
      if (c == calls_.end() || c->second.generation != generation) return;
      send_attempt(id);  // ask again: the answer, a cached reply, or in_progress once more
    });
    return true;
  }
  if (!status.ok()) {
    finish(id, status);
  } else {
    finish(id, std::move(delivery.message));
  }
  return true;
}

void RpcClient::finish(RequestId id, Result<proto::Message> result) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
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
