#include "scenarios/deploy/rank_bootstrap.hpp"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

namespace sluice::emulate {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A rank other than 0 waits this much longer than rank 0, so that rank 0's
// answer (an error naming the rank that did not come) arrives first.
constexpr std::chrono::milliseconds k_follower_grace{30'000};

// A receive waits this long at most, so that a stop is seen.
constexpr int k_receive_slice_ms = 200;

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, k_receive_slice_ms));
}

std::string round_text(const std::string& op, const std::string& name) {
  return name.empty() ? op : op + " \"" + name + "\"";
}

}  // namespace

Clock::time_point RankBootstrap::wait_deadline(Clock::time_point deadline) {
  if (!stop_seen_ && stop_requested_ && stop_requested_()) stop_seen_ = Clock::now();
  if (!stop_seen_) return deadline;
  return std::min(deadline, *stop_seen_ + std::chrono::milliseconds(k_stopping_wait_ms));
}

Result<std::vector<std::string>> RankBootstrap::all_gather(const std::string& mine) {
  return collective("all_gather", "", mine);
}

Status RankBootstrap::barrier(const std::string& name) { return collective("barrier", name, "").status(); }

Result<std::vector<std::string>> RankBootstrap::gather_to_root(const std::string& mine) {
  Result<std::vector<std::string>> all = collective("gather", "", mine);
  if (!all.ok() || rank() == 0) return all;
  return std::vector<std::string>{};
}

Result<std::vector<std::string>> RankBootstrap::collective(const std::string& op, const std::string& name,
                                                           const std::string& data) {
  if (!broken_.empty()) return error(StatusCode::unavailable, "bootstrap: an earlier collective failed: " + broken_);
  if (data.size() > k_max_bootstrap_item_bytes) {
    return error(StatusCode::invalid_argument, "bootstrap " + op + ": " + std::to_string(data.size()) +
                                                   " bytes over the " + std::to_string(k_max_bootstrap_item_bytes) +
                                                   "-byte limit");
  }
  Result<std::vector<std::string>> r =
      rank() == 0 ? coordinate(Request{op, name, data}) : ask_root(Request{op, name, data});
  if (!r.ok()) {
    if (broken_.empty()) broken_ = r.status().message();
    return r;
  }
  if (op == "all_gather" && r->size() != size()) {
    return error(StatusCode::corrupt, "bootstrap all_gather: " + std::to_string(r->size()) + " items for " +
                                          std::to_string(size()) + " ranks");
  }
  return r;
}

void RankBootstrap::fail_round(const std::string& why) {
  broken_ = why;
  const std::string reply = collective_failure_text(why);
  for (std::uint32_t r = 1; r < size(); ++r) {
    if (ended_[r].empty()) messenger_.send_to(r, reply).ignore();  // a rank that ended meanwhile: dropped
  }
}

Result<std::vector<std::string>> RankBootstrap::coordinate(const Request& mine) {
  const std::uint32_t n = size();
  std::vector<Request> got(n);
  std::vector<bool> have(n, false);
  got[0] = mine;
  have[0] = true;
  for (std::uint32_t r = 1; r < n; ++r) {
    if (!queued_[r].empty()) {
      got[r] = std::move(queued_[r].front());
      have[r] = true;
      queued_[r].pop_front();
    }
  }
  const auto fail = [&](const std::string& why) -> Status {
    const std::string text = "bootstrap " + round_text(mine.op, mine.name) + ": " + why;
    fail_round(text);
    return error(StatusCode::unavailable, text);
  };
  const Clock::time_point deadline = Clock::now() + timeout_;
  for (;;) {
    std::uint32_t missing = n;
    for (std::uint32_t r = 1; r < n && missing == n; ++r) {
      if (!have[r]) missing = r;
    }
    if (missing == n) break;
    if (!ended_[missing].empty()) return fail(ended_[missing]);
    if (Clock::now() >= wait_deadline(deadline)) {
      if (stop_seen_) return fail("stopped (SIGINT/SIGTERM) while rank " + std::to_string(missing) + " had not come");
      return fail("rank " + std::to_string(missing) + " did not take part within " +
                  std::to_string(timeout_.count() / 1000) + " s");
    }
    Result<std::optional<scenario::RankMessenger::Message>> m = messenger_.receive(ms_left(deadline));
    if (!m.ok()) return m.status();
    if (!m->has_value()) continue;
    scenario::RankMessenger::Message& msg = **m;
    if (msg.from == 0 || msg.from >= n) continue;
    if (msg.ended) {
      ended_[msg.from] = msg.payload;
      continue;
    }
    const json j = json::parse(msg.payload, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("op") || !j["op"].is_string() || !j.contains("name") ||
        !j["name"].is_string() || !j.contains("data") || !j["data"].is_string()) {
      return fail("rank " + std::to_string(msg.from) + " sent a malformed request");
    }
    Request req{j["op"].get<std::string>(), j["name"].get<std::string>(), j["data"].get<std::string>()};
    if (have[msg.from]) {
      queued_[msg.from].push_back(std::move(req));
    } else {
      got[msg.from] = std::move(req);
      have[msg.from] = true;
    }
  }
  std::vector<std::string> all(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    if (got[r].op != mine.op || got[r].name != mine.name) {
      return fail("rank " + std::to_string(r) + " is at " + round_text(got[r].op, got[r].name) +
                  " (the ranks' scripts or versions differ)");
    }
    all[r] = std::move(got[r].data);
  }
  const std::string reply = collective_answer_text(mine.op == "all_gather" ? all : std::vector<std::string>{});
  for (std::uint32_t r = 1; r < n; ++r) {
    if (Status st = messenger_.send_to(r, reply); !st.ok()) return fail(st.message());
  }
  if (mine.op == "barrier") return std::vector<std::string>{};
  return all;
}

Result<std::vector<std::string>> RankBootstrap::ask_root(const Request& mine) {
  const std::string what = "bootstrap " + round_text(mine.op, mine.name);
  if (Status st = messenger_.send_to(0, json{{"op", mine.op}, {"name", mine.name}, {"data", mine.data}}.dump());
      !st.ok()) {
    return error(st.code(), what + ": " + st.message());
  }
  const Clock::time_point deadline = Clock::now() + timeout_ + k_follower_grace;
  for (;;) {
    if (Clock::now() >= wait_deadline(deadline)) {
      if (stop_seen_) return error(StatusCode::unavailable, what + ": stopped (SIGINT/SIGTERM) before rank 0 answered");
      return error(StatusCode::timed_out, what + ": rank 0 did not answer within " +
                                              std::to_string((timeout_ + k_follower_grace).count() / 1000) + " s");
    }
    Result<std::optional<scenario::RankMessenger::Message>> m = messenger_.receive(ms_left(deadline));
    if (!m.ok()) return error(m.status().code(), what + ": " + m.status().message());
    if (!m->has_value() || (*m)->from != 0) continue;  // only rank 0 answers; other ranks' ends are its to tell
    if ((*m)->ended) return error(StatusCode::unavailable, what + ": " + (*m)->payload);
    return parse_collective_answer((*m)->payload, what, "rank 0");
  }
}

}  // namespace sluice::emulate
