// Helpers for the SimEnv tests: a child process per simulation (SimGrid runs
// one engine per process), small clusters, and a probe service that runs a
// script at start and records what comes back with the time it came.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.hpp"
#include "core/topology/topology.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "sim/sim_runtime.hpp"

namespace sluice::testing {

// The config a test's simulation runs with: `config`, carried in fluid mode
// (SimRuntimeConfig::fluid, issue 50) when the environment says
// SLUICE_TEST_SIM_MODE=fluid: ctest sim.fluid runs the simulator's tests so,
// soak.fluid the fault soak.
sim::SimRuntimeConfig test_config(sim::SimRuntimeConfig config = {});

// Runs body in a child process; GoogleTest failures in the child are printed
// there and fail the calling test here, as does a crash.
void in_child(const std::function<void()>& body);
// Runs body in a child process and returns the string it produced ("" and a
// test failure if the child failed).
std::string in_child_capture(const std::function<std::string()>& body);

struct SmallClusterSpec {
  std::uint32_t nodes = 2;
  std::uint32_t sockets = 1;
  std::uint32_t gpus = 1;
  std::uint32_t nics = 1;
  std::uint32_t nvmes = 1;
  double network_bytes_per_s = 1.25e9;  // 10 Gb/s
  TimeNs network_latency_ns = 1000;
  double nvme_read_bytes_per_s = 3.2e9;
  double nvme_write_bytes_per_s = 2.0e9;
};
// generic_machine copies on a star switch.
std::shared_ptr<const topo::Topology> small_cluster(const SmallClusterSpec& spec = {});

// Every rank's result of phase `phase`, from workloads with results()
// (FileSweep, MdBench), for summarize_phase.
template <class W>
std::vector<RankPhaseResult> phase_results(const std::vector<W*>& ranks, std::string_view phase) {
  std::vector<RankPhaseResult> out;
  for (const W* w : ranks) {
    for (const RankPhaseResult& r : w->results()) {
      if (r.phase == phase) out.push_back(r);
    }
  }
  return out;
}

// Records completions and deliveries with their times.
class Probe final : public Service {
 public:
  using Script = std::function<void(Probe&)>;
  Probe(Env& env, Script script) : env_(env), script_(std::move(script)) {}
  void start() override {
    if (script_) script_(*this);
  }
  void on_event(Event& event) override;
  std::string name() const override { return "probe"; }
  Env& env() { return env_; }

  std::map<OpId, Completion> completions;
  std::map<OpId, TimeNs> done_at_ns;
  std::vector<OpId> order;
  std::vector<Delivery> deliveries;
  std::vector<TimeNs> delivered_at_ns;
  std::function<void(Probe&, const Completion&)> on_completion;
  int handler_depth = 0;  // > 1 would mean re-entrant delivery
  int max_handler_depth = 0;

 private:
  Env& env_;
  Script script_;
};

}  // namespace sluice::testing
