#include "scenarios/deploy/frame_relay.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "core/common/assert.hpp"
#include "scenarios/runner/sweep_relay_wire.hpp"

namespace sluice::emulate {

using scenario::decode_sweep_frame_header;
using scenario::encode_sweep_frame_header;
using scenario::k_sweep_frame_header_bytes;
using scenario::SweepFrameHeader;
using scenario::SweepFrameKind;

FrameRelay::FrameRelay(std::vector<int> fds) : peers_(fds.size()) {
  for (std::size_t r = 0; r < fds.size(); ++r) {
    peers_[r].fd = fds[r];
    const int flags = ::fcntl(fds[r], F_GETFL);
    if (flags >= 0) ::fcntl(fds[r], F_SETFL, flags | O_NONBLOCK);
  }
}

FrameRelay::~FrameRelay() {
  for (Peer& p : peers_) {
    if (p.fd >= 0) ::close(p.fd);
  }
}

std::uint32_t FrameRelay::open_count() const {
  std::uint32_t n = 0;
  for (const Peer& p : peers_) n += p.fd >= 0 ? 1 : 0;
  return n;
}

void FrameRelay::add_polls(std::vector<pollfd>& polls) const {
  for (const Peer& p : peers_) {
    const short events = static_cast<short>(POLLIN | (p.out.size() > p.out_sent ? POLLOUT : 0));
    polls.push_back(pollfd{p.fd, events, 0});
  }
}

void FrameRelay::on_polled(const pollfd* first) {
  for (std::uint32_t r = 0; r < size(); ++r) {
    const short ev = first[r].revents;
    if (peers_[r].fd < 0 || ev == 0) continue;
    if ((ev & (POLLIN | POLLHUP | POLLERR)) != 0) read_from(r);
    if (peers_[r].fd >= 0 && (ev & POLLOUT) != 0) write_to(r);
  }
}

void FrameRelay::end(std::uint32_t rank, const std::string& how) {
  SLUICE_ASSERT(rank < size());
  Peer& p = peers_[rank];
  if (p.fd < 0) return;
  ::close(p.fd);
  p.fd = -1;
  p.in.clear();
  p.out.clear();
  p.out_sent = 0;
  for (std::uint32_t o = 0; o < size(); ++o) {
    if (peers_[o].fd >= 0) queue(o, static_cast<std::uint32_t>(SweepFrameKind::ended), rank, how);
  }
}

void FrameRelay::read_from(std::uint32_t rank) {
  Peer& p = peers_[rank];
  std::size_t got = 0;
  char buffer[64 * 1024];
  while (got < k_relay_read_chunk_bytes) {
    const ssize_t n = ::recv(p.fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 0) {
      p.in.append(buffer, static_cast<std::size_t>(n));
      got += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    route_from(rank);  // whole frames that came before the end still go
    end(rank, n == 0 ? "its process ended" : std::string("its socket failed: ") + std::strerror(errno));
    return;
  }
  route_from(rank);
}

void FrameRelay::route_from(std::uint32_t rank) {
  Peer& p = peers_[rank];
  std::size_t at = 0;
  while (p.fd >= 0 && p.in.size() - at >= k_sweep_frame_header_bytes) {
    std::array<std::byte, k_sweep_frame_header_bytes> head{};
    std::memcpy(head.data(), p.in.data() + at, head.size());
    const std::optional<SweepFrameHeader> h = decode_sweep_frame_header(head);
    if (!h || h->kind != SweepFrameKind::data || h->rank >= size()) {
      end(rank, !h                                ? "it sent a malformed frame"
                : h->kind != SweepFrameKind::data ? "it sent a frame that is not data"
                                                  : "it sent a frame to rank " + std::to_string(h->rank));
      return;
    }
    if (p.in.size() - at - head.size() < h->payload_bytes) break;
    const std::string payload = p.in.substr(at + head.size(), h->payload_bytes);
    at += head.size() + h->payload_bytes;
    // A frame to a rank that ended is dropped, as the MPI relay drops it.
    if (peers_[h->rank].fd >= 0) queue(h->rank, static_cast<std::uint32_t>(SweepFrameKind::data), rank, payload);
  }
  if (p.fd >= 0) p.in.erase(0, at);
}

void FrameRelay::queue(std::uint32_t to, std::uint32_t kind, std::uint32_t rank, const std::string& payload) {
  Peer& p = peers_[to];
  SLUICE_ASSERT(p.fd >= 0);
  if (p.out.size() - p.out_sent + k_sweep_frame_header_bytes + payload.size() > k_max_relay_queue_bytes) {
    end(to, "it stopped reading its frames (" + std::to_string(k_max_relay_queue_bytes) + " bytes waited)");
    return;
  }
  if (p.out_sent > 0 && p.out_sent * 2 >= p.out.size()) {
    p.out.erase(0, p.out_sent);
    p.out_sent = 0;
  }
  const auto header = encode_sweep_frame_header(
      SweepFrameHeader{static_cast<std::uint32_t>(payload.size()), static_cast<SweepFrameKind>(kind), rank});
  p.out.append(reinterpret_cast<const char*>(header.data()), header.size());
  p.out.append(payload);
}

void FrameRelay::write_to(std::uint32_t rank) {
  Peer& p = peers_[rank];
  while (p.out_sent < p.out.size()) {
    const ssize_t n = ::send(p.fd, p.out.data() + p.out_sent, p.out.size() - p.out_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      p.out_sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    end(rank, std::string("its socket failed: ") + std::strerror(errno));
    return;
  }
  p.out.clear();
  p.out_sent = 0;
}

}  // namespace sluice::emulate
