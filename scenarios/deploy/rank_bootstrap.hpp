// RankBootstrap: the Bootstrap of `sluice run --backend cluster` under
// mpirun/srun (cluster_point_run.hpp). Each rank's `sluice run` reaches the
// others through its MPI relay (scenario::RankMessenger, the sweep's socket:
// scenarios/runner/sweep_schedule.hpp); rank 0 coordinates: every other rank
// sends it its part of a collective and waits for the answer, rank 0 answers
// every rank once all have sent the same collective (op and name).
//   rank r -> 0   {"op": "all_gather" | "barrier" | "gather", "name", "data"}
//   0 -> rank r   {"ok": true, "all": [...]}  or  {"ok": false, "error": "..."}
// Every wait is bounded by the timeout given at construction; a rank whose
// process ended, a collective that differs, or a malformed message fails the
// collective on every rank that is still there, naming the rank. Once
// stop_requested says true (SIGINT/SIGTERM: the launcher is ending the job,
// and other ranks' relays may be gone), a wait lasts at most
// k_stopping_wait_ms more, so that every rank still ends its point, removes
// its directories and writes what it has.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/deploy/bootstrap.hpp"
#include "scenarios/runner/sweep_schedule.hpp"

namespace sluice::emulate {

inline constexpr int k_stopping_wait_ms = 2000;

class RankBootstrap final : public Bootstrap {
 public:
  RankBootstrap(scenario::RankMessenger& messenger, std::chrono::milliseconds timeout,
                std::function<bool()> stop_requested = {})
      : messenger_(messenger),
        timeout_(timeout),
        stop_requested_(std::move(stop_requested)),
        queued_(messenger.size()),
        ended_(messenger.size()) {}

  std::uint32_t rank() const override { return messenger_.rank(); }
  std::uint32_t size() const override { return messenger_.size(); }
  Result<std::vector<std::string>> all_gather(const std::string& mine) override;
  Status barrier(const std::string& name) override;
  Result<std::vector<std::string>> gather_to_root(const std::string& mine) override;

 private:
  struct Request {
    std::string op;
    std::string name;
    std::string data;
  };
  // The collective on this rank: everyone's data, in rank order (at rank 0;
  // elsewhere what rank 0 answered).
  Result<std::vector<std::string>> collective(const std::string& op, const std::string& name, const std::string& data);
  Result<std::vector<std::string>> coordinate(const Request& mine);
  Result<std::vector<std::string>> ask_root(const Request& mine);
  // Rank 0: tells every rank still there why the round failed; every later
  // collective then fails at once on every rank (broken_).
  void fail_round(const std::string& why);

  // The deadline of a wait that began with `deadline`, shortened once a stop was asked.
  std::chrono::steady_clock::time_point wait_deadline(std::chrono::steady_clock::time_point deadline);

  scenario::RankMessenger& messenger_;
  std::chrono::milliseconds timeout_;
  std::function<bool()> stop_requested_;
  std::optional<std::chrono::steady_clock::time_point> stop_seen_;
  std::vector<std::deque<Request>> queued_;  // rank 0: requests that came early, by rank
  std::vector<std::string> ended_;           // rank 0: how a rank ended ("" while it lives)
  std::string broken_;                       // why a collective failed ("" while none has)
};

}  // namespace sluice::emulate
