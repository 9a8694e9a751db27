#include "scenarios/cli/run_command.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_command.hpp"
#include "analysis/plotter.hpp"
#include "base/run_marker.hpp"
#include "core/common/byte_size.hpp"
#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/cuda_gpu_memory.hpp"
#include "hw_backends/storage_backend.hpp"
#include "scenarios/calibrate/script_compare.hpp"
#include "scenarios/deploy/cluster_point_run.hpp"
#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/deploy/rank_bootstrap.hpp"
#include "scenarios/lua/field_tables.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "scenarios/netns/dead_runs.hpp"
#include "scenarios/netns/emulated_point_run.hpp"
#include "scenarios/runner/results_journal.hpp"
#include "scenarios/runner/results_writer.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/sweep_relay_wire.hpp"
#include "scenarios/runner/sweep_schedule.hpp"
#include "transports/shared_secret.hpp"
#include "transports/transport.hpp"

namespace sluice::cli {
namespace {

struct RunArgs {
  std::string script;
  std::string backend;       // "" = the script's choice
  std::string sim_coalesce;  // "" = the script's choice (sl.run sim_coalesce), "on", "off"
  std::string sim_mode;      // "" = the script's choice (sl.run sim_mode), "chunk", "fluid", "auto"
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
  std::string out_dir = "out";
  std::uint32_t jobs = 0;
  double point_timeout_s = scenario::k_default_point_timeout_s;
  bool check_claims = false;  // exit 1 when a claim of the script does not hold
  bool report = false;        // also write OUT/report.md with its plots (sluice report)
  std::string report_phase = "read";
  // Hardware runs (scenario::HwRunOptions).
  bool keep = false;
  bool insecure = false;
  std::string shared_secret_file;
  std::string meta_store = "rocksdb";
  std::string transport = "tcp";
  std::string storage_backend = "posix";
  std::string storage_root;             // "": HwRunOptions' default (the system temp folder)
  std::string shared_secret;            // read from shared_secret_file by run_command
  std::string listen = "auto";          // cluster: this host's address (emulate::listen_address)
  std::string node_memory;              // hw, cluster: each node's memory limit ("" = the default)
  std::uint64_t node_memory_bytes = 0;  // parsed from node_memory by run_command (0: the default)
};

// --node-memory's bounds: below 16 MiB no chunk buffer of a sweep fits; above 16 TiB no host has it.
constexpr std::uint64_t k_min_node_memory_bytes = 16ULL << 20;
constexpr std::uint64_t k_max_node_memory_bytes = 16ULL << 40;

// The signal (SIGINT, SIGTERM) that asked `sluice run` to stop, 0 while none
// did. A global because a signal handler can reach nothing else; only
// note_stop_signal writes it, the runner reads it (RunnerOptions::stop_requested).
volatile std::sig_atomic_t g_stop_signal = 0;

void note_stop_signal(int signal_number) { g_stop_signal = signal_number; }

// SIGINT and SIGTERM stop the run cleanly (the runner kills the points'
// children, the finished points are written, marked incomplete); a second
// one of the same kind ends sluice at once (SA_RESETHAND). No SA_RESTART, so
// the runner's wait wakes up. A rank's `sluice run` under the MPI relay is
// not interactive: it gets SIGTERM from the relay, then again from
// PR_SET_PDEATHSIG when the launcher ends the relay, and must still write
// its partial results and remove its directories, so every one is only noted
// (the launcher's SIGKILL stays the hard stop). Its stderr is a pipe to the
// launcher's daemon, gone by then: SIGPIPE is ignored, so that a last log
// line fails to write instead of killing it.
void catch_stop_signals(bool relayed) {
  struct sigaction action {};
  action.sa_handler = note_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = relayed ? 0 : SA_RESETHAND;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  if (relayed) ::signal(SIGPIPE, SIG_IGN);
}

// "42 s", "3 min 5 s", "2.5 h": a wall-clock duration for people.
std::string duration_text(double s) {
  constexpr double k_s_per_min = 60, k_s_per_h = 3600;
  if (s < 2 * k_s_per_min) return fmt::format("{:.0f} s", s);
  if (s < 2 * k_s_per_h)
    return fmt::format("{:.0f} min {:.0f} s", std::floor(s / k_s_per_min), std::fmod(s, k_s_per_min));
  return fmt::format("{:.1f} h", s / k_s_per_h);
}

// Progress of `sluice run` on stderr, per call to the runner (one sl.run and
// backend). On a terminal: one line rewritten in place once the call has
// taken k_quiet_s. Elsewhere (a log, CI): a plain line every
// k_plain_interval_s. Both give the points done, the point running (its
// label, else its params), the simulated time and the rate of the finished
// points and, once a point has finished, an estimate of the time left.
class ProgressLine {
 public:
  ProgressLine() : terminal_(::isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // A call to the runner starts with these points (kept by the caller until the call returns).
  void begin_call(const std::vector<scenario::ScenarioSpec>& points) {
    points_ = &points;
    ++calls_;
    next_plain_s_ = k_plain_interval_s;
  }
  void update(const scenario::RunnerProgress& p) {
    if (terminal_) {
      if (p.wall_s < k_quiet_s) return;
      fmt::print(stderr, "\r\033[K{}", text(p));
      shown_ = true;
    } else {
      if (p.wall_s < next_plain_s_) return;
      while (next_plain_s_ <= p.wall_s) next_plain_s_ += k_plain_interval_s;
      fmt::print(stderr, "{}\n", text(p));
    }
    std::fflush(stderr);
  }
  void clear() {
    if (!shown_) return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  static constexpr double k_quiet_s = 1.0;
  static constexpr double k_plain_interval_s = 30.0;
  static constexpr std::size_t k_point_chars = 48;  // a running point's description is cut to this

  std::string point_text(std::size_t index) const {
    std::string what;
    if (points_ != nullptr && index < points_->size()) {
      const scenario::ScenarioSpec& spec = (*points_)[index];
      what = spec.label;
      if (what.empty()) {
        for (const auto& [k, v] : spec.params) what += (what.empty() ? "" : " ") + k + "=" + v;
      }
    }
    if (what.size() > k_point_chars) what = what.substr(0, k_point_chars - 3) + "...";
    return fmt::format("point {}{}", index + 1, what.empty() ? "" : " (" + what + ")");
  }
  std::string text(const scenario::RunnerProgress& p) const {
    std::string line = fmt::format("sluice: sl.run #{}: {}/{} points done{}", calls_, p.done, p.points,
                                   p.failed > 0 ? fmt::format(" ({} failed)", p.failed) : "");
    if (!p.running_points.empty()) {
      line += ", running " + point_text(p.running_points.front());
      if (p.running_points.size() > 1) line += fmt::format(" and {} more", p.running_points.size() - 1);
    }
    line += fmt::format(", {} elapsed", duration_text(p.wall_s));
    if (p.done > 0 && p.wall_s > 0) {
      const double per_point_s = p.wall_s / static_cast<double>(p.done);
      line += fmt::format(", {:.1f} s simulated, {:.2f} points/min, about {} left", p.simulated_s_done,
                          60.0 / per_point_s, duration_text(per_point_s * static_cast<double>(p.points - p.done)));
    }
    return line;
  }

  bool terminal_;
  bool shown_ = false;
  const std::vector<scenario::ScenarioSpec>* points_ = nullptr;
  std::size_t calls_ = 0;
  double next_plain_s_ = k_plain_interval_s;
};

// What runs whose process died left (killed, stopped by SIGINT/SIGTERM while
// a point ran: namespaces, mounts, run directories under /tmp and `root`;
// scenarios/netns/dead_runs.hpp): removed, each said on stderr.
void sweep_dead_runs(const std::string& root) {
  sluice::emulate::sweep_dead_runs({root},
                                   [](std::string_view line) { fmt::print(stderr, "sluice: dead run: {}\n", line); });
}

// The multi-process deployment's options (--backend cluster and emulate) from the command line.
sluice::emulate::DeploymentOptions deployment_options(const RunArgs& args) {
  sluice::emulate::DeploymentOptions d;
  d.storage_backend = args.storage_backend;
  d.meta_store = args.meta_store;
  d.transport = args.transport;
  if (args.node_memory_bytes > 0) d.node_memory_limit_bytes = args.node_memory_bytes;
  d.insecure = args.insecure;
  d.shared_secret_file = args.shared_secret_file;
  d.keep = args.keep;
  d.gpu_memory = sluice::hw::cuda::gpu_memory_ops();
  d.gpu_available = [] { return sluice::hw::cuda::cuda_available(); };
  return d;
}

// What a call to the runner gets for `backend`: hardware points one at a
// time with GPU memory, emulated points on the netns cluster.
scenario::RunnerOptions runner_call_options(const RunArgs& args, scenario::Backend backend,
                                            scenario::RunnerOptions call) {
  // Hardware runs are measurements: one at a time unless asked otherwise.
  if (backend == scenario::Backend::hw && args.jobs == 0) call.jobs = 1;
  // GPU memory for hardware runs (hw_backends/cuda), handed to the world
  // of each point (HwWorldConfig::gpu_memory); CUDA is first touched in the
  // child that runs the point, since it does not survive a fork after it
  // was initialised. Without a device (or a CUDA build) a workload's GPU
  // buffer fails to allocate with the reason, and the run says so.
  if (backend == scenario::Backend::hw) {
    call.hw.gpu_memory = sluice::hw::cuda::gpu_memory_ops();
    call.hw.keep = args.keep;
    call.hw.insecure = args.insecure;
    call.hw.shared_secret = args.shared_secret;
    call.hw.meta_store = args.meta_store;
    call.hw.transport = args.transport;
    call.hw.storage_backend = args.storage_backend;
    if (args.node_memory_bytes > 0) call.hw.node_memory_limit_bytes = args.node_memory_bytes;
    if (!args.storage_root.empty()) call.hw.temp_root = args.storage_root;
    sweep_dead_runs(call.hw.temp_root);
    call.run_point = [hw = call.hw](const scenario::ScenarioSpec& spec, scenario::Backend b) {
      scenario::RunnerOptions point;
      point.hw = hw;
      scenario::RunResult r = scenario::run_point(spec, b, point);
      // Said only to runs that ask for GPU memory (a CPU-only run needs no GPU).
      if (const Status gpu = sluice::hw::cuda::cuda_available(); !gpu.ok() && scenario::uses_gpu_memory(spec)) {
        r.log_tail.push_back("GPU memory: " + gpu.message());
      }
      return r;
    };
  }
  // Emulated runs: the netns cluster (scenarios/netns/emulated_point_run.hpp), one at a time.
  if (backend == scenario::Backend::emulate) {
    call.jobs = 1;
    sweep_dead_runs(args.storage_root);
    sluice::emulate::EmulatedPointOptions o;
    // CUDA is first touched in a rank, after the forks (it does not survive one).
    o.deployment = deployment_options(args);
    o.storage_root = args.storage_root;
    o.max_wait_s = static_cast<std::uint32_t>(std::min(args.point_timeout_s, 86400.0));
    // The nodes' log lines, as a cluster run's ranks print theirs.
    o.log = [](std::string_view line) { fmt::print(stderr, "{}\n", line); };
    call.run_point = [o](const scenario::ScenarioSpec& spec, scenario::Backend) {
      return sluice::emulate::EmulatedPointRun::run(spec, o);
    };
  }
  return call;
}

scenario::ScriptOptions script_options(const RunArgs& args) {
  scenario::ScriptOptions options;
  options.sets = parse_sets(args.sets);
  options.seed = args.seed;
  if (!args.backend.empty()) {
    Result<scenario::Backend> b = scenario::parse_backend(args.backend);
    if (!b.ok()) throw UsageError("--backend: " + b.status().message());
    options.backend = *b;
    const auto& allowed = sluice::emulate::k_cluster_transports;
    if ((*b == scenario::Backend::cluster || *b == scenario::Backend::emulate) &&
        std::find(allowed.begin(), allowed.end(), args.transport) == allowed.end()) {
      throw UsageError("--transport " + args.transport + ": --backend " + args.backend +
                       " runs each node as a process of its own, on one host or several: use tcp, tcp+shm (shared "
                       "memory to the node processes of the same host, tcp to the rest) or ucx");
    }
  }
  options.out_dir = args.out_dir;
  options.draw_plot = [](const scenario::ScriptPlot& plot) -> Result<std::vector<std::string>> {
    analysis::PlotSpec spec;
    spec.title = plot.title;
    spec.x_label = plot.x_label;
    spec.y_label = plot.y_label;
    spec.log_x = plot.log_x;
    for (const auto& s : plot.series) spec.series.push_back(analysis::PlotSeries{s.title, s.x, s.y, {}, {}});
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(plot.out_base).parent_path(), ec);
    return analysis::render_plot(spec, plot.out_base);
  };
  options.compare = calibrate::compare_script_runs;
  return options;
}

// Runs the script's points through the runner, keeping the results files up to date as points finish.
// Spread over mpirun/srun ranks (`sweep`, else null): simulated points only.
class ScriptRunner {
 public:
  ScriptRunner(const RunArgs& args, ProgressLine& progress, scenario::SweepSchedule* sweep)
      : args_(args), progress_(progress), journal_(args.out_dir), sweep_(sweep) {}

  Result<std::vector<scenario::RunResult>> run(const std::vector<scenario::ScenarioSpec>& points,
                                               scenario::Backend backend) {
    scenario::RunnerOptions call;
    call.jobs = args_.jobs;
    call.point_timeout_s = args_.point_timeout_s;
    if (backend == scenario::Backend::cluster) {
      Status st = cluster_call(call);
      if (!st.ok()) return st;
    } else if (sweep_ != nullptr) {
      if (backend != scenario::Backend::sim) {
        return error(StatusCode::invalid_argument,
                     "sluice run under mpirun/srun spreads simulated points over the ranks; a " +
                         std::string(scenario::to_string(backend)) +
                         " run is not spread (run it without the launcher; real nodes under MPI: --backend cluster)");
      }
      call.sweep = sweep_;
    }
    if (sweep_ == nullptr || sweep_->rank() == 0) {
      call.progress = [this](const scenario::RunnerProgress& p) {
        progress_.update(p);
        note(journal_.flush_if_due());
      };
    }
    call.point_done = [this](std::size_t index, const scenario::RunResult& r) { note(journal_.point_done(index, r)); };
    call.stop_requested = [] { return g_stop_signal != 0; };
    // --sim-coalesce and --sim-mode override each point's sl.run sim_coalesce
    // and sim_mode (recorded in its results).
    std::vector<scenario::ScenarioSpec> overridden;
    const bool override_sim = !args_.sim_coalesce.empty() || !args_.sim_mode.empty();
    if (override_sim) {
      overridden = points;
      for (scenario::ScenarioSpec& p : overridden) {
        if (!args_.sim_coalesce.empty()) p.sim_coalesce = args_.sim_coalesce == "on";
        if (!args_.sim_mode.empty()) p.sim_mode = scenario::value_named(scenario::sim_mode_names(), args_.sim_mode);
      }
    }
    const std::vector<scenario::ScenarioSpec>& run_these = override_sim ? overridden : points;
    progress_.begin_call(run_these);
    note(journal_.begin_call(run_these.empty() ? std::string() : run_these.front().scenario));
    Result<std::vector<scenario::RunResult>> r =
        scenario::run_points(run_these, backend, runner_call_options(args_, backend, std::move(call)));
    progress_.clear();
    if (backend == scenario::Backend::emulate) sweep_dead_runs(args_.storage_root);
    journal_.end_call(r.ok());
    return r;
  }
  scenario::ResultsJournal& journal() { return journal_; }

 private:
  // --backend cluster: every rank runs each point together (scenarios/deploy/cluster_point_run.hpp),
  // through one bootstrap over the launcher's relay for the whole script.
  Status cluster_call(scenario::RunnerOptions& call) {
    if (sweep_ == nullptr) {
      return error(StatusCode::invalid_argument,
                   "--backend cluster runs under a launcher, one rank per node of the study's cluster: "
                   "mpirun -np N sluice run SCRIPT --backend cluster (or srun); on one machine, "
                   "--backend emulate runs the same nodes in network namespaces");
    }
    if (!bootstrap_) {
      // Directories of this host's ranks that died in an earlier run (hw_point_run.hpp's marks).
      sweep_dead_runs(args_.storage_root);
      const auto timeout = std::chrono::seconds(static_cast<std::int64_t>(args_.point_timeout_s));
      bootstrap_ =
          std::make_unique<sluice::emulate::RankBootstrap>(*sweep_, timeout, [] { return g_stop_signal != 0; });
    }
    sluice::emulate::ClusterPointOptions o;
    o.listen = args_.listen;
    o.storage_root = args_.storage_root.empty() ? scenario::HwRunOptions{}.temp_root : args_.storage_root;
    o.deployment = deployment_options(args_);
    o.max_wait_s = static_cast<std::uint32_t>(std::min(args_.point_timeout_s, 86400.0));
    const std::uint32_t rank = sweep_->rank();
    o.log = [rank](std::string_view line) { fmt::print(stderr, "[rank {}] {}\n", rank, line); };
    o.stop_requested = [] { return g_stop_signal != 0; };
    call.run_point = [this, o](const scenario::ScenarioSpec& spec, scenario::Backend) {
      return sluice::emulate::run_cluster_point(spec, *bootstrap_, o);
    };
    return ok_status();
  }

  // A results file that could not be rewritten while points run is said once; the final write throws.
  void note(const Status& s) {
    if (s.ok() || warned_) return;
    progress_.clear();
    fmt::print(stderr, "sluice: warning: {}\n", s.message());
    warned_ = true;
  }

  const RunArgs& args_;
  ProgressLine& progress_;
  scenario::ResultsJournal journal_;
  scenario::SweepSchedule* sweep_;
  std::unique_ptr<sluice::emulate::RankBootstrap> bootstrap_;  // cluster: made at the first call
  bool warned_ = false;
};

// A rank other than 0 of a sweep over ranks evaluates the script as rank 0
// does but says nothing and writes nothing where the user looks: its stdout
// goes to /dev/null and its files to a private directory, removed at the end
// (rank 0 prints and writes every point's results).
class QuietRank {
 public:
  explicit QuietRank(RunArgs& args) {
    const std::filesystem::path base =
        std::filesystem::temp_directory_path() / (std::string(sluice::emulate::k_rank_dir_prefix) + "XXXXXX");
    std::string pattern = base.string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("sweep over ranks: cannot make a private directory " + pattern + ": " +
                               std::strerror(errno));
    }
    dir_ = pattern;
    sluice::base::write_run_marker(dir_).ignore();  // without it a killed rank's directory is never swept
    args.out_dir = dir_;
    args.report = false;
    std::fflush(stdout);
    if (std::FILE* null = std::freopen("/dev/null", "w", stdout); null == nullptr) {
      throw std::runtime_error(std::string("sweep over ranks: /dev/null: ") + std::strerror(errno));
    }
  }
  ~QuietRank() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  QuietRank(const QuietRank&) = delete;
  QuietRank& operator=(const QuietRank&) = delete;

 private:
  std::string dir_;
};

// After SIGINT/SIGTERM: the finished points are written, marked incomplete; exit 128 + the signal.
int stopped_run(scenario::ResultsJournal& journal, const std::string& out_dir, const std::string& storage_root) {
  const int signal_number = g_stop_signal;
  // The killed points' chunk files.
  sweep_dead_runs(storage_root);
  const Status written = journal.write_stopped();
  fmt::print(stderr, "\nsluice: stopped by {}: {}\n", signal_number == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM",
             written.ok() ? fmt::format("{} finished point{} written to {}/results.json and results.csv, "
                                        "marked incomplete",
                                        journal.finished_count(), journal.finished_count() == 1 ? "" : "s", out_dir)
                          : "the finished points could not be written: " + written.message());
  return k_exit_signal_base + signal_number;
}

// The table, the seeds and where the files went.
void print_run_summary(const scenario::ScriptOutcome& outcome, const std::string& out_dir) {
  const std::vector<scenario::RunResult>& results = outcome.results;
  if (results.empty()) {
    fmt::print("\nscenario {} made no runs\n", outcome.scenario);
  } else {
    fmt::print("\n{}", scenario::results_table(results));
  }
  std::set<std::uint64_t> seeds;
  for (const auto& r : results) seeds.insert(r.spec.seed);
  std::string seed_text;
  for (std::uint64_t s : seeds) seed_text += (seed_text.empty() ? "" : ", ") + std::to_string(s);
  fmt::print("scenario {}: seed {}; wrote {}/results.json, results.csv{} and progress.csv\n", outcome.scenario,
             seed_text.empty() ? "-" : seed_text, out_dir, outcome.mlperf.empty() ? "" : ", mlperf.csv");
}

// The same report `sluice report OUT/results.json --out OUT` writes.
void write_report(const RunArgs& args, const std::string& scenario_name) {
  analysis::ReportArgs report;
  report.files = {(std::filesystem::path(args.out_dir) / "results.json").string()};
  report.out_dir = args.out_dir;
  report.phase = args.report_phase;
  report.title = "sluice run " + scenario_name;
  std::ostringstream said;
  if (analysis::run_report(report, said, said) != k_exit_ok) {
    throw std::runtime_error("writing the report: " + said.str());
  }
  fmt::print("{}", said.str());
}

// Failed runs and claims that do not hold: said on stderr; the exit code.
int run_verdict(const scenario::ScriptOutcome& outcome, bool check_claims) {
  std::size_t failed = 0;
  for (const auto& r : outcome.results) {
    if (r.ok) continue;
    if (failed++ == 0) fmt::print(stderr, "sluice: run failed: {}\n", r.error);
  }
  if (failed > 1) fmt::print(stderr, "sluice: {} runs failed in all (see the table)\n", failed);
  std::size_t broken = 0;
  for (const auto& c : outcome.claims) broken += c.holds ? 0 : 1;
  if (!outcome.claims.empty()) {
    fmt::print("claims: {} of {} hold\n", outcome.claims.size() - broken, outcome.claims.size());
    for (const auto& c : outcome.claims) {
      if (!c.holds) fmt::print(stderr, "sluice: claim does not hold ({}): {}: {:.4g}\n", c.where, c.text, c.measured);
    }
  }
  if (failed == 0 && broken > 0 && check_claims) return k_exit_failed;
  return failed == 0 ? k_exit_ok : k_exit_failed;
}

int run_command(const RunArgs& given) {
  RunArgs args = given;
  // A relative --storage-root is taken from the current directory, here, before
  // any rank or node gets it (a cluster config's storage_root must be absolute).
  if (!args.storage_root.empty())
    args.storage_root = std::filesystem::absolute(args.storage_root).lexically_normal().string();
  if (!args.shared_secret_file.empty()) {
    if (args.insecure) throw UsageError("--shared-secret-file and --insecure contradict each other");
    Result<std::string> secret = transport::read_shared_secret_file(args.shared_secret_file);
    if (!secret.ok()) throw UsageError("--shared-secret-file: " + secret.status().message());
    args.shared_secret = std::move(secret).value();
  }
  if (!args.node_memory.empty()) {
    Result<std::uint64_t> bytes = parse_size(args.node_memory);
    if (!bytes.ok()) throw UsageError("--node-memory: " + bytes.status().message());
    if (*bytes < k_min_node_memory_bytes || *bytes > k_max_node_memory_bytes) {
      throw UsageError("--node-memory: " + args.node_memory + " is outside " + format_size(k_min_node_memory_bytes) +
                       " .. " + format_size(k_max_node_memory_bytes));
    }
    args.node_memory_bytes = *bytes;
  }
  Result<std::unique_ptr<scenario::SweepSchedule>> sweep = scenario::SweepSchedule::from_environment();
  if (!sweep.ok()) throw std::runtime_error(sweep.status().message());
  std::optional<QuietRank> quiet;
  if (*sweep && (*sweep)->rank() != 0) quiet.emplace(args);
  scenario::ScriptOptions options = script_options(args);
  ProgressLine progress;
  ScriptRunner runner(args, progress, sweep->get());
  options.run = [&runner](const std::vector<scenario::ScenarioSpec>& points, scenario::Backend backend) {
    return runner.run(points, backend);
  };
  catch_stop_signals(*sweep != nullptr);
  Result<scenario::ScriptOutcome> outcome = scenario::run_script(args.script, options);
  progress.clear();
  if (g_stop_signal != 0) return stopped_run(runner.journal(), args.out_dir, args.storage_root);
  if (!outcome.ok()) {
    // What finished stays on disk, marked incomplete.
    if (runner.journal().finished_count() > 0) runner.journal().write_stopped().ignore();
    throw_script_status(outcome.status());
  }
  const scenario::ScriptFindings findings{outcome->headlines, outcome->claims, outcome->mlperf};
  if (Status s = runner.journal().write_final(outcome->scenario, outcome->results, findings); !s.ok()) {
    throw std::runtime_error(s.to_string());
  }
  print_run_summary(*outcome, args.out_dir);
  if (args.report && !outcome->results.empty()) write_report(args, outcome->scenario);
  return run_verdict(*outcome, args.check_claims);
}

// The ranks of the MPI launcher that started this process (mpirun: Open MPI's
// OMPI_COMM_WORLD_SIZE; MPICH/Hydra's PMI_SIZE; srun's
// SLURM_STEP_NUM_TASKS), 1 when none did. SLUICE_SWEEP_RANKS=off says 1
// whatever the launcher (each rank then runs the whole study alone).
std::uint64_t launcher_ranks() {
  const char* off = std::getenv("SLUICE_SWEEP_RANKS");
  if (off != nullptr && std::string_view(off) == "off") return 1;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    const char* text = std::getenv(name);
    if (text == nullptr) continue;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(text, &end, 10);
    if (end != text && *end == '\0' && n > 1) return n;
  }
  return 1;
}

// `sluice run`'s options for the simulator.
void add_sim_options(CLI::App& run_cmd, RunArgs& args) {
  run_cmd
      .add_option("--sim-coalesce", args.sim_coalesce,
                  "sim: merge each request's chunk pieces on one target (on) or not (off); default: the "
                  "script's sl.run sim_coalesce")
      ->check(CLI::IsMember({"on", "off"}));
  run_cmd
      .add_option("--sim-mode", args.sim_mode,
                  "sim: chunk (every communication a SimGrid activity), fluid (flows solved less often: data "
                  "scale) or auto (fluid where it measures no distortion, else per chunk); default: the "
                  "script's sl.run sim_mode")
      ->check(CLI::IsMember({"chunk", "fluid", "auto"}));
}

}  // namespace

// `sluice run`'s options.
void add_run_command(CLI::App& app, CommandExit& exit) {
  auto shared = std::make_shared<RunArgs>();
  RunArgs& args = *shared;
  auto* run_cmd = app.add_subcommand("run", "run a Lua scenario; write OUT/results.json and OUT/results.csv");
  run_cmd->add_option("script", args.script, "the scenario script (.lua)")->required()->check(CLI::ExistingFile);
  run_cmd->add_option("--backend", args.backend, "where the runs go (default: the script's choice)")
      ->check(CLI::IsMember({"sim", "hw", "emulate", "cluster"}));
  run_cmd->add_option("--set", args.sets, "override a declared parameter: name=value (repeatable)");
  add_sim_options(*run_cmd, args);
  run_cmd->add_option("--seed", args.seed, "the seed of every run (default: the script's, else 1)");
  run_cmd->add_option("--out", args.out_dir, "where results and reports go")->capture_default_str();
  run_cmd->add_flag("--check-claims", args.check_claims,
                    "exit 1 when a shape claim of the script (sl.claim) does not hold");
  run_cmd->add_flag("--report", args.report, "also write OUT/report.md with throughput plots (as sluice report)");
  run_cmd->add_option("--report-phase", args.report_phase, "the phase the report plots")->capture_default_str();
  run_cmd->add_option("--jobs", args.jobs, "run points at once (default: the number of cores in sim, 1 on hw)");
  run_cmd->add_option("--point-timeout", args.point_timeout_s, "wall-clock limit of one run point, in seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  run_cmd->add_flag("--keep", args.keep,
                    "hw, emulate, cluster: keep each run's directory (chunk files, metadata) for inspection");
  run_cmd->add_flag(
      "--insecure", args.insecure,
      "hw, emulate, cluster: no authentication of the nodes' connections (benchmarks; the results say so)");
  run_cmd->add_option(
      "--shared-secret-file", args.shared_secret_file,
      "hw, emulate, cluster: the cluster secret (first line; not readable by others), instead of a fresh one per run");
  run_cmd
      ->add_option("--meta-store", args.meta_store, "hw, emulate, cluster: where metadata servers keep the namespace")
      ->check(CLI::IsMember({"rocksdb", "memory"}))
      ->capture_default_str();
  std::vector<std::string> transports;
  for (const transport::TransportListing& t : transport::list_transports()) transports.push_back(t.name);
  run_cmd
      ->add_option("--transport", args.transport,
                   "hw: how the services talk (sluice backends lists them); cluster, emulate: how the node "
                   "processes do (tcp, tcp+shm: shared memory between those of one host, ucx)")
      ->check(CLI::IsMember(transports))
      ->capture_default_str();
  std::vector<std::string> backends;
  for (const hw::StorageBackendListing& b : hw::list_storage_backends()) backends.push_back(b.name);
  run_cmd
      ->add_option("--storage-backend", args.storage_backend, "hw, emulate, cluster: how storage targets keep chunks")
      ->check(CLI::IsMember(backends))
      ->capture_default_str();
  run_cmd
      ->add_option(
          "--storage-root", args.storage_root,
          "hw, emulate, cluster: where each run's chunk files and metadata go (default: the system temp folder; "
          "O_DIRECT needs a disk, not tmpfs)")
      ->check(CLI::ExistingDirectory);
  run_cmd->add_option(
      "--node-memory", args.node_memory,
      "hw, emulate, cluster: the memory each node may allocate for buffers (a size: 4GiB; default 2GiB)");
  run_cmd
      ->add_option("--listen", args.listen,
                   "cluster: this host's address for its node: auto (first non-loopback interface), an IPv4 "
                   "address, a subnet a.b.c.d/n, or an interface name")
      ->capture_default_str();
  on_parsed(run_cmd, exit, [shared] { return run_command(*shared); });
}

// `sluice node --mpi`, and `sluice run` under an MPI launcher, run as
// sluice-node (built next to sluice), through exec: this binary links
// SimGrid, whose SMPI also defines MPI_Init and wins over Open MPI's, so real
// MPI lives in that binary alone. The process stays the one mpirun started
// (same pid, same environment); for `run`, sluice-node's relay starts
// `sluice run` again as its child (scenarios/runner/sweep_schedule.hpp).
// Returns only when the exec failed, with the exit code to give.
int exec_mpi_node(char** argv, const char* what) {
  const std::string node = emulate::this_program(argv[0]).parent_path() / "sluice-node";
  ::execv(node.c_str(), argv);
  fmt::print(stderr, "{}: cannot run {}: {} (it is built with sluice: cmake --build build)\n", what, node,
             std::strerror(errno));
  return k_exit_failed;
}

// `sluice run` started by mpirun/srun with several ranks, and not yet by the relay.
bool run_under_launcher(int argc, char** argv) {
  return argc >= 2 && std::string_view(argv[1]) == "run" && std::getenv(scenario::k_sweep_fd_env) == nullptr &&
         launcher_ranks() > 1;
}

}  // namespace sluice::cli
