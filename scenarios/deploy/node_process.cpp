#include "scenarios/deploy/node_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "scenarios/deploy/line_channel.hpp"
#include "scenarios/deploy/node_runner.hpp"
#include "scenarios/deploy/server_settings_codec.hpp"
#include "scenarios/runner/results_writer.hpp"

namespace sluice::emulate {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The places in node_collectives' sequence the relay acts on.
constexpr std::size_t k_step_servers_up = 2;
std::size_t step_clients_done(const std::vector<std::string>& steps) { return steps.size() - 3; }
std::size_t step_gather(const std::vector<std::string>& steps) { return steps.size() - 1; }

std::vector<NodeSpec> nodes_by_id(const ClusterConfig& config) {
  std::vector<NodeSpec> nodes = config.nodes;
  std::sort(nodes.begin(), nodes.end(), [](const NodeSpec& a, const NodeSpec& b) { return a.id < b.id; });
  return nodes;
}

// "op name" of a step, split.
std::pair<std::string, std::string> step_words(std::string_view text) {
  const std::size_t space = text.find(' ');
  return {std::string(text.substr(0, space)), std::string(text.substr(space + 1))};
}

// Whether a child's request is `step` of node_collectives. An all_gather
// carries no name on the bootstrap socket (SocketBootstrap::all_gather), so
// only its op is compared; a barrier's name must match.
bool asks_for(const std::string& op, const std::string& name, const std::string& step) {
  const auto [step_op, step_name] = step_words(step);
  return op == step_op && (op == "all_gather" || name == step_name);
}

// ---- the child ---------------------------------------------------------------------

struct NodeChild {
  pid_t pid = -1;
  LineChannel channel;
  std::size_t next_step = 0;  // the collective it asks for next
  bool waiting = false;       // it asked for next_step and waits for the answer
};

// fork + exec of `words` with `fd` as its fd 3; the child dies with this thread (PR_SET_PDEATHSIG).
Result<NodeChild> start_child(const std::vector<std::string>& words) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return error(StatusCode::io_error, std::string("socketpair: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  for (const std::string& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    return error(StatusCode::io_error, std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {  // async-signal-safe calls only until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (sv[1] == 3) {
      ::fcntl(3, F_SETFD, 0);
    } else if (::dup2(sv[1], 3) < 0) {
      ::_exit(127);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(sv[1]);
  NodeChild child;
  child.pid = pid;
  child.channel = LineChannel(sv[0]);
  return child;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended (status " + std::to_string(status) + ")";
}

// waitpid; a child that has not ended within `wait` gets SIGKILL first.
std::string reap(pid_t pid, std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  int status = 0;
  for (;;) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return exit_text(status);
    if (got < 0 && errno != EINTR) return std::string("cannot be waited for: ") + std::strerror(errno);
    if (Clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      if (::waitpid(pid, &status, 0) == pid) return exit_text(status) + " (killed: it did not end in time)";
      return "lost";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// ---- collectives on their own thread ---------------------------------------------------

// One collective at a time on the point's Bootstrap, each answered as the
// launcher of socket_bootstrap.hpp answers ({"ok", "all"} or {"ok", "error"}).
class CollectiveWorker {
 public:
  // steps: node_collectives of the point's config.
  CollectiveWorker(Bootstrap& bootstrap, std::vector<std::string> steps)
      : bootstrap_(bootstrap), steps_(std::move(steps)), thread_([this] { loop(); }) {}
  ~CollectiveWorker() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();  // a collective under way ends by its own timeout
  }
  CollectiveWorker(const CollectiveWorker&) = delete;
  CollectiveWorker& operator=(const CollectiveWorker&) = delete;

  // Starts collective number answered() with this data; false while one is under way.
  bool start(std::string data) {
    std::lock_guard lock(mu_);
    if (job_) return false;
    job_ = std::move(data);
    cv_.notify_all();
    return true;
  }
  bool busy() const {
    std::lock_guard lock(mu_);
    return job_.has_value();
  }
  std::size_t answered() const {
    std::lock_guard lock(mu_);
    return answers_.size();
  }
  std::string answer(std::size_t step) const {
    std::lock_guard lock(mu_);
    return answers_.at(step);
  }
  bool all_ok() const {
    std::lock_guard lock(mu_);
    return failure_.empty();
  }
  std::string failure() const {
    std::lock_guard lock(mu_);
    return failure_;
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return done_ || job_.has_value(); });
      if (done_) return;
      const std::size_t step = answers_.size();
      const std::string data = *job_;
      lock.unlock();
      const std::string answer = make(step, data);
      lock.lock();
      const json parsed = json::parse(answer);
      if (!parsed["ok"].get<bool>() && failure_.empty()) {
        failure_ = steps_.at(step) + ": " + parsed["error"].get<std::string>();
      }
      answers_.push_back(answer);
      job_.reset();
    }
  }

  std::string make(std::size_t step, const std::string& data) {
    const auto [op, name] = step_words(steps_.at(step));
    Result<std::vector<std::string>> r = std::vector<std::string>{};
    if (op == "all_gather") {
      r = bootstrap_.all_gather(data);
    } else if (op == "barrier") {
      if (Status st = bootstrap_.barrier(name); !st.ok()) r = st;
    } else {
      r = bootstrap_.gather_to_root(data);
    }
    if (!r.ok()) return collective_failure_text(r.status().message());
    return collective_answer_text(*r);
  }

  Bootstrap& bootstrap_;
  const std::vector<std::string> steps_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::string> job_;
  std::vector<std::string> answers_;
  std::string failure_;
  bool done_ = false;
  std::thread thread_;
};

// ---- the relay ----------------------------------------------------------------------

class NodeRelay {
 public:
  NodeRelay(const NodeProcessOptions& options, Bootstrap& bootstrap)
      : options_(options),
        bootstrap_(bootstrap),
        steps_(node_collectives(options.config)),
        worker_(bootstrap, steps_),
        me_(nodes_by_id(options.config)[bootstrap.rank()]) {
    for (const ClusterFault& f : options.config.faults) {
      if (f.node == me_.id && f.role == server()) kills_.push_back(f);
    }
    std::sort(kills_.begin(), kills_.end(),
              [](const ClusterFault& a, const ClusterFault& b) { return a.at_ms < b.at_ms; });
  }

  Result<json> run();

 private:
  void log(const std::string& line) const {
    if (options_.log) options_.log("node " + std::to_string(me_.id) + " process: " + line);
  }
  Status write_child_files();
  Status start(bool again);
  void serve_child();
  void take_request(const std::string& line);
  void answer_waiting_child();
  void child_ended(const std::string& how);
  void apply_faults();
  void stand_in();
  std::vector<std::string> my_rails() const;
  json stand_in_document() const;
  std::string amended_document(const std::string& data) const;
  bool finished() const { return worker_.answered() == steps_.size() && !child_; }
  // The one server the node hosts (runs_in_child_process).
  Role server() const { return me_.roles.front(); }
  // "faults.storage_process_kills", "faults.meta_process_restarts", ...
  std::string counter(const char* what) const {
    return std::string("faults.") + (server() == Role::storage ? "storage" : "meta") + "_process_" + what;
  }

  const NodeProcessOptions& options_;
  Bootstrap& bootstrap_;
  const std::vector<std::string> steps_;  // node_collectives of the point
  CollectiveWorker worker_;
  NodeSpec me_;
  std::string config_path_;
  std::string settings_path_;  // the study's server settings; empty: none given
  std::optional<NodeChild> child_;
  std::vector<ClusterFault> kills_;
  std::size_t next_kill_ = 0;
  std::optional<Clock::time_point> servers_up_;     // when "servers-up" was answered
  std::optional<Clock::time_point> restart_due_;    // a killed child starts again then
  std::optional<Clock::time_point> last_answered_;  // the gather answered: the child must end by then + wait
  // Once no child will come back: the rank makes the rest of the collectives (ok: as the plan meant).
  bool standing_in_ = false;
  bool stand_in_ok_ = true;
  std::string stand_in_status_;
  bool stop_sent_ = false;
  std::uint32_t kills_done_ = 0;
  std::uint32_t restarts_done_ = 0;
  json processes_ = json::array();  // {"pid", "how_it_ended"}
  std::string last_end_;            // how the last child ended
};

Status NodeRelay::write_child_files() {
  ClusterConfig child = options_.config;
  child.faults.clear();  // the rank makes this node's kills; the other nodes' are theirs
  if (!child.insecure) {
    const std::string secret_path = options_.work_dir + "/node-process.secret";
    const int fd = ::open(secret_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return error(StatusCode::io_error, "cannot write " + secret_path + ": " + std::strerror(errno));
    const std::string text = child.shared_secret + "\n";
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!written) return error(StatusCode::io_error, "cannot write " + secret_path);
    child.shared_secret_file = secret_path;
  }
  child.shared_secret.clear();
  config_path_ = options_.work_dir + "/node-process.json";
  if (Status st = scenario::write_atomically(config_path_, to_json(child).dump(2) + "\n"); !st.ok()) return st;
  if (!options_.fs) return ok_status();
  settings_path_ = options_.work_dir + "/node-process-fs.json";
  return scenario::write_atomically(settings_path_, server_settings_to_json(*options_.fs).dump(2) + "\n");
}

// This node's rails in the endpoint table its peers got; none when the exchange failed.
std::vector<std::string> NodeRelay::my_rails() const {
  const json table = json::parse(worker_.answer(0), nullptr, false);
  const std::uint32_t rank = bootstrap_.rank();
  std::vector<std::string> rails;
  if (table.is_discarded() || !table.contains("all") || !table["all"].is_array() || table["all"].size() <= rank ||
      !table["all"][rank].is_string()) {
    return rails;
  }
  std::istringstream in(table["all"][rank].get<std::string>());
  for (std::string rail; in >> rail;) rails.push_back(rail);
  return rails;
}

// A node process: the first, or (again) one that takes the rails its peers know.
Status NodeRelay::start(bool again) {
  std::vector<std::string> words = options_.node_command;
  for (const std::string& w : {std::string("--config"), config_path_, std::string("--rank"),
                               std::to_string(bootstrap_.rank()), std::string("--bootstrap-fd"), std::string("3")}) {
    words.push_back(w);
  }
  if (!settings_path_.empty()) {
    words.push_back("--fs-settings");
    words.push_back(settings_path_);
  }
  if (again) {
    for (const std::string& rail : my_rails()) {
      words.push_back("--listen-rails");
      words.push_back(rail);
    }
  }
  Result<NodeChild> child = start_child(words);
  if (!child.ok()) return child.status();
  child_ = std::move(child).value();
  if (again) ++restarts_done_;
  log(std::string(again ? "started again, " : "started, ") + "pid " + std::to_string(child_->pid) + " (" +
      (again ? "its chunk files and metadata store come back from " : "storage under ") + options_.config.storage_root +
      ")");
  return ok_status();
}

// Reads the child's requests for a slice; answers what is recorded.
void NodeRelay::serve_child() {
  pollfd pfd{child_->channel.fd(), POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(k_node_process_slice_ms)) > 0) {
    const Status read = child_->channel.read_available();
    while (child_) {
      std::optional<std::string> line = child_->channel.take_line();
      if (!line) break;
      take_request(*line);
    }
    if (child_ && !read.ok()) {
      child_ended(reap(child_->pid, std::chrono::milliseconds(k_node_process_exit_wait_ms)));
      return;
    }
  }
  if (child_) answer_waiting_child();
}

void NodeRelay::take_request(const std::string& line) {
  const json request = json::parse(line, nullptr, false);
  const std::size_t step = child_->next_step;
  const bool well_formed = !request.is_discarded() && request.is_object() && request.contains("op") &&
                           request["op"].is_string() && request.contains("name") && request["name"].is_string() &&
                           request.contains("data") && request["data"].is_string();
  const std::string op = well_formed ? request["op"].get<std::string>() : std::string();
  const std::string name = well_formed ? request["name"].get<std::string>() : std::string();
  const std::string asked = well_formed ? op + " " + name : std::string("a malformed request");
  if (step >= steps_.size() || child_->waiting || !well_formed || !asks_for(op, name, steps_[step])) {
    log("asked for " + asked + " out of order (expected " + (step < steps_.size() ? steps_[step] : "nothing") +
        "): killed");
    ::kill(child_->pid, SIGKILL);
    child_ended(reap(child_->pid, std::chrono::milliseconds(k_node_process_exit_wait_ms)));
    return;
  }
  child_->waiting = true;
  if (step == worker_.answered() && !worker_.busy()) {
    std::string data = request["data"].get<std::string>();
    if (step == step_gather(steps_)) data = amended_document(data);
    worker_.start(std::move(data));
  }  // else answered already (a process started again), or under way for the one before it
}

void NodeRelay::answer_waiting_child() {
  while (child_ && child_->waiting && child_->next_step < worker_.answered()) {
    const Status sent =
        child_->channel.send_line(worker_.answer(child_->next_step), Clock::now() + std::chrono::seconds(5));
    child_->waiting = false;
    ++child_->next_step;
    if (!sent.ok()) return;  // it is gone: its end shows on the channel
  }
  if (worker_.answered() == steps_.size() && !last_answered_) last_answered_ = Clock::now();
}

void NodeRelay::child_ended(const std::string& how) {
  processes_.push_back({{"pid", child_->pid}, {"how_it_ended", how}});
  last_end_ = how;
  const bool sequence_done = child_->next_step == steps_.size();
  log("pid " + std::to_string(child_->pid) + " " + how);
  child_.reset();
  if (!sequence_done && !restart_due_ && !standing_in_) {
    standing_in_ = true;
    stand_in_ok_ = false;
    stand_in_status_ = "the node process " + how + " before the run was over";
  }
}

// Kills and restarts, by the fault plan's times from "servers-up".
void NodeRelay::apply_faults() {
  if (!servers_up_ && worker_.answered() > k_step_servers_up) servers_up_ = Clock::now();
  if (!servers_up_) return;
  const bool workload_over = worker_.answered() > step_clients_done(steps_);
  if (restart_due_ && Clock::now() >= *restart_due_) {
    restart_due_.reset();
    if (workload_over) {
      standing_in_ = true;
      stand_in_status_ = "killed by the fault plan (SIGKILL); the workload ended before its restart was due";
    } else if (Status st = start(true); !st.ok()) {
      standing_in_ = true;
      stand_in_ok_ = false;
      stand_in_status_ = "cannot start the node process again: " + st.message();
    }
  }
  if (workload_over || next_kill_ >= kills_.size() || !child_) return;
  const ClusterFault& f = kills_[next_kill_];
  if (Clock::now() < *servers_up_ + std::chrono::milliseconds(f.at_ms)) return;
  ++next_kill_;
  ++kills_done_;
  log("fault: killing pid " + std::to_string(child_->pid) + ", which hosts the " + std::string(to_string(server())) +
      " server, with SIGKILL");
  ::kill(child_->pid, SIGKILL);
  if (f.restart_after_ms > 0) {
    restart_due_ = Clock::now() + std::chrono::milliseconds(f.restart_after_ms);
  } else {
    standing_in_ = true;
    stand_in_status_ = "killed by the fault plan (SIGKILL), not restarted";
  }
  child_ended(reap(child_->pid, std::chrono::milliseconds(k_node_process_exit_wait_ms)));
}

// What the node's processes were, added to its document (from the last process, or stood in).
std::string NodeRelay::amended_document(const std::string& data) const {
  json doc = json::parse(data, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return data;  // rank 0 reports it malformed
  if (!doc.contains("counters") || !doc["counters"].is_object()) doc["counters"] = json::object();
  doc["counters"][counter("kills")] = kills_done_;
  doc["counters"][counter("restarts")] = restarts_done_;
  json processes = processes_;
  if (child_) processes.push_back({{"pid", child_->pid}, {"how_it_ended", "running (it sends this)"}});
  doc["processes"] = processes;
  return doc.dump();
}

json NodeRelay::stand_in_document() const {
  json roles = json::array();
  for (Role r : me_.roles) roles.push_back(std::string(to_string(r)));
  return {{"node", me_.id},
          {"rank", bootstrap_.rank()},
          {"roles", roles},
          {"ok", stand_in_ok_},
          {"status", stand_in_status_},
          {"addresses", json::array()},
          {"authenticated", !options_.config.shared_secret.empty()},
          {"meta_store", options_.config.meta_store},
          {"phases", json::array()},
          {"counters", json::object()}};
}

// No node process will come back: the rank makes the collectives it would have made.
void NodeRelay::stand_in() {
  if (worker_.busy() || worker_.answered() == steps_.size()) return;
  const std::size_t step = worker_.answered();
  if (step == 0) {
    worker_.start(std::string());  // the endpoint table without this node: its peers cannot reach it
  } else if (step == step_gather(steps_)) {
    worker_.start(amended_document(stand_in_document().dump()));
  } else if (is_workload_done_step(steps_[step])) {  // what run_node says after a workload
    worker_.start(stand_in_ok_ ? std::string() : "node " + std::to_string(me_.id) + ": " + stand_in_status_);
  } else {
    worker_.start(std::string());
  }
}

Result<json> NodeRelay::run() {
  if (Status st = write_child_files(); !st.ok()) return st;
  if (Status st = start(false); !st.ok()) return st;
  while (!finished()) {
    if (child_) {
      serve_child();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(k_node_process_slice_ms));
    }
    apply_faults();
    if (standing_in_ && !child_) stand_in();
    if (!stop_sent_ && options_.stop_requested && options_.stop_requested() && child_) {
      stop_sent_ = true;
      log("stopping: SIGTERM to pid " + std::to_string(child_->pid));
      ::kill(child_->pid, SIGTERM);
    }
    if (child_ && last_answered_ &&
        Clock::now() > *last_answered_ + std::chrono::milliseconds(k_node_process_exit_wait_ms)) {
      ::kill(child_->pid, SIGKILL);
      child_ended(reap(child_->pid, std::chrono::milliseconds(k_node_process_exit_wait_ms)) +
                  " (killed: it did not end after the run)");
    }
  }
  if (!worker_.all_ok())
    return error(StatusCode::unavailable, "node " + std::to_string(me_.id) + ": " + worker_.failure());
  const bool ok = standing_in_ ? stand_in_ok_ : last_end_ == "exited with code 0";
  return json{{"ok", ok}, {"node", me_.id}, {"processes", processes_}};
}

}  // namespace

bool runs_in_child_process(const ClusterConfig& config, std::uint32_t rank) {
  if (rank == 0 || rank >= config.nodes.size()) return false;
  const NodeSpec me = nodes_by_id(config)[rank];
  if (me.roles.size() != 1 || me.roles[0] == Role::mgmt || me.roles[0] == Role::client) return false;
  return std::any_of(config.faults.begin(), config.faults.end(),
                     [&](const ClusterFault& f) { return f.node == me.id && f.role == me.roles[0]; });
}

Result<json> run_node_in_child_process(const NodeProcessOptions& options, Bootstrap& bootstrap) {
  if (!runs_in_child_process(options.config, bootstrap.rank())) {
    return error(StatusCode::invalid_argument,
                 "rank " + std::to_string(bootstrap.rank()) + ": its node does not run in a child process");
  }
  NodeRelay relay(options, bootstrap);
  return relay.run();
}

}  // namespace sluice::emulate
