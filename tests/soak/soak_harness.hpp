// The R1 soak (issue 9): seeded random fault runs against a small cluster,
// with invariants checked after each run. One template over the worlds that
// have TestWorld's surface (TestWorld; SimWorld in tests/sim; HwSuiteWorld
// in tests/hw), used by the per-world tests in this folder.
//
// One run, from its seed:
//   1. a cluster: mgmt, 1 metadata server, 4 storage servers with one target
//      each (with mirroring: buddy groups {1,2} and {3,4}, and the metadata
//      shard mirrored on a second server), 2 client nodes;
//   2. a random fault plan (core/faults) drawn from the seed, shifted to start
//      when the workload starts;
//   3. SoakWriter on each client rank while a FaultDriver applies the plan;
//   4. heal everything (without mirroring also revive every killed server;
//      with mirroring a killed storage server may stay dead), let the cluster
//      settle, then SoakVerifier reads every acknowledged write back;
//   5. invariants: lost = acknowledged writes not readable in full; corrupt
//      = reads that returned ok with wrong bytes (during the run or after);
//      hung = operations that did not end within k_op_deadline_ns (or never);
//      meta_bad = files whose chunk objects are missing or short on every
//      target that should hold them (BeeGFS fsck's "missing chunk" check);
//      with a server left dead, writes unreadable at first are read again
//      after reviving it: readable then = unavailable_while_dead (BeeGFS
//      does not switch a group over to a secondary that needs a resync),
//      still unreadable = lost.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/faults/world_fault_control.hpp"
#include "core/services/wire_convert.hpp"
#include "tests/soak/soak_workload.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::soak {

// Limits of one run (virtual time in TestEnv/SimEnv).
inline constexpr TimeNs k_soak_slice_ns = 100 * k_ns_per_ms;  // done() is checked this often
inline constexpr TimeNs k_soak_settle_ns = 5 * k_ns_per_s;    // after heal, before verifying
// Writers and verifiers must end within these budgets, else the run counts
// a hang. A write against a buddy group with no usable primary ends with an
// error only after ClientConfig::mirror_failovers + 1 rounds of RPC timeouts
// and maps refreshes (~36 s measured), so 24 writes and their read-backs
// may legitimately take ~30 min of virtual time; an hour leaves a margin
// and costs nothing while the world only waits on timers.
inline constexpr TimeNs k_soak_write_budget_ns = 3600 * k_ns_per_s;
inline constexpr TimeNs k_soak_verify_budget_ns = 3600 * k_ns_per_s;
inline constexpr std::size_t k_soak_log_lines = 12;              // world log lines kept for a failing run
inline constexpr std::uint64_t k_plan_rng_stream = 0x9'1A11ULL;  // the plan's Rng, apart from the world's

// Faults for the soak: some outlast a client's whole retry budget
// (RpcLimits::give_up_ns, 14 s: 2 + 4 + 8 s) by up to 4 s, so that writes
// fail and reads must wait for a revive or a switchover, not only for a retry.
inline faults::RandomPlanLimits soak_limits() {
  faults::RandomPlanLimits l;
  l.window_ns = 8 * k_ns_per_s;
  l.min_faults = 1;
  l.max_faults = 5;
  l.min_duration_ns = 100 * k_ns_per_ms;
  l.max_duration_ns = RpcLimits{}.give_up_ns() + 4 * k_ns_per_s;
  return l;
}

struct SoakConfig {
  std::uint64_t first_seed = 1;
  std::uint32_t runs = 100;
  bool mirroring = false;
  // Revive every killed service before the final check (without mirroring
  // only a live server can serve its target's data). Off: what the plan
  // left dead stays dead (with mirroring; or to show the check failing).
  bool revive_before_check = true;
  // With revive_before_check off: read what was unreadable again after
  // reviving everything, so that unavailable is told apart from lost.
  bool recheck_after_revive = true;
  faults::RandomPlanLimits limits = soak_limits();
  SoakWriterConfig writer;
  // Budgets of one run in the world's time (virtual in TestEnv/SimEnv,
  // where waiting costs nothing; HwEnv's tests give real-time ones).
  TimeNs write_budget_ns = k_soak_write_budget_ns;
  TimeNs verify_budget_ns = k_soak_verify_budget_ns;
  TimeNs settle_ns = k_soak_settle_ns;
};

struct SoakRunResult {
  std::uint64_t seed = 0;
  std::string plan;
  std::uint64_t acked = 0;
  std::uint64_t writes_failed = 0;
  std::uint64_t lost = 0;
  std::uint64_t corrupt = 0;
  std::uint64_t hung = 0;
  std::uint64_t meta_bad = 0;
  // Acknowledged writes unreadable while a server the plan left dead was
  // down, and readable once it came back (see soak_run).
  std::uint64_t unavailable_while_dead = 0;
  TimeNs write_phase_ns = 0;                // how long the writers ran, faults applying
  TimeNs longest_op_ns = 0;                 // the slowest client operation of the run
  std::vector<std::string> write_failures;  // why writes failed (allowed), the first few
  std::vector<std::string> problems;        // notes of the ledger, driver errors, setup failures
};

struct SoakTotals {
  std::uint32_t runs = 0;
  std::uint64_t acked = 0;
  std::uint64_t writes_failed = 0;
  std::uint64_t lost = 0;
  std::uint64_t corrupt = 0;
  std::uint64_t hung = 0;
  std::uint64_t meta_bad = 0;
  std::uint64_t unavailable_while_dead = 0;
  TimeNs longest_op_ns = 0;
  std::uint32_t failed_runs = 0;
  std::vector<std::string> first_failures;  // "seed N: ..." for the first few failing runs

  void add(const SoakRunResult& r) {
    // SLUICE_SOAK_VERBOSE=1: one line per run, with its plan.
    if (const char* v = std::getenv("SLUICE_SOAK_VERBOSE"); v != nullptr && std::string(v) == "1") {
      std::printf(
          "seed %llu: write phase %.3f s longest op %.3f s acked=%llu failed_writes=%llu lost=%llu corrupt=%llu "
          "hung=%llu "
          "meta_bad=%llu\n%s",
          static_cast<unsigned long long>(r.seed), static_cast<double>(r.write_phase_ns) * 1e-9,
          static_cast<double>(r.longest_op_ns) * 1e-9, static_cast<unsigned long long>(r.acked),
          static_cast<unsigned long long>(r.writes_failed), static_cast<unsigned long long>(r.lost),
          static_cast<unsigned long long>(r.corrupt), static_cast<unsigned long long>(r.hung),
          static_cast<unsigned long long>(r.meta_bad), r.plan.c_str());
      for (const std::string& p : r.problems) std::printf("  %s\n", p.c_str());
      for (std::size_t i = 0; i < r.write_failures.size() && i < 3; ++i) {
        std::printf("  write failed (allowed): %s\n", r.write_failures[i].c_str());
      }
    }
    ++runs;
    acked += r.acked;
    writes_failed += r.writes_failed;
    lost += r.lost;
    corrupt += r.corrupt;
    hung += r.hung;
    meta_bad += r.meta_bad;
    unavailable_while_dead += r.unavailable_while_dead;
    longest_op_ns = std::max(longest_op_ns, r.longest_op_ns);
    const bool failed = r.lost + r.corrupt + r.hung + r.meta_bad > 0 || !r.problems.empty();
    if (!failed) return;
    ++failed_runs;
    if (first_failures.size() < 5) {
      std::string line = "seed " + std::to_string(r.seed) + ": lost=" + std::to_string(r.lost) +
                         " corrupt=" + std::to_string(r.corrupt) + " hung=" + std::to_string(r.hung) +
                         " meta_bad=" + std::to_string(r.meta_bad) + "\n  plan:\n" + r.plan;
      for (const std::string& p : r.problems) line += "  " + p + "\n";
      first_failures.push_back(std::move(line));
    }
  }
  // The result line.
  std::string line(const std::string& world, bool mirroring) const {
    return "RESULT R1 world=" + world + " runs=" + std::to_string(runs) + " lost=" + std::to_string(lost) +
           " corrupt=" + std::to_string(corrupt) + " hung=" + std::to_string(hung) +
           " meta_bad=" + std::to_string(meta_bad) + " acked=" + std::to_string(acked) +
           " unavailable_while_dead=" + std::to_string(unavailable_while_dead) +
           " longest_op_ms=" + std::to_string(longest_op_ns / k_ns_per_ms) + " mirroring=" + (mirroring ? "on" : "off");
  }
};

// The cluster of one run.
inline testing::TestClusterSpec soak_cluster_spec(std::uint64_t seed, bool mirroring) {
  testing::TestClusterSpec spec;
  spec.world.seed = seed;
  spec.meta_shards = 1;
  spec.targets_per_server = {1, 1, 1, 1};
  spec.client_nodes = 2;
  spec.ranks_per_client_node = 1;
  spec.barrier = false;
  // Chunks small enough that one write spans several targets.
  spec.meta.default_chunk_bytes = 64 * k_kib;
  spec.meta.default_stripe_count = 2;
  if (mirroring) {
    spec.mgmt.buddy_groups = {proto::BuddyGroupDesc{1, 1, 2}, proto::BuddyGroupDesc{2, 3, 4}};
    spec.mgmt.check_interval_ns = 500 * k_ns_per_ms;
    spec.mgmt.probably_offline_after_ns = 1500 * k_ns_per_ms;
    spec.mgmt.offline_after_ns = 3 * k_ns_per_s;
    spec.storage.heartbeat_interval_ns = 500 * k_ns_per_ms;
    spec.storage.mirror.enabled = true;
    spec.meta.mirror_file_data = true;
    // The metadata shard is mirrored too, and kept on disk (a restarted
    // server finds its store; the primary resyncs it all the same).
    spec.meta_mirror = true;
    spec.durable_meta = true;
    spec.mgmt.meta_mirror = true;
    spec.meta.mirror.enabled = true;
    spec.meta.mirror.heartbeat_interval_ns = 500 * k_ns_per_ms;
  }
  return spec;
}

// The object that carries a world's fault primitives (FaultControl and the
// fault loop run on it): the world itself here; tests/soak's SimEnv file
// overloads it for SimWorld (its sim::SimRuntime), found by ADL.
template <class World>
World& fault_world(World& world) {
  return world;
}

// Who is who in a BasicTestCluster (its layout is in test_cluster.hpp).
template <class World>
faults::FaultDirectory soak_directory(testing::BasicTestCluster<World>& cluster) {
  faults::FaultDirectory d;
  d.mgmt.push_back(cluster.mgmt());
  for (const MetaService* m : cluster.metas()) d.meta.push_back(cluster.world().endpoint_of(*m));
  for (const StorageService* s : cluster.storages()) d.storage.push_back(cluster.world().endpoint_of(*s));
  for (TargetId t : cluster.targets()) {
    const NodeId node = cluster.world().node_of_target(t);
    d.target_node[t] = node;
    for (const Endpoint& ep : d.storage) {
      if (ep.node == node) d.target_server[t] = ep;
    }
  }
  for (NodeId n : cluster.client_nodes()) d.client.push_back(Endpoint{n, k_no_id});
  return d;
}

// A world's chunk object size: (world, target, file id) -> size, nullopt when absent.
template <class World>
using ObjectSizeFn = std::function<std::optional<std::uint64_t>(World&, TargetId, FileId)>;

// Files whose chunk objects are missing or short on every target that should hold them.
template <class World>
std::uint64_t check_metadata(World& world, const SoakLedger& ledger, const testing::TestClusterSpec& spec,
                             const ObjectSizeFn<World>& object_size, std::vector<std::string>& problems) {
  std::uint64_t bad_files = 0;
  for (const auto& [path, inode] : ledger.inodes) {
    Result<StripePattern> pattern = from_wire(inode.stripe, spec.meta.stripe_flavor);
    if (!pattern.ok()) {
      ++bad_files;
      problems.push_back("metadata: " + path + ": stripe: " + pattern.status().to_string());
      continue;
    }
    std::map<std::uint32_t, std::uint64_t> expected;  // stripe entry (target or group) -> object bytes
    for (const AckedWrite& w : ledger.acked) {
      if (w.path != path) continue;
      Result<std::vector<StripePiece>> pieces = pattern->map_range(w.offset, w.length);
      if (!pieces.ok()) continue;
      for (const StripePiece& p : *pieces) {
        expected[p.target] = std::max(expected[p.target], p.object_offset + p.length);
      }
    }
    bool file_ok = true;
    for (const auto& [entry, bytes] : expected) {
      std::vector<TargetId> holders = {entry};
      if (pattern->buddy_mirrored()) {
        holders.clear();
        for (const proto::BuddyGroupDesc& g : spec.mgmt.buddy_groups) {
          if (g.group == entry) holders = {g.primary, g.secondary};
        }
      }
      bool held = false;
      for (TargetId t : holders) {
        std::optional<std::uint64_t> size = object_size(world, t, inode.file_id);
        if (size && *size >= bytes) held = true;
      }
      if (!held) {
        file_ok = false;
        problems.push_back("metadata: " + path + " (file " + std::to_string(inode.file_id) + "): no target of stripe " +
                           "entry " + std::to_string(entry) + " holds " + std::to_string(bytes) + " bytes");
      }
    }
    if (!file_ok) ++bad_files;
  }
  return bad_files;
}

// One seeded run in `World`; make_cluster builds the cluster for the spec.
// on_start / on_heal, when given, run when the writers start and after the
// plan's faults were healed, before the verification: a world's own faults
// that the plan does not hold (HwEnv's faulty storage backends) begin and
// end there.
template <class World>
SoakRunResult soak_run(std::uint64_t seed, const SoakConfig& config, const ObjectSizeFn<World>& object_size,
                       const std::function<void(World&)>& on_heal = {},
                       const std::function<void(World&)>& on_start = {}) {
  SoakRunResult result;
  result.seed = seed;
  const testing::TestClusterSpec spec = soak_cluster_spec(seed, config.mirroring);
  testing::BasicTestCluster<World> cluster(spec);
  if (!cluster.ready().ok()) {
    result.problems.push_back("setup: " + cluster.ready().to_string());
    return result;
  }
  World& world = cluster.world();
  faults::FaultDirectory directory = soak_directory(cluster);
  Rng plan_rng = Rng(seed).fork(k_plan_rng_stream);
  Result<faults::FaultPlan> drawn = faults::random_fault_plan(plan_rng, directory.shape(), config.limits);
  if (!drawn.ok()) {
    result.problems.push_back("plan: " + drawn.status().to_string());
    return result;
  }
  faults::FaultPlan plan = std::move(drawn).value();
  result.plan = plan.to_string();
  const TimeNs t0 = world.now();
  for (faults::Fault& f : plan.faults) f.at_ns += t0;  // plan times count from the workload's start
  Result<faults::FaultDriver> made = faults::FaultDriver::create(plan);
  if (!made.ok()) {
    result.problems.push_back("driver: " + made.status().to_string());
    return result;
  }
  faults::FaultDriver driver = std::move(made).value();
  auto& primitives = fault_world(world);
  faults::WorldFaultControl<std::remove_reference_t<decltype(primitives)>> control(primitives, directory);

  auto ledger = std::make_shared<SoakLedger>();
  SoakWriterConfig writer = config.writer;
  writer.run_seed = seed;
  std::vector<ClientHost*> writers = cluster.launch(
      [&](std::uint32_t) -> std::unique_ptr<Workload> { return std::make_unique<SoakWriter>(writer, ledger); });
  if (on_start) on_start(world);
  // Hosts are read between events: HwEnv's services run on their own
  // threads, and run_until with no event to run is a look under the world's
  // event gate in every world (TestWorld and SimEnv just look).
  auto all_done = [&world](const std::vector<ClientHost*>& hosts) {
    return world.run_until(
        [&hosts] { return std::all_of(hosts.begin(), hosts.end(), [](const ClientHost* h) { return h->finished(); }); },
        0);
  };
  faults::run_with_faults(
      primitives, driver, control, [&] { return all_done(writers); }, t0 + config.write_budget_ns, k_soak_slice_ns);
  result.write_phase_ns = world.now() - t0;
  std::uint64_t unfinished = 0;
  world.run_until(
      [&] {
        unfinished = 0;  // may be asked more than once
        for (const ClientHost* h : writers) unfinished += h->finished() ? 0 : 1;
        return true;
      },
      0);
  const bool healed = driver.heal_all(control, !config.revive_before_check).ok();
  if (on_heal) on_heal(world);
  if (healed) world.run_for(config.settle_ns);
  for (const std::string& e : driver.errors()) result.problems.push_back("fault driver: " + e);

  // Verify with a fresh client on the first client node.
  std::vector<ClientHost*> verifier = {&cluster.add_host(std::make_unique<SoakVerifier>(ledger), 0, 1)};
  const TimeNs verify_until = world.now() + config.verify_budget_ns;
  while (!all_done(verifier) && world.now() < verify_until) world.run_for(k_soak_slice_ns);
  if (!all_done(verifier)) ++unfinished;

  // With a server left dead, what could not be read may only be
  // unavailable: BeeGFS switches a group over only to a secondary in good
  // state, so a primary that dies while its buddy needs a resync takes the
  // group's data with it until it returns. Revive everything and read those
  // writes again: what comes back was unavailable, what does not is lost.
  std::uint64_t unavailable = 0;
  std::uint64_t lost_for_good = 0;
  bool rechecked = false;
  std::vector<std::string> recheck_notes;
  {
    std::vector<AckedWrite> again;
    {
      std::lock_guard<std::mutex> lock(ledger->mu);
      again = ledger->lost_writes;
      lost_for_good = ledger->lost;
    }
    if (!again.empty() && !config.revive_before_check && config.recheck_after_revive) {
      if (driver.heal_all(control, false).ok()) world.run_for(config.settle_ns);
      auto second = std::make_shared<SoakLedger>();
      second->acked = again;
      std::vector<ClientHost*> rechecker = {&cluster.add_host(std::make_unique<SoakVerifier>(second), 0, 1)};
      const TimeNs recheck_until = world.now() + config.verify_budget_ns;
      while (!all_done(rechecker) && world.now() < recheck_until) world.run_for(k_soak_slice_ns);
      const bool rechecked_all = all_done(rechecker);  // before the ledger's lock: the look waits for handlers
      std::lock_guard<std::mutex> lock(second->mu);
      rechecked = true;
      recheck_notes = second->notes;
      result.hung += second->ops_over_deadline + second->open_ops.size();
      if (!rechecked_all) ++unfinished;
      lost_for_good = second->lost + (rechecked_all ? 0 : again.size() - second->verified);
      unavailable = again.size() - lost_for_good;
      result.corrupt += second->corrupt;
    }
  }
  std::lock_guard<std::mutex> lock(ledger->mu);
  result.acked = ledger->acked.size();
  result.writes_failed = ledger->writes_failed;
  result.longest_op_ns = ledger->longest_op_ns;
  result.write_failures = ledger->failure_samples;
  result.lost = lost_for_good;
  result.unavailable_while_dead = unavailable;
  result.corrupt += ledger->corrupt + ledger->readback_wrong;
  // Every operation still open now is past its deadline (the budgets are
  // longer than k_op_deadline_ns); a host that did not finish with none
  // open is stuck outside the client, which is a hang too.
  result.hung += ledger->ops_over_deadline + ledger->open_ops.size() + (ledger->open_ops.empty() ? unfinished : 0);
  for (const auto& [id, began] : ledger->open_ops) {
    result.problems.push_back("never ended: " + ledger->open_what[id] + " (began at " +
                              std::to_string((began - t0) / k_ns_per_ms) + " ms into the run)");
  }
  result.meta_bad = check_metadata(world, *ledger, spec, object_size, result.problems);
  for (const std::string& n : ledger->notes) {
    // After a recheck, the first verification's "lost" lines are superseded by the recheck's.
    if (!rechecked || !n.starts_with("lost: ")) result.problems.push_back(n);
  }
  for (const std::string& n : recheck_notes) result.problems.push_back("after revive: " + n);
  if (result.lost + result.corrupt + result.hung + result.meta_bad > 0) {
    // The world's last warnings and errors, to explain a failing run
    // (SLUICE_SOAK_LOG=1: every line, on stderr).
    const auto& logs = world.logs();
    if (const char* all = std::getenv("SLUICE_SOAK_LOG"); all != nullptr && std::string(all) == "1") {
      for (const std::string& line : logs) std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::vector<std::string> picked;
    for (auto it = logs.rbegin(); it != logs.rend() && picked.size() < k_soak_log_lines; ++it) {
      if (it->find(" warn ") != std::string::npos || it->find(" error ") != std::string::npos ||
          it->find(" info ") != std::string::npos) {
        picked.push_back(*it);
      }
    }
    for (auto it = picked.rbegin(); it != picked.rend(); ++it) result.problems.push_back("log: " + *it);
  }
  return result;
}

}  // namespace sluice::soak
