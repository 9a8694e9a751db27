#include "scenarios/deploy/sweep_relay.hpp"

#include <fmt/format.h>

#ifdef SLUICE_HAVE_MPI
#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/assert.hpp"
#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/runner/sweep_relay_wire.hpp"
#endif

namespace sluice::emulate {

#ifdef SLUICE_HAVE_MPI

namespace {

using scenario::decode_sweep_frame_header;
using scenario::encode_sweep_frame_header;
using scenario::k_sweep_frame_header_bytes;
using scenario::SweepFrameHeader;
using scenario::SweepFrameKind;

// The MPI tags between relays: the payload of a child's data frame, and the
// text of how a rank's child ended. Equal to the frame kinds they become.
constexpr int k_mpi_data_tag = static_cast<int>(SweepFrameKind::data);
constexpr int k_mpi_ended_tag = static_cast<int>(SweepFrameKind::ended);

// How long one turn waits on the child's socket before MPI is probed again:
// the latency a message from another rank may wait while both are idle.
constexpr int k_poll_timeout_ms = 1;
// Bytes read from the child in one turn before MPI gets its turn.
constexpr std::size_t k_max_child_read_bytes_per_turn = std::size_t{4} << 20;
// MPI messages received in one turn before the child's socket gets its turn.
constexpr int k_max_mpi_messages_per_turn = 64;
// Sends in flight (MPI_Isend not yet complete) beyond which the relay stops
// reading its child: back-pressure on the child, never an error, since every
// relay keeps receiving and so every send completes.
constexpr std::size_t k_max_pending_sends = 4096;
constexpr std::size_t k_max_pending_send_bytes = std::size_t{2} << 30;
// Frames waiting for the child to read them. The relay does not stop
// receiving from MPI when its child is slow (two relays doing so could wait
// on each other's children), so this bound is an error: past it the child,
// which has stopped reading, is killed.
constexpr std::size_t k_max_to_child_queue_bytes = std::size_t{4} << 30;

// Exit statuses, as scenarios/cli/command.hpp's: the relay failed (its child could
// not be started, MPI failed), and the base of "killed by signal N".
constexpr int k_exit_relay_failed = 1;
constexpr int k_exit_signal_base = 128;
// The child's exits before it becomes `sluice run`: execve failed (as a
// shell's), the relay died before the child could follow it.
constexpr int k_exit_exec_failed = 127;
constexpr int k_exit_relay_gone = 126;

// The latest SIGTERM/SIGINT not yet forwarded to the child (0: none). A
// global because a signal handler can reach nothing else; lock-free, so the
// handler's store is async-signal-safe.
std::atomic<int> g_signal_to_forward{0};
static_assert(std::atomic<int>::is_always_lock_free);

void note_signal(int signal_number) { g_signal_to_forward.store(signal_number); }

void say(int rank, std::string_view line) { fmt::print(stderr, "sluice run (relay of rank {}): {}\n", rank, line); }

// SIGTERM/SIGINT are noted for forwarding (no SA_RESTART: poll() returns at
// once). SIGCHLD back to its default: a launcher's SIG_IGN would reap the
// child before waitpid could say how it ended.
void install_signal_forwarding() {
  struct sigaction action {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGCHLD, SIG_DFL);
}

// The `sluice` beside this sluice-node (argv[0]'s folder where /proc is absent).
std::string sluice_path(const char* argv0) { return (this_program(argv0).parent_path() / "sluice").string(); }

bool is_sweep_variable(std::string_view entry) {
  for (const char* name : {scenario::k_sweep_fd_env, scenario::k_sweep_rank_env, scenario::k_sweep_size_env}) {
    const std::string_view n(name);
    if (entry.size() > n.size() && entry.substr(0, n.size()) == n && entry[n.size()] == '=') return true;
  }
  return false;
}

// This process's environment with the sweep's variables set to the child's.
std::vector<std::string> child_environment(int child_fd, int rank, int size) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!is_sweep_variable(*entry)) env.emplace_back(*entry);
  }
  env.push_back(std::string(scenario::k_sweep_fd_env) + "=" + std::to_string(child_fd));
  env.push_back(std::string(scenario::k_sweep_rank_env) + "=" + std::to_string(rank));
  env.push_back(std::string(scenario::k_sweep_size_env) + "=" + std::to_string(size));
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void write_text(int fd, const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(fd, text, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// What the child runs between fork and execve. MPI's threads in the relay
// may hold locks (malloc's among them), so only async-signal-safe calls:
// everything it needs was made before the fork.
struct ChildExec {
  pid_t relay = 0;
  int fd = -1;  // the child's end of the socketpair
  const char* path = nullptr;
  char** argv = nullptr;
  char** envp = nullptr;
  const char* failure_prefix = nullptr;  // "... cannot run PATH: "
  const char* failure_suffix = nullptr;  // " (why it should be there)\n"
};

[[noreturn]] void exec_child(const ChildExec& c) {
  // SIGTERM, not SIGKILL: a child whose relay died writes its partial results.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != c.relay) ::_exit(k_exit_relay_gone);
  // A process group of its own: Open MPI ends a job by signalling each
  // rank's process group (SIGTERM, then SIGKILL a second later), which would
  // kill this child before it wrote its partial results and removed its
  // directories. It ends through the relay instead: the forwarded SIGTERM,
  // and PR_SET_PDEATHSIG once the relay is gone.
  ::setpgid(0, 0);
  // The relay's handler only notes a signal: one it forwards before execve
  // must end this process, not vanish into this copy of the note.
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  // MPI's own descriptors (its launcher's sockets, shared memory) are not the
  // child's; where close_range is missing (Linux < 5.11) they stay.
  if (c.fd > 3) ::close_range(3, static_cast<unsigned>(c.fd) - 1, CLOSE_RANGE_CLOEXEC);
  ::close_range(static_cast<unsigned>(std::max(3, c.fd + 1)), ~0U, CLOSE_RANGE_CLOEXEC);  // 0-2 stay
  const int flags = ::fcntl(c.fd, F_GETFD);
  if (flags >= 0 && ::fcntl(c.fd, F_SETFD, flags & ~FD_CLOEXEC) == 0) ::execve(c.path, c.argv, c.envp);
  // strerrordesc_np, not strerror: no locale, no allocation.
  const char* why = ::strerrordesc_np(errno);
  write_text(2, c.failure_prefix);
  write_text(2, why != nullptr ? why : "unknown error");
  write_text(2, c.failure_suffix);
  ::_exit(k_exit_exec_failed);
}

// The relay's child: its pid and the relay's end of the socketpair, or why
// there is none. The end stays blocking (O_NONBLOCK would be shared with the
// child's end); the relay reads and writes it with MSG_DONTWAIT.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string failure;
};

Child start_child(int rank, int size, int argc, char** argv) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Child{.failure = fmt::format("relay could not start sluice run: socketpair: {}", std::strerror(errno))};
  }
  std::string path = sluice_path(argv[0]);
  std::vector<std::string> args(argv, argv + argc);
  args[0] = path;
  std::vector<std::string> env = child_environment(pair[1], rank, size);
  std::vector<char*> c_args = c_strings(args);
  std::vector<char*> c_env = c_strings(env);
  const std::string prefix = fmt::format("sluice run (relay of rank {}): cannot run {}: ", rank, path);
  const std::string suffix = " (sluice-node starts the sluice built beside it: cmake --build build)\n";
  const ChildExec exec{::getpid(), pair[1], path.c_str(), c_args.data(), c_env.data(), prefix.c_str(), suffix.c_str()};
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(exec);
  const int fork_errno = errno;
  ::close(pair[1]);
  if (pid < 0) {
    ::close(pair[0]);
    return Child{.failure = fmt::format("relay could not start sluice run: fork: {}", std::strerror(fork_errno))};
  }
  return Child{.pid = pid, .fd = pair[0], .failure = {}};
}

// "exit N" or "killed by signal N (NAME)", and the exit status that goes with it.
std::pair<std::string, int> how_ended(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return {fmt::format("killed by signal {} ({})", sig, ::strsignal(sig)), k_exit_signal_base + sig};
  }
  const int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : k_exit_relay_failed;
  return {fmt::format("exit {}", code), code};
}

class SweepRelay {
 public:
  SweepRelay(int rank, int size, Child child)
      : rank_(rank), size_(size), child_(std::move(child)), rank_ended_(static_cast<std::size_t>(size), false) {}
  SweepRelay(const SweepRelay&) = delete;
  SweepRelay& operator=(const SweepRelay&) = delete;

  // Relays until every rank's child ended; MPI_Finalize; the child's exit status.
  int run();

 private:
  // running: the socket is open. closing: it reached EOF (or the child was
  // killed) and the child is not reaped yet. ended: reaped and announced.
  enum class ChildState { running, closing, ended };

  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<std::byte> bytes;  // MPI reads it until the request completes
  };

  bool finished() const { return state_ == ChildState::ended && ranks_ended_ == size_ - 1; }
  bool may_read_child() const {
    return pending_sends_.size() < k_max_pending_sends && pending_send_bytes_ < k_max_pending_send_bytes;
  }
  void log(std::string_view line) const { say(rank_, line); }

  void forward_signal();
  void pump_socket(int timeout_ms);
  void read_from_child();
  void take_child_header();
  void relay_child_frame();
  void write_to_child();
  void queue_to_child(std::vector<std::byte> frame);
  void close_child_socket(std::string_view why);
  void kill_child(std::string_view why);
  void reap_child();
  void announce_own_end(const std::string& how, int exit_status);
  bool receive_mpi_messages();
  void on_mpi_message(int source, int tag, std::vector<std::byte> frame);
  void isend(int destination, int tag, std::vector<std::byte> bytes);
  void test_pending_sends();
  int finish();
  void check_mpi(int code, std::string_view call);

  const int rank_;
  const int size_;
  Child child_;
  ChildState state_ = ChildState::running;
  int exit_status_ = 0;
  // Child -> relay: the frame being read.
  std::array<std::byte, k_sweep_frame_header_bytes> header_bytes_{};
  std::size_t header_filled_ = 0;
  std::optional<SweepFrameHeader> header_;  // set once header_bytes_ is whole and valid
  std::vector<std::byte> payload_;
  std::size_t payload_filled_ = 0;
  // Relay -> child: whole frames (header and payload), the first partly written.
  std::deque<std::vector<std::byte>> to_child_;
  std::size_t to_child_offset_ = 0;  // bytes of to_child_.front() written
  std::size_t to_child_bytes_ = 0;   // bytes queued, less to_child_offset_
  bool child_unwritable_ = false;    // a write failed: the child no longer reads
  // MPI.
  std::vector<PendingSend> pending_sends_;
  std::size_t pending_send_bytes_ = 0;
  std::vector<bool> rank_ended_;  // by rank: its relay announced its child's end
  int ranks_ended_ = 0;           // how many of the other ranks did
};

int SweepRelay::run() {
  if (child_.pid < 0) {
    log(child_.failure);
    state_ = ChildState::closing;
    announce_own_end(child_.failure, k_exit_relay_failed);
  }
  bool busy = false;  // MPI had messages last turn: do not wait on the socket
  while (!finished()) {
    forward_signal();
    pump_socket(busy ? 0 : k_poll_timeout_ms);
    if (state_ == ChildState::closing) reap_child();
    busy = receive_mpi_messages();
    test_pending_sends();
  }
  return finish();
}

void SweepRelay::forward_signal() {
  const int sig = g_signal_to_forward.exchange(0);
  if (sig == 0) return;
  if (state_ == ChildState::ended) {
    log(fmt::format("{} after this rank's sluice run ended: waiting for the other ranks to end", ::strsignal(sig)));
    return;
  }
  SLUICE_ASSERT(child_.pid > 0);  // kill(-1, ...) would signal every process
  log(fmt::format("{}: forwarded to sluice run (pid {}), which writes its partial results", ::strsignal(sig),
                  child_.pid));
  ::kill(child_.pid, sig);
}

// One wait of up to timeout_ms on the socket (a plain wait once it is
// closed), then whatever reading and writing it allows.
void SweepRelay::pump_socket(int timeout_ms) {
  pollfd p{child_.fd, 0, 0};
  if (state_ == ChildState::running) {
    if (may_read_child()) p.events |= POLLIN;
    if (!to_child_.empty()) p.events |= POLLOUT;
  }
  // No events (closed, or reading paused with nothing to write): wait on
  // nothing, so a hung-up socket does not wake every turn.
  const int ready = ::poll(&p, p.events != 0 ? 1 : 0, timeout_ms);
  if (ready <= 0) return;  // timeout, or EINTR (a signal to forward)
  if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0 && may_read_child()) read_from_child();
  if (state_ == ChildState::running && (p.revents & (POLLOUT | POLLHUP | POLLERR)) != 0) write_to_child();
}

// Reads until the socket is empty, the turn's budget is spent or sends are
// too many; a whole frame is relayed as soon as it is read.
void SweepRelay::read_from_child() {
  std::size_t budget = k_max_child_read_bytes_per_turn;
  while (state_ == ChildState::running && budget > 0 && may_read_child()) {
    std::byte* into = header_ ? payload_.data() + payload_filled_ : header_bytes_.data() + header_filled_;
    const std::size_t want = header_ ? payload_.size() - payload_filled_ : header_bytes_.size() - header_filled_;
    SLUICE_ASSERT(want > 0);  // a whole frame is relayed, a whole header taken, as soon as read
    const ssize_t n = ::recv(child_.fd, into, std::min(want, budget), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      // A reset comes only after every byte the child wrote was read.
      close_child_socket(n == 0 ? "end of file" : std::strerror(errno));
      return;
    }
    const auto got = static_cast<std::size_t>(n);
    budget -= got;
    if (header_) {
      payload_filled_ += got;
    } else {
      header_filled_ += got;
    }
    if (!header_ && header_filled_ == header_bytes_.size()) take_child_header();
    if (header_ && payload_filled_ == payload_.size()) relay_child_frame();
  }
}

void SweepRelay::take_child_header() {
  const std::optional<SweepFrameHeader> h = decode_sweep_frame_header(header_bytes_);
  if (!h || h->kind != SweepFrameKind::data) {
    header_filled_ = 0;  // said here, not again as a frame cut short
    kill_child(h ? "sent an ended frame (only the relay sends those)"
                 : fmt::format("sent a frame header that does not decode (a kind other than data/ended, or a "
                               "payload over {} bytes)",
                               scenario::k_max_sweep_frame_bytes));
    return;
  }
  header_ = h;
  payload_.assign(h->payload_bytes, std::byte{0});
  payload_filled_ = 0;
}

void SweepRelay::relay_child_frame() {
  const std::uint32_t destination = header_->rank;
  header_.reset();
  header_filled_ = 0;
  std::vector<std::byte> payload = std::exchange(payload_, {});
  if (destination >= static_cast<std::uint32_t>(size_) || destination == static_cast<std::uint32_t>(rank_)) {
    log(fmt::format("sluice run sent {} bytes to rank {} (ranks: 0 to {}, this is {}): dropped", payload.size(),
                    destination, size_ - 1, rank_));
    return;
  }
  isend(static_cast<int>(destination), k_mpi_data_tag, std::move(payload));
}

void SweepRelay::write_to_child() {
  while (!to_child_.empty() && !child_unwritable_) {
    const std::vector<std::byte>& front = to_child_.front();
    const ssize_t n = ::send(child_.fd, front.data() + to_child_offset_, front.size() - to_child_offset_,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0) {
      // The child closed its end, or exited: what it wrote is still to be
      // read (EOF comes after it), so only this direction stops. Frames
      // that come after a child's end are dropped by design (the wire's
      // rule): only an error other than that is worth a line.
      if (errno != EPIPE && errno != ECONNRESET) {
        log(fmt::format("writing to sluice run failed ({}): {} queued bytes dropped", std::strerror(errno),
                        to_child_bytes_));
      }
      child_unwritable_ = true;
      to_child_.clear();
      to_child_offset_ = 0;
      to_child_bytes_ = 0;
      return;
    }
    to_child_offset_ += static_cast<std::size_t>(n);
    to_child_bytes_ -= static_cast<std::size_t>(n);
    if (to_child_offset_ == front.size()) {
      to_child_.pop_front();
      to_child_offset_ = 0;
    }
  }
}

// `frame` has its header filled in. Dropped once the child no longer reads.
void SweepRelay::queue_to_child(std::vector<std::byte> frame) {
  if (state_ != ChildState::running || child_unwritable_) return;
  if (to_child_bytes_ + frame.size() > k_max_to_child_queue_bytes) {
    kill_child(fmt::format("left {} bytes of frames unread (limit {})", to_child_bytes_ + frame.size(),
                           k_max_to_child_queue_bytes));
    return;
  }
  to_child_bytes_ += frame.size();
  to_child_.push_back(std::move(frame));
}

void SweepRelay::close_child_socket(std::string_view why) {
  SLUICE_ASSERT(state_ == ChildState::running);
  const std::size_t partial = header_ ? header_bytes_.size() + payload_filled_ : header_filled_;
  if (partial > 0) log(fmt::format("sluice run's socket closed ({}) mid-frame: {} bytes dropped", why, partial));
  ::close(child_.fd);
  child_.fd = -1;
  state_ = ChildState::closing;
  to_child_.clear();
  to_child_offset_ = 0;
  to_child_bytes_ = 0;
  payload_.clear();
  reap_child();
}

void SweepRelay::kill_child(std::string_view why) {
  SLUICE_ASSERT(child_.pid > 0);  // kill(-1, ...) would signal every process
  log(fmt::format("sluice run (pid {}) {}: killing it", child_.pid, why));
  ::kill(child_.pid, SIGKILL);
  close_child_socket("killed");
}

// Once the socket closed: the child's end, when it has come.
void SweepRelay::reap_child() {
  int wait_status = 0;
  const pid_t got = ::waitpid(child_.pid, &wait_status, WNOHANG);
  if (got == 0 || (got < 0 && errno == EINTR)) return;  // not yet: the next turn looks again
  if (got < 0) {
    const std::string how = fmt::format("lost (waitpid: {})", std::strerror(errno));
    log("sluice run (pid " + std::to_string(child_.pid) + ") " + how);
    announce_own_end(how, k_exit_relay_failed);
    return;
  }
  const auto [how, exit_status] = how_ended(wait_status);
  announce_own_end(how, exit_status);
}

void SweepRelay::announce_own_end(const std::string& how, int exit_status) {
  SLUICE_ASSERT(state_ == ChildState::closing);
  state_ = ChildState::ended;
  exit_status_ = exit_status;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto* text = reinterpret_cast<const std::byte*>(how.data());
    isend(r, k_mpi_ended_tag, std::vector<std::byte>(text, text + how.size()));
  }
}

// Up to a turn's worth of messages, each received once MPI_Improbe gave its
// size. True: there was at least one.
bool SweepRelay::receive_mpi_messages() {
  for (int i = 0; i < k_max_mpi_messages_per_turn; ++i) {
    int found = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status{};
    check_mpi(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &message, &status), "MPI_Improbe");
    if (found == 0) return i > 0;
    int count = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    // Room for the frame header in front, so the payload is not copied again.
    std::vector<std::byte> frame(k_sweep_frame_header_bytes + static_cast<std::size_t>(count));
    check_mpi(MPI_Mrecv(frame.data() + k_sweep_frame_header_bytes, count, MPI_BYTE, &message, MPI_STATUS_IGNORE),
              "MPI_Mrecv");
    on_mpi_message(status.MPI_SOURCE, status.MPI_TAG, std::move(frame));
  }
  return true;
}

void SweepRelay::on_mpi_message(int source, int tag, std::vector<std::byte> frame) {
  const std::size_t payload_bytes = frame.size() - k_sweep_frame_header_bytes;
  if ((tag != k_mpi_data_tag && tag != k_mpi_ended_tag) || source < 0 || source >= size_ || source == rank_ ||
      payload_bytes > scenario::k_max_sweep_frame_bytes) {
    // Only relays send on this communicator, and they send none of these.
    log(fmt::format("an MPI message no relay sends (from rank {}, tag {}, {} bytes): dropped", source, tag,
                    payload_bytes));
    return;
  }
  const auto source_index = static_cast<std::size_t>(source);
  if (tag == k_mpi_ended_tag) {
    if (rank_ended_[source_index]) {
      log(fmt::format("rank {} announced its end twice: the second dropped", source));
      return;
    }
    rank_ended_[source_index] = true;
    ++ranks_ended_;
  }
  const SweepFrameHeader h{static_cast<std::uint32_t>(payload_bytes), static_cast<SweepFrameKind>(tag),
                           static_cast<std::uint32_t>(source)};
  const auto header = encode_sweep_frame_header(h);
  std::copy(header.begin(), header.end(), frame.begin());
  queue_to_child(std::move(frame));
}

void SweepRelay::isend(int destination, int tag, std::vector<std::byte> bytes) {
  pending_send_bytes_ += bytes.size();
  pending_sends_.push_back(PendingSend{MPI_REQUEST_NULL, std::move(bytes)});
  // The vector's heap buffer stays where it is when pending_sends_ grows.
  PendingSend& send = pending_sends_.back();
  check_mpi(MPI_Isend(send.bytes.data(), static_cast<int>(send.bytes.size()), MPI_BYTE, destination, tag,
                      MPI_COMM_WORLD, &send.request),
            "MPI_Isend");
}

void SweepRelay::test_pending_sends() {
  for (std::size_t i = 0; i < pending_sends_.size();) {
    int done = 0;
    check_mpi(MPI_Test(&pending_sends_[i].request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done == 0) {
      ++i;
      continue;
    }
    pending_send_bytes_ -= pending_sends_[i].bytes.size();
    // Completion order does not matter: the last one takes this one's place.
    if (i + 1 != pending_sends_.size()) pending_sends_[i] = std::move(pending_sends_.back());
    pending_sends_.pop_back();
  }
}

// Every rank's child ended, so every relay still receives until it has our
// end (which follows our data): the sends in flight complete.
int SweepRelay::finish() {
  for (PendingSend& send : pending_sends_) check_mpi(MPI_Wait(&send.request, MPI_STATUS_IGNORE), "MPI_Wait");
  pending_sends_.clear();
  MPI_Finalize();
  return exit_status_;
}

// A relay that cannot reach the others would leave them waiting for its
// end: MPI_Abort ends the job instead (each child gets its PR_SET_PDEATHSIG
// SIGTERM and writes its partial results).
void SweepRelay::check_mpi(int code, std::string_view call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  log(fmt::format("{} failed: {}; aborting the MPI job", call,
                  std::string_view(text, static_cast<std::size_t>(length))));
  MPI_Abort(MPI_COMM_WORLD, k_exit_relay_failed);
  std::_Exit(k_exit_relay_failed);  // MPI_Abort does not return; should it, the relay must not go on
}

}  // namespace

int run_sweep_relay(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fmt::print(stderr, "sluice run: MPI_Init_thread failed (is this rank started by mpirun or srun?)\n");
    return k_exit_relay_failed;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Before the fork: a signal that comes while the child starts is forwarded once it has.
  install_signal_forwarding();
  SweepRelay relay(rank, size, start_child(rank, size, argc, argv));
  return relay.run();
}

#else  // no MPI in this build

namespace {
// As a usage error: this build cannot do what was asked.
constexpr int k_exit_no_mpi = 2;
}  // namespace

int run_sweep_relay(int /*argc*/, char** /*argv*/) {
  fmt::print(stderr, "sluice run: this build has no MPI (install libopenmpi-dev and rebuild)\n");
  return k_exit_no_mpi;
}

#endif

}  // namespace sluice::emulate
