// Whole reads and writes on a blocking file descriptor (pipes, sockets),
// retried on EINTR and on short counts.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace sluice {

// Whether fd has something to read now (a stop pipe written by a signal
// handler, a closed peer); false for fd < 0. Never blocks.
inline bool readable_now(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

// Writes all n bytes; false on an error (errno set) or a write of 0.
inline bool write_exact(int fd, const void* from, std::size_t n) {
  const auto* p = static_cast<const char*>(from);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// write_exact for a socket: a peer that has closed gives false with errno
// EPIPE, never SIGPIPE, whatever the process's signal disposition.
inline bool send_exact(int socket_fd, const void* from, std::size_t n) {
  const auto* p = static_cast<const char*>(from);
  while (n > 0) {
    const ssize_t w = ::send(socket_fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Reads exactly n bytes; false at end of file or on an error (errno set).
inline bool read_exact(int fd, void* to, std::size_t n) {
  auto* p = static_cast<char*>(to);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace sluice
