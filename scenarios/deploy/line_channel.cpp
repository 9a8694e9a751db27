#include "scenarios/deploy/line_channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace sluice::emulate {
namespace {

int remaining_ms(LineChannel::Deadline deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

}  // namespace

LineChannel::~LineChannel() { close(); }

LineChannel::LineChannel(LineChannel&& other) noexcept : fd_(std::exchange(other.fd_, -1)), in_(std::move(other.in_)) {}

LineChannel& LineChannel::operator=(LineChannel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    in_ = std::move(other.in_);
  }
  return *this;
}

void LineChannel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status LineChannel::send_line(const std::string& line, Deadline deadline) {
  if (fd_ < 0) return error(StatusCode::unavailable, "bootstrap channel is closed");
  std::string data = line + "\n";
  std::size_t sent = 0;
  while (sent < data.size()) {
    pollfd p{fd_, POLLOUT, 0};
    const int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return error(StatusCode::timed_out, "bootstrap channel: send timed out");
    const ssize_t w = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return error(StatusCode::unavailable, "bootstrap channel: peer gone while sending");
    }
    sent += static_cast<std::size_t>(w);
  }
  return ok_status();
}

Status LineChannel::read_available() {
  if (fd_ < 0) return error(StatusCode::unavailable, "bootstrap channel is closed");
  char buffer[65536];
  while (true) {
    const ssize_t r = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (r > 0) {
      in_.append(buffer, static_cast<std::size_t>(r));
      if (in_.size() > k_max_line_bytes && in_.find('\n') == std::string::npos) {
        return error(StatusCode::corrupt,
                     "bootstrap channel: a line over " + std::to_string(k_max_line_bytes) + " bytes");
      }
      continue;
    }
    if (r == 0) return error(StatusCode::unavailable, "bootstrap channel: peer closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ok_status();
    return error(StatusCode::unavailable, "bootstrap channel: receive failed");
  }
}

std::optional<std::string> LineChannel::take_line() {
  const std::size_t eol = in_.find('\n');
  if (eol == std::string::npos) return std::nullopt;
  std::string line = in_.substr(0, eol);
  in_.erase(0, eol + 1);
  return line;
}

Result<std::string> LineChannel::read_line(Deadline deadline) {
  while (true) {
    if (std::optional<std::string> line = take_line()) return std::move(*line);
    if (fd_ < 0) return error(StatusCode::unavailable, "bootstrap channel is closed");
    pollfd p{fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return error(StatusCode::timed_out, "bootstrap channel: no answer before the deadline");
    Status st = read_available();
    if (!st.ok()) {
      if (std::optional<std::string> line = take_line()) return std::move(*line);
      return st;
    }
  }
}

}  // namespace sluice::emulate
