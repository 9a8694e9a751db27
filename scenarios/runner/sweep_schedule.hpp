// A sweep spread over mpirun/srun ranks (issue 27).
//
// `mpirun -np N sluice run study.lua --backend sim` (or srun): every rank
// evaluates the script (scenarios/cli/run_command.cpp execs sluice-node's relay, which starts
// `sluice run` again with the environment of sweep_relay_wire.hpp). At each
// call to the runner (one sl.run), every rank holds the same point list:
// - each rank sends rank 0 the list's digest (sweep_digest: each point's
//   summary as results.json records it); a rank whose digest differs fails
//   the call on every rank, naming it;
// - rank 0 deals the points out longest first (point_cost) and on demand: a
//   rank with a free slot (its --jobs) asks rank 0 for the next point, runs it
//   in its child process as a one-machine run does, and sends rank 0 the
//   result;
// - rank 0 sees every result as it comes (progress, the results journal), and
//   once all points ended and every rank that is still running sent its
//   digest, sends every rank the whole result list: the call returns the same
//   results on every rank, in the points' order, and the script goes on the
//   same way everywhere. Only rank 0 writes results files and prints.
// - a point that fails or runs past its limit is reported with its point, as
//   on one machine; a rank that ends (dies, is killed) while running points
//   fails those points, naming the rank and how it ended; the others go on.
//   Rank 0 ending fails the call on the other ranks.
//
// The messages between the ranks' `sluice run` processes are JSON objects
// with a "t" (type) and the call's "sweep" number:
//   r -> 0  begin {digest, points}   next {}   done {index, result}
//   0 -> r  take {index}   none {}   abort {why}   results {results: [...]}
// A result is a ChildJobResult {ok, payload, error, log_tail}.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/runner/child_pool.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// The digest of a point list: FNV-1a 64 of each point's spec_summary,
// run_config, params, label and seed, in order, as 16 hex digits.
std::string sweep_digest(const std::vector<ScenarioSpec>& points);

// A point's estimated cost, for dealing the longest first: the file-system
// operations its workloads ask for (requests of block size, creates, opens),
// summed over their ranks. Only the order matters.
double point_cost(const ScenarioSpec& spec);

class SweepLink;  // frames over the relay's socket (sweep_schedule.cpp)

// Messages between the launcher's ranks outside a sweep's dealing: what the
// cluster backend's bootstrap runs on (scenarios/deploy/rank_bootstrap.hpp).
// Messages from one rank arrive in the order it sent them.
class RankMessenger {
 public:
  struct Message {
    std::uint32_t from = 0;
    bool ended = false;   // rank `from`'s process ended; payload says how
    std::string payload;  // what it sent (ended: how it ended)
  };
  virtual ~RankMessenger() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t size() const = 0;
  virtual Status send_to(std::uint32_t to, const std::string& payload) = 0;
  // The next message, waiting up to timeout_ms; nullopt when none came.
  virtual Result<std::optional<Message>> receive(int timeout_ms) = 0;
};

class SweepSchedule final : public RankMessenger {
 public:
  // The schedule of a relayed `sluice run` (the environment of
  // sweep_relay_wire.hpp); nullptr when the process was not started by a
  // relay. invalid_argument: the variables are present but malformed.
  static Result<std::unique_ptr<SweepSchedule>> from_environment();
  SweepSchedule(std::uint32_t rank, std::uint32_t size, int fd);
  ~SweepSchedule();
  SweepSchedule(const SweepSchedule&) = delete;
  SweepSchedule& operator=(const SweepSchedule&) = delete;

  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return size_; }
  // RankMessenger. A payload travels as a frame {"t": "rank", "body": ...};
  // frames of a sweep's dealing that arrive here are dropped (none are in
  // flight between calls to run).
  Status send_to(std::uint32_t to, const std::string& payload) override;
  Result<std::optional<Message>> receive(int timeout_ms) override;

  // One call to the runner, spread over the ranks: `pool` as run_points
  // made it (its source is set here), `body` runs point `index` in a child.
  // unavailable: another rank's point list differs, rank 0 ended, or the
  // relay's socket failed; the message says which.
  Result<std::vector<ChildJobResult>> run(const std::vector<ScenarioSpec>& points, const ChildPool::Body& body,
                                          ChildPoolOptions pool);

 private:
  std::uint32_t rank_;
  std::uint32_t size_;
  std::unique_ptr<SweepLink> link_;
  std::uint64_t sweeps_ = 0;            // calls so far (the "sweep" number of the next)
  std::vector<bool> ended_;             // by rank: its `sluice run` ended (rank 0 keeps it)
  std::vector<std::string> ended_how_;  // by rank: how
};

}  // namespace sluice::scenario
