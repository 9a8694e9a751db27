#include "scenarios/deploy/bootstrap_coordinator.hpp"

#include <poll.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "scenarios/deploy/bootstrap.hpp"

namespace sluice::emulate {
namespace {

// A request's text field, "" when absent or not a string: json::value()
// would throw on a wrong type, and a node's malformed request must be an
// error, never an uncaught exception (issue 24). "op" is checked apart.
std::string string_field(const nlohmann::json& request, const char* key) {
  const auto it = request.find(key);
  return it != request.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

BootstrapCoordinator::BootstrapCoordinator(std::vector<LineChannel> channels)
    : channels_(std::move(channels)), pending_(channels_.size()) {}

void BootstrapCoordinator::fail_all(const std::string& why) {
  const std::string reply = collective_failure_text(why);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (LineChannel& c : channels_) {
    if (c.open()) c.send_line(reply, deadline).ignore();  // a node already gone needs no answer
  }
}

Status BootstrapCoordinator::try_complete_round() {
  for (const auto& p : pending_) {
    if (p.empty()) return ok_status();
  }
  const Request& first = pending_[0].front();
  for (std::size_t i = 1; i < pending_.size(); ++i) {
    const Request& r = pending_[i].front();
    if (r.op != first.op || r.name != first.name) {
      return error(StatusCode::invalid_argument, "bootstrap: node 0 is in " + first.op + " " + first.name +
                                                     " but node " + std::to_string(i) + " in " + r.op + " " + r.name);
    }
  }
  std::vector<std::string> all;
  for (auto& p : pending_) all.push_back(std::move(p.front().data));
  const std::string line = collective_answer_text(first.op == "all_gather" ? all : std::vector<std::string>{});
  const bool is_gather = first.op == "gather";
  for (auto& p : pending_) p.erase(p.begin());
  ++rounds_;
  if (is_gather) gathered_ = std::move(all);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (Status st = channels_[i].send_line(line, deadline); !st.ok()) {
      return error(st.code(), "bootstrap: node " + std::to_string(i) + ": " + st.message());
    }
  }
  return ok_status();
}

Result<std::vector<std::string>> BootstrapCoordinator::serve(LineChannel::Deadline deadline, int stop_fd) {
  const auto fail = [&](Status st) -> Result<std::vector<std::string>> {
    fail_all(st.message());
    return st;
  };
  while (!gathered_) {
    std::vector<pollfd> fds;
    for (LineChannel& c : channels_) fds.push_back({c.fd(), POLLIN, 0});
    fds.push_back({stop_fd, POLLIN, 0});
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return fail(error(StatusCode::timed_out, "bootstrap: the nodes did not finish before the deadline (" +
                                                   std::to_string(rounds_) + " collectives completed)"));
    }
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (n < 0 && errno != EINTR) return fail(error(StatusCode::io_error, "bootstrap: poll failed"));
    if (n <= 0) continue;
    if (stop_fd >= 0 && (fds.back().revents & POLLIN) != 0) {
      return fail(error(StatusCode::unavailable, "bootstrap: interrupted by a signal"));
    }
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Status st = channels_[i].read_available();
      while (std::optional<std::string> line = channels_[i].take_line()) {
        const nlohmann::json request = nlohmann::json::parse(*line, nullptr, false);
        if (request.is_discarded() || !request.is_object() || !request.contains("op") || !request["op"].is_string()) {
          return fail(error(StatusCode::corrupt, "bootstrap: malformed request from node " + std::to_string(i)));
        }
        if (pending_[i].size() >= k_max_pending_requests_per_node) {
          return fail(error(StatusCode::invalid_argument,
                            "bootstrap: node " + std::to_string(i) + " sent requests without waiting for answers"));
        }
        pending_[i].push_back(
            Request{string_field(request, "op"), string_field(request, "name"), string_field(request, "data")});
        if (Status round = try_complete_round(); !round.ok()) return fail(round);
      }
      if (!st.ok() && !gathered_) {
        channels_[i].close();
        return fail(error(StatusCode::unavailable,
                          "bootstrap: node " + std::to_string(i) + " went away (" + st.message() + ")"));
      }
    }
  }
  return *gathered_;
}

}  // namespace sluice::emulate
