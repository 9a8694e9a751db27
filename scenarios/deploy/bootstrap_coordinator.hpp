// BootstrapCoordinator: the launcher's side of SocketBootstrap
// (socket_bootstrap.hpp). It holds one channel per node process, answers a
// collective once every node has sent the same one (same op and name), and
// keeps the documents of the final `gather` as the run's results.
//
// serve() returns when every node has gathered, or with an error when a
// node's channel closes (its process died), nodes disagree on the
// collective, the deadline passes, or `stop_fd` becomes readable (the
// launcher's signal pipe: Ctrl-C). It answers the other nodes' pending
// requests with the error first, so they stop at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/deploy/line_channel.hpp"

namespace sluice::emulate {

// Requests one node may have queued (it waits for each answer, so more is a protocol error).
inline constexpr std::size_t k_max_pending_requests_per_node = 4;

class BootstrapCoordinator {
 public:
  explicit BootstrapCoordinator(std::vector<LineChannel> channels);

  Result<std::vector<std::string>> serve(LineChannel::Deadline deadline, int stop_fd);

  // Collectives completed so far (for messages).
  std::uint32_t rounds() const { return rounds_; }

 private:
  struct Request {
    std::string op;
    std::string name;
    std::string data;
  };

  // Answers the round when every node has a request; sets done_ at the gather.
  Status try_complete_round();
  void fail_all(const std::string& why);

  std::vector<LineChannel> channels_;
  std::vector<std::vector<Request>> pending_;
  std::optional<std::vector<std::string>> gathered_;
  std::uint32_t rounds_ = 0;
};

}  // namespace sluice::emulate
