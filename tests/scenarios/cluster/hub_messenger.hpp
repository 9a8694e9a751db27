// Hub: the mailboxes of n ranks in one process, and a RankMessenger over it:
// what the MPI relays do between the processes of `--backend cluster`, for
// tests of RankBootstrap and of what runs over it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/runner/sweep_schedule.hpp"

namespace sluice::emulate {

// Mailboxes of n ranks in one process: what the MPI relays do between processes.
class Hub {
 public:
  explicit Hub(std::uint32_t n) : boxes_(n) {}
  void post(std::uint32_t to, scenario::RankMessenger::Message m) {
    std::lock_guard lock(mu_);
    boxes_[to].push_back(std::move(m));
    cv_.notify_all();
  }
  // A rank's process ended: every other rank hears of it.
  void end(std::uint32_t rank, const std::string& how) {
    for (std::uint32_t r = 0; r < boxes_.size(); ++r) {
      if (r != rank) post(r, {rank, true, "rank " + std::to_string(rank) + " " + how});
    }
  }
  std::optional<scenario::RankMessenger::Message> take(std::uint32_t rank, int timeout_ms) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return !boxes_[rank].empty(); });
    if (boxes_[rank].empty()) return std::nullopt;
    auto m = std::move(boxes_[rank].front());
    boxes_[rank].pop_front();
    return m;
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(boxes_.size()); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::deque<scenario::RankMessenger::Message>> boxes_;
};

class HubMessenger final : public scenario::RankMessenger {
 public:
  HubMessenger(Hub& hub, std::uint32_t rank) : hub_(hub), rank_(rank) {}
  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return hub_.size(); }
  Status send_to(std::uint32_t to, const std::string& payload) override {
    hub_.post(to, {rank_, false, payload});
    return ok_status();
  }
  Result<std::optional<Message>> receive(int timeout_ms) override { return hub_.take(rank_, timeout_ms); }

 private:
  Hub& hub_;
  std::uint32_t rank_;
};

}  // namespace sluice::emulate
