// The send path: packets queued per connection and gathered into sendmsg()
// calls straight from the registered regions.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "core/common/assert.hpp"
#include "core/proto/codec.hpp"
#include "transports/tcp/tcp_address.hpp"
#include "transports/tcp/tcp_transport_impl.hpp"

namespace sluice::transport::tcp::detail {

// ---- send path ----------------------------------------------------------------

namespace {
// Challenge and proof packets travel in the connection's auth queue.
bool item_is_auth(const TxItem& item) {
  const auto kind = static_cast<std::uint8_t>(item.head[4]);
  return kind == static_cast<std::uint8_t>(PacketKind::challenge) ||
         kind == static_cast<std::uint8_t>(PacketKind::proof);
}
}  // namespace

void TcpTransport::enqueue(Connection& c, TxItem item, bool flush_now) {
  if (c.dead) return;
  const bool auth = item_is_auth(item);
  if (auth) {
    // The protocol queues a challenge and one proof per connection (tcp_auth.hpp); more is a bug, never sent.
    c.auth_tx_bytes += item.total();
    SLUICE_ASSERT(c.auth_tx_bytes <= k_tcp_max_preauth_tx_bytes);
    peak_auth_tx_bytes_ = std::max<std::uint64_t>(peak_auth_tx_bytes_, c.auth_tx_bytes);
  }
  std::deque<TxItem>& queue = auth ? c.auth_tx : c.tx;
  queue.push_back(std::move(item));
  TxItem& placed = queue.back();
  if (!placed.owned.empty()) placed.body = placed.owned.data();
  if (flush_now) flush(c);
}

void TcpTransport::set_out_interest(Connection& c, bool on) {
  if (c.out_armed == on || c.dead) return;
  epoll_event ev{};
  ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
  ev.data.u64 = c.id;
  ::epoll_ctl(loop_.epoll_fd(), EPOLL_CTL_MOD, c.fd, &ev);
  c.out_armed = on;
}

void TcpTransport::flush(Connection& c) {
  if (c.dead || c.connecting) return;
  // Authentication packets go first; nothing else leaves before the peer proved itself.
  flush_queue(c, c.auth_tx);
  if (c.dead || !c.auth_tx.empty()) return;  // the socket is full: EPOLLOUT is armed
  if (c.authenticated) flush_queue(c, c.tx);
  if (c.dead || !c.tx.empty()) return;
  set_out_interest(c, false);
}

// Sends from `queue` until it is empty or the socket is full (then EPOLLOUT is armed).
void TcpTransport::flush_queue(Connection& c, std::deque<TxItem>& queue) {
  while (!c.dead && !queue.empty()) {
    std::array<iovec, k_tcp_max_iov> iov{};
    std::size_t count = 0;
    for (TxItem& item : queue) {
      if (count + 3 > iov.size()) break;
      std::size_t at = item.sent;
      const auto add = [&](const void* base, std::size_t bytes) {
        if (at < bytes) {
          iov[count++] = iovec{const_cast<std::byte*>(static_cast<const std::byte*>(base)) + at, bytes - at};
          at = 0;
        } else {
          at -= bytes;
        }
      };
      add(item.head.data(), item.head.size());
      add(item.text.data(), item.text.size());
      add(item.body, item.body_bytes);
    }
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = count;
    const ssize_t n = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        set_out_interest(c, true);
        return;
      }
      fail_connection(c, "send to " + c.remote + ": " + errno_text(errno), "send error");
      return;
    }
    auto sent = static_cast<std::size_t>(n);
    Peer* p = live_peer(c.peer);
    while (sent > 0 && !queue.empty()) {
      TxItem& front = queue.front();
      const std::size_t rest = front.total() - front.sent;
      if (sent < rest) {
        front.sent += sent;
        sent = 0;
      } else {
        sent -= rest;
        if (p != nullptr) p->queued_message_bytes -= front.message_bytes;
        queue.pop_front();
      }
    }
  }
}

}  // namespace sluice::transport::tcp::detail
