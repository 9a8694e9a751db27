// SocketBootstrap: the Bootstrap of a node process started by `sluice
// emulate`. The launcher holds the other end of a stream socket (fd 3 in the
// node process) and answers each collective once every node has asked
// (bootstrap_coordinator.hpp). One JSON document per line:
//   node -> launcher   {"op": "all_gather" | "barrier" | "gather", "name": ..., "data": ...}
//   launcher -> node   {"ok": true, "all": [...]}  or  {"ok": false, "error": "..."}
// Every wait is bounded by the timeout given at construction.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/deploy/bootstrap.hpp"
#include "scenarios/deploy/line_channel.hpp"

namespace sluice::emulate {

class SocketBootstrap final : public Bootstrap {
 public:
  SocketBootstrap(int fd, std::uint32_t rank, std::uint32_t size, std::chrono::milliseconds timeout)
      : channel_(fd), rank_(rank), size_(size), timeout_(timeout) {}

  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return size_; }
  Result<std::vector<std::string>> all_gather(const std::string& mine) override;
  Status barrier(const std::string& name) override;
  Result<std::vector<std::string>> gather_to_root(const std::string& mine) override;

 private:
  Result<std::vector<std::string>> exchange(const std::string& op, const std::string& name, const std::string& data);

  LineChannel channel_;
  std::uint32_t rank_;
  std::uint32_t size_;
  std::chrono::milliseconds timeout_;
};

}  // namespace sluice::emulate
