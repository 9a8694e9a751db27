#include "scenarios/runner/sweep_schedule.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/fd_io.hpp"
#include "core/common/assert.hpp"
#include "core/namespace/name_hash.hpp"
#include "scenarios/runner/result_codec.hpp"
#include "scenarios/runner/sweep_relay_wire.hpp"

namespace sluice::scenario {

using nlohmann::json;

namespace {

// Ranks of one sweep at most (a launcher's -n).
constexpr std::uint32_t k_max_sweep_ranks = 1u << 16;

Status socket_failed(const std::string& what) {
  return error(StatusCode::unavailable, "sweep over ranks: the relay's socket: " + what);
}

json job_to_json(const ChildJobResult& r) {
  return {{"ok", r.ok}, {"payload", r.payload}, {"error", r.error}, {"log_tail", r.log_tail}};
}

// A ChildJobResult from another rank; a malformed one becomes a failed job saying so.
ChildJobResult job_from_json(const json& j, std::uint32_t from) {
  ChildJobResult r;
  const bool well_formed = j.is_object() && j.contains("ok") && j["ok"].is_boolean() && j.contains("payload") &&
                           j["payload"].is_string() && j.contains("error") && j["error"].is_string() &&
                           j.contains("log_tail") && j["log_tail"].is_array();
  if (!well_formed) {
    r.error = "rank " + std::to_string(from) + " sent a malformed result";
    return r;
  }
  r.ok = j["ok"].get<bool>();
  r.payload = j["payload"].get<std::string>();
  r.error = j["error"].get<std::string>();
  for (const json& line : j["log_tail"]) {
    if (line.is_string()) r.log_tail.push_back(line.get<std::string>());
  }
  return r;
}

std::optional<std::uint64_t> env_number(const char* name, std::string* why) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  std::uint64_t value = 0;
  const std::string_view s(text);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    *why = std::string(name) + "=\"" + std::string(s) + "\" is not a non-negative integer";
  }
  return value;
}

}  // namespace

// ---- The relay's socket --------------------------------------------------------

struct SweepFrame {
  SweepFrameKind kind = SweepFrameKind::data;
  std::uint32_t rank = 0;
  std::string payload;
};

class SweepLink {
 public:
  explicit SweepLink(int fd) : fd_(fd) {}
  ~SweepLink() { ::close(fd_); }
  SweepLink(const SweepLink&) = delete;
  SweepLink& operator=(const SweepLink&) = delete;

  int fd() const { return fd_; }

  Status send(std::uint32_t to, const json& message) {
    const std::string payload = message.dump();
    if (payload.size() > k_max_sweep_frame_bytes) {
      return error(StatusCode::invalid_argument, "sweep over ranks: a message of " + std::to_string(payload.size()) +
                                                     " bytes exceeds k_max_sweep_frame_bytes");
    }
    const auto header = encode_sweep_frame_header(
        SweepFrameHeader{static_cast<std::uint32_t>(payload.size()), SweepFrameKind::data, to});
    if (!send_exact(fd_, header.data(), header.size()) || !send_exact(fd_, payload.data(), payload.size())) {
      return socket_failed(std::string("write: ") + std::strerror(errno));
    }
    return ok_status();
  }

  // One frame, waiting up to timeout_ms (-1: no limit); nullopt when none came.
  Result<std::optional<SweepFrame>> receive(int timeout_ms) {
    pollfd pfd{fd_, POLLIN, 0};
    int n = 0;
    do {
      n = ::poll(&pfd, 1, timeout_ms);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return socket_failed(std::string("poll: ") + std::strerror(errno));
    if (n == 0) return std::optional<SweepFrame>();
    std::array<std::byte, k_sweep_frame_header_bytes> head{};
    if (!read_exact(fd_, head.data(), head.size())) return socket_failed("the relay closed it (the relay ended)");
    const std::optional<SweepFrameHeader> h = decode_sweep_frame_header(head);
    if (!h) return socket_failed("a malformed frame header");
    SweepFrame frame{h->kind, h->rank, std::string(h->payload_bytes, '\0')};
    if (!read_exact(fd_, frame.payload.data(), frame.payload.size())) {
      return socket_failed("the relay closed it inside a frame");
    }
    return std::optional<SweepFrame>(std::move(frame));
  }

 private:
  int fd_;
};

namespace {

// A data frame's JSON for this sweep; nullopt for another sweep's (stale) or a malformed one.
std::optional<json> message_of(const SweepFrame& frame, std::uint64_t sweep) {
  json j = json::parse(frame.payload, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("t") || !j["t"].is_string() || !j.contains("sweep") ||
      !j["sweep"].is_number_unsigned() || j["sweep"].get<std::uint64_t>() != sweep) {
    return std::nullopt;
  }
  return j;
}

std::optional<std::size_t> index_of(const json& j, std::size_t count) {
  if (!j.contains("index") || !j["index"].is_number_unsigned()) return std::nullopt;
  const auto index = j["index"].get<std::uint64_t>();
  return index < count ? std::optional<std::size_t>(index) : std::nullopt;
}

std::string ended_text(std::uint32_t rank, const std::string& how) {
  return "rank " + std::to_string(rank) + "'s sluice run ended (" + how + ")";
}

}  // namespace

// ---- Rank 0: deals the points and gathers the results -------------------------

namespace {

class Dealer final : public JobSource {
 public:
  Dealer(SweepLink& link, std::uint64_t sweep, std::string digest, std::vector<std::size_t> order, std::uint32_t size,
         std::vector<bool>& ended, std::vector<std::string>& ended_how, std::function<bool()> stop_requested)
      : link_(link),
        sweep_(sweep),
        digest_(std::move(digest)),
        order_(std::move(order)),
        begun_(size, false),
        ended_(ended),
        ended_how_(ended_how),
        stop_requested_(std::move(stop_requested)) {
    begun_[0] = true;
  }

  // Nothing is dealt before every rank's digest is in (or its end): a list
  // that differs fails the call before any point runs, and every rank gets
  // its share from the start.
  std::optional<std::size_t> next() override {
    wait_for_every_rank();
    return deal(0);
  }
  void finished_here(std::size_t index, const ChildJobResult&) override {
    in_flight_.erase(index);
    ++ended_count_;
  }
  int wake_fd() const override { return link_.fd(); }
  std::vector<std::pair<std::size_t, ChildJobResult>> on_wake() override;
  bool all_done() const override { return !abort_.empty() || (ended_count_ == order_.size() && every_rank_began()); }
  int fd_children_close() const override { return link_.fd(); }
  std::size_t running_elsewhere() const override {
    return static_cast<std::size_t>(
        std::count_if(in_flight_.begin(), in_flight_.end(), [](const auto& entry) { return entry.second != 0; }));
  }
  const std::string& abort_reason() const { return abort_; }

 private:
  std::optional<std::size_t> deal(std::uint32_t to) {
    if (!abort_.empty() || next_ >= order_.size()) return std::nullopt;
    const std::size_t index = order_[next_++];
    in_flight_[index] = to;
    return index;
  }
  void on_message(std::uint32_t from, const json& m, std::vector<std::pair<std::size_t, ChildJobResult>>& ended);
  void on_rank_ended(std::uint32_t rank, std::string how, std::vector<std::pair<std::size_t, ChildJobResult>>& out);
  bool every_rank_began() const {
    for (std::size_t r = 1; r < begun_.size(); ++r) {
      if (!begun_[r] && !ended_[r]) return false;
    }
    return true;
  }
  void wait_for_every_rank();
  // One frame from a rank: its end or its message (frames claiming rank 0 or no rank of the call are dropped).
  void dispatch(const SweepFrame& frame, std::vector<std::pair<std::size_t, ChildJobResult>>& out);
  // The ranks that asked for a point before every rank began get their answers, once every rank has.
  void answer_waiting_once_every_rank_began();
  // Answers a rank's request for a point (once every rank began).
  void answer_next(std::uint32_t from);
  void reply(std::uint32_t to, json m) {
    m["sweep"] = sweep_;
    if (Status st = link_.send(to, m); !st.ok() && abort_.empty()) abort_ = st.message();
  }

  SweepLink& link_;
  const std::uint64_t sweep_;
  const std::string digest_;
  const std::vector<std::size_t> order_;            // the points, longest first
  std::size_t next_ = 0;                            // in order_
  std::map<std::size_t, std::uint32_t> in_flight_;  // point -> rank running it
  std::size_t ended_count_ = 0;
  std::vector<bool> begun_;  // by rank: its digest arrived and matched
  std::vector<bool>& ended_;
  std::vector<std::string>& ended_how_;
  std::string abort_;  // why the call fails on every rank ("" while it does not)
  std::function<bool()> stop_requested_;
  std::vector<std::uint32_t> waiting_;  // ranks that asked for a point before every rank began
};

std::vector<std::pair<std::size_t, ChildJobResult>> Dealer::on_wake() {
  std::vector<std::pair<std::size_t, ChildJobResult>> out;
  for (;;) {
    Result<std::optional<SweepFrame>> got = link_.receive(0);
    if (!got.ok()) {
      if (abort_.empty()) abort_ = got.status().message();
      return out;
    }
    if (!got->has_value()) return out;
    dispatch(**got, out);
  }
}

void Dealer::dispatch(const SweepFrame& frame, std::vector<std::pair<std::size_t, ChildJobResult>>& out) {
  if (frame.rank == 0 || frame.rank >= begun_.size()) return;  // the relay checks; not ours to trust blindly
  if (frame.kind == SweepFrameKind::ended) {
    on_rank_ended(frame.rank, frame.payload, out);
    answer_waiting_once_every_rank_began();  // a rank that ended without beginning completes the begin phase
  } else if (std::optional<json> m = message_of(frame, sweep_)) {
    on_message(frame.rank, *m, out);
  }
}

void Dealer::answer_waiting_once_every_rank_began() {
  if (!every_rank_began()) return;
  for (std::uint32_t r : std::exchange(waiting_, {})) answer_next(r);
}

void Dealer::on_message(std::uint32_t from, const json& m, std::vector<std::pair<std::size_t, ChildJobResult>>& out) {
  const std::string type = m["t"].get<std::string>();
  if (type == "begin") {
    const bool same = m.contains("digest") && m["digest"].is_string() && m["digest"].get<std::string>() == digest_ &&
                      m.contains("points") && m["points"].is_number_unsigned() &&
                      m["points"].get<std::uint64_t>() == order_.size();
    if (!same && abort_.empty()) {
      abort_ = "rank " + std::to_string(from) + "'s point list differs from rank 0's (" +
               std::to_string(m.value("points", std::uint64_t{0})) + " points, digest " +
               (m.contains("digest") && m["digest"].is_string() ? m["digest"].get<std::string>() : std::string("?")) +
               "; rank 0: " + std::to_string(order_.size()) + " points, digest " + digest_ +
               "): every rank must evaluate the script to the same points (one that reads the clock, the host or "
               "the environment does not)";
    }
    begun_[from] = same;
    answer_waiting_once_every_rank_began();
  } else if (type == "next") {
    if (!every_rank_began() && abort_.empty()) return waiting_.push_back(from);
    answer_next(from);
  } else if (type == "done") {
    const std::optional<std::size_t> index = index_of(m, order_.size());
    auto it = index ? in_flight_.find(*index) : in_flight_.end();
    if (it == in_flight_.end() || it->second != from || !m.contains("result")) return;  // not one it was given
    in_flight_.erase(it);
    ++ended_count_;
    out.emplace_back(*index, job_from_json(m["result"], from));
  }
}

void Dealer::answer_next(std::uint32_t from) {
  const std::optional<std::size_t> index = begun_[from] ? deal(from) : std::nullopt;
  if (!abort_.empty()) return reply(from, {{"t", "abort"}, {"why", abort_}});
  if (index) return reply(from, {{"t", "take"}, {"index", *index}});
  reply(from, {{"t", "none"}});
}

void Dealer::wait_for_every_rank() {
  // Bound on one wait in the loop, so that a stop request is seen.
  constexpr int k_begin_poll_ms = 100;
  std::vector<std::pair<std::size_t, ChildJobResult>> ended;  // stays empty: nothing is dealt yet
  while (abort_.empty() && !every_rank_began()) {
    if (stop_requested_ && stop_requested_()) return;
    Result<std::optional<SweepFrame>> got = link_.receive(k_begin_poll_ms);
    if (!got.ok()) {
      abort_ = got.status().message();
      return;
    }
    if (got->has_value()) dispatch(**got, ended);
  }
  for (std::uint32_t r : std::exchange(waiting_, {})) answer_next(r);  // an abort answers them
}

void Dealer::on_rank_ended(std::uint32_t rank, std::string how,
                           std::vector<std::pair<std::size_t, ChildJobResult>>& out) {
  ended_[rank] = true;
  ended_how_[rank] = std::move(how);
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second != rank) {
      ++it;
      continue;
    }
    ChildJobResult lost;
    lost.error = ended_text(rank, ended_how_[rank]) + " while it ran this point";
    out.emplace_back(it->first, std::move(lost));
    ++ended_count_;
    it = in_flight_.erase(it);
  }
}

// ---- Other ranks: ask rank 0 for points, send it the results -------------------

class Taker final : public JobSource {
 public:
  Taker(SweepLink& link, std::uint64_t sweep, std::size_t count) : link_(link), sweep_(sweep), count_(count) {}

  std::optional<std::size_t> next() override;
  void finished_here(std::size_t index, const ChildJobResult& result) override {
    if (!failure_.empty()) return;
    Status st = link_.send(0, {{"t", "done"}, {"sweep", sweep_}, {"index", index}, {"result", job_to_json(result)}});
    if (!st.ok()) failure_ = st.message();
  }
  int wake_fd() const override { return -1; }
  std::vector<std::pair<std::size_t, ChildJobResult>> on_wake() override { return {}; }
  bool all_done() const override { return true; }  // the pool's own jobs; the rest come with "results"
  std::size_t running_elsewhere() const override { return 0; }
  int fd_children_close() const override { return link_.fd(); }

  // The next message of this sweep from rank 0 (other ranks' ends and stale messages skipped).
  Result<json> from_rank0();
  // Rank 0's last message of the call: the one that answered a request for a point, else the next.
  Result<json> last_from_rank0() {
    if (last_) return *std::exchange(last_, std::nullopt);
    return from_rank0();
  }
  const std::string& failure() const { return failure_; }

 private:
  SweepLink& link_;
  const std::uint64_t sweep_;
  const std::size_t count_;
  std::string failure_;       // why this call fails here ("" while it does not)
  std::optional<json> last_;  // "results" that came as the answer to a request for a point
};

Result<json> Taker::from_rank0() {
  for (;;) {
    Result<std::optional<SweepFrame>> got = link_.receive(-1);
    if (!got.ok()) return got.status();
    if (!got->has_value()) continue;
    const SweepFrame& frame = **got;
    if (frame.rank != 0) continue;  // another rank's end: rank 0's business
    if (frame.kind == SweepFrameKind::ended) {
      return error(StatusCode::unavailable, "sweep over ranks: " + ended_text(0, frame.payload));
    }
    if (std::optional<json> m = message_of(frame, sweep_)) return *m;
  }
}

std::optional<std::size_t> Taker::next() {
  if (!failure_.empty()) return std::nullopt;
  if (Status st = link_.send(0, {{"t", "next"}, {"sweep", sweep_}}); !st.ok()) {
    failure_ = st.message();
    return std::nullopt;
  }
  Result<json> m = from_rank0();
  if (!m.ok()) {
    failure_ = m.status().message();
    return std::nullopt;
  }
  const std::string type = (*m)["t"].get<std::string>();
  if (type == "take") {
    if (std::optional<std::size_t> index = index_of(*m, count_)) return index;
    failure_ = "sweep over ranks: rank 0 dealt a point outside the list";
  } else if (type == "abort") {
    failure_ = "sweep over ranks: rank 0 stopped the call: " + m->value("why", std::string("(no reason)"));
  } else if (type == "results") {
    // Every point ended before this request reached rank 0: the call's end.
    last_ = std::move(*m);
  } else if (type != "none") {
    failure_ = "sweep over ranks: rank 0 answered \"" + type + "\" to a request for a point";
  }
  return std::nullopt;
}

}  // namespace

// ---- The schedule ------------------------------------------------------------------

std::string sweep_digest(const std::vector<ScenarioSpec>& points) {
  std::uint64_t h = fnv_1a_64("sluice sweep");
  for (const ScenarioSpec& spec : points) {
    const json one = {{"summary", spec_summary(spec)},
                      {"config", run_config(spec)},
                      {"params", spec.params},
                      {"label", spec.label},
                      {"seed", spec.seed}};
    h = fnv_1a_64_extend(h, one.dump());
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

double point_cost(const ScenarioSpec& spec) {
  double ops = 0;
  for (const WorkloadSpec& w : spec.workloads) {
    const double ranks = static_cast<double>(w.clients.nodes.size() * w.clients.ranks_per_node);
    const double per_rank = std::visit(
        [](const auto& c) -> double {
          using C = std::decay_t<decltype(c)>;
          auto blocks = [](double bytes, double block) { return block > 0 ? std::max(1.0, bytes / block) : 1.0; };
          if constexpr (std::is_same_v<C, FileSweepConfig>) {
            const double files = static_cast<double>(c.files_per_rank);
            return static_cast<double>(c.phases.size()) * files *
                   (1 + blocks(static_cast<double>(c.file_bytes), static_cast<double>(c.block_bytes)));
          } else if constexpr (std::is_same_v<C, MdBenchConfig>) {
            return static_cast<double>(c.phases.size() * c.files_per_rank);
          } else if constexpr (std::is_same_v<C, TrainEpochConfig>) {
            return static_cast<double>(c.samples) * static_cast<double>(c.epochs);
          } else if constexpr (std::is_same_v<C, CheckpointConfig>) {
            return static_cast<double>(c.checkpoints * c.files_per_rank) *
                   blocks(static_cast<double>(c.shard_bytes), static_cast<double>(c.block_bytes));
          } else if constexpr (std::is_same_v<C, StageInConfig>) {
            return static_cast<double>(c.objects) *
                   blocks(static_cast<double>(c.object_bytes), static_cast<double>(c.block_bytes));
          } else {
            return static_cast<double>(c.buffers);
          }
        },
        w.config);
    ops += ranks * per_rank;
  }
  return ops;
}

Result<std::unique_ptr<SweepSchedule>> SweepSchedule::from_environment() {
  std::string why;
  const std::optional<std::uint64_t> fd = env_number(k_sweep_fd_env, &why);
  const std::optional<std::uint64_t> rank = env_number(k_sweep_rank_env, &why);
  const std::optional<std::uint64_t> size = env_number(k_sweep_size_env, &why);
  if (!fd && !rank && !size) return std::unique_ptr<SweepSchedule>();
  if (why.empty() && (!fd || !rank || !size)) {
    why = std::string("set ") + k_sweep_fd_env + ", " + k_sweep_rank_env + " and " + k_sweep_size_env + " together";
  }
  if (why.empty() && (*size == 0 || *size > k_max_sweep_ranks || *rank >= *size)) {
    why = "rank " + std::to_string(*rank) + " of " + std::to_string(*size) + " ranks (1.." +
          std::to_string(k_max_sweep_ranks) + " ranks)";
  }
  if (why.empty() && (*fd > 1'000'000 || ::fcntl(static_cast<int>(*fd), F_GETFD) == -1)) {
    why = std::string(k_sweep_fd_env) + "=" + std::to_string(*fd) + " is not an open file descriptor";
  }
  if (!why.empty()) return error(StatusCode::invalid_argument, "sweep over ranks (set by the relay): " + why);
  // Not inherited by what this process execs (a point's child closes it too: JobSource::fd_children_close).
  ::fcntl(static_cast<int>(*fd), F_SETFD, FD_CLOEXEC);
  return std::make_unique<SweepSchedule>(static_cast<std::uint32_t>(*rank), static_cast<std::uint32_t>(*size),
                                         static_cast<int>(*fd));
}

SweepSchedule::SweepSchedule(std::uint32_t rank, std::uint32_t size, int fd)
    : rank_(rank), size_(size), link_(std::make_unique<SweepLink>(fd)), ended_(size, false), ended_how_(size) {
  SLUICE_ASSERT(size >= 1 && rank < size);
}

SweepSchedule::~SweepSchedule() = default;

Status SweepSchedule::send_to(std::uint32_t to, const std::string& payload) {
  if (to >= size_) return error(StatusCode::invalid_argument, "sweep over ranks: no rank " + std::to_string(to));
  if (ended_[to]) return error(StatusCode::unavailable, "sweep over ranks: " + ended_text(to, ended_how_[to]));
  return link_->send(to, json{{"t", "rank"}, {"body", payload}});
}

Result<std::optional<RankMessenger::Message>> SweepSchedule::receive(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    Result<std::optional<SweepFrame>> got = link_->receive(timeout_ms < 0 ? -1 : std::max<int>(0, left.count()));
    if (!got.ok()) return got.status();
    if (!got->has_value()) return std::optional<Message>();
    SweepFrame& frame = **got;
    if (frame.rank >= size_) continue;
    if (frame.kind == SweepFrameKind::ended) {
      ended_[frame.rank] = true;
      ended_how_[frame.rank] = frame.payload;
      return std::optional<Message>(Message{frame.rank, true, ended_text(frame.rank, frame.payload)});
    }
    json j = json::parse(frame.payload, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("t", std::string()) != "rank" || !j.contains("body") ||
        !j["body"].is_string()) {
      continue;  // a sweep's frame: not for a messenger
    }
    return std::optional<Message>(Message{frame.rank, false, j["body"].get<std::string>()});
  }
}

Result<std::vector<ChildJobResult>> SweepSchedule::run(const std::vector<ScenarioSpec>& points,
                                                       const ChildPool::Body& body, ChildPoolOptions pool) {
  const std::uint64_t sweep = sweeps_++;
  const std::string digest = sweep_digest(points);
  if (rank_ != 0) {
    Taker taker(*link_, sweep, points.size());
    if (Status st = link_->send(0, {{"t", "begin"}, {"sweep", sweep}, {"digest", digest}, {"points", points.size()}});
        !st.ok()) {
      return st;
    }
    pool.source = &taker;
    Result<std::vector<ChildJobResult>> mine = ChildPool::run(points.size(), body, pool);
    if (!mine.ok()) return mine.status();
    if (!taker.failure().empty()) return error(StatusCode::unavailable, taker.failure());
    Result<json> m = taker.last_from_rank0();
    if (!m.ok()) return m.status();
    const std::string type = (*m)["t"].get<std::string>();
    if (type == "abort") {
      return error(StatusCode::unavailable,
                   "sweep over ranks: rank 0 stopped the call: " + m->value("why", std::string("(no reason)")));
    }
    if (type != "results" || !m->contains("results") || !(*m)["results"].is_array() ||
        (*m)["results"].size() != points.size()) {
      return error(StatusCode::unavailable, "sweep over ranks: rank 0 sent \"" + type + "\" instead of the results");
    }
    std::vector<ChildJobResult> all;
    for (const json& r : (*m)["results"]) all.push_back(job_from_json(r, 0));
    return all;
  }
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> cost(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) cost[i] = point_cost(points[i]);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  Dealer dealer(*link_, sweep, digest, std::move(order), size_, ended_, ended_how_, pool.stop_requested);
  pool.source = &dealer;
  Result<std::vector<ChildJobResult>> all = ChildPool::run(points.size(), body, pool);
  const std::string why = !all.ok() ? all.status().message() : dealer.abort_reason();
  json last = why.empty() ? json{{"t", "results"}, {"sweep", sweep}, {"results", json::array()}}
                          : json{{"t", "abort"}, {"sweep", sweep}, {"why", why}};
  if (why.empty()) {
    for (const ChildJobResult& r : *all) last["results"].push_back(job_to_json(r));
  }
  for (std::uint32_t r = 1; r < size_; ++r) {
    if (!ended_[r]) link_->send(r, last).ignore();  // a rank that ended meanwhile: its relay drops it
  }
  if (!all.ok()) return all.status();
  if (!why.empty()) return error(StatusCode::unavailable, "sweep over ranks: " + why);
  return all;
}

}  // namespace sluice::scenario
