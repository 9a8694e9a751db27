#include "transports/shm/shm_os.hpp"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace sluice::transport::shm {
namespace {

Result<sockaddr_un> abstract_address(const std::string& name, socklen_t* len) {
  if (name.empty() || name.size() > k_shm_max_name_bytes) {
    return error(StatusCode::invalid_argument,
                 "shm address: name '" + name + "' must have 1.." + std::to_string(k_shm_max_name_bytes) + " bytes");
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  address.sun_path[0] = '\0';
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return address;
}

}  // namespace

Result<std::string> parse_shm_address(std::string_view text) {
  if (!text.starts_with(k_shm_address_prefix) || text.size() == k_shm_address_prefix.size() ||
      text.size() - k_shm_address_prefix.size() > k_shm_max_name_bytes) {
    return error(StatusCode::invalid_argument, "shm address: '" + std::string(text) + "' is not shm:NAME (NAME 1.." +
                                                   std::to_string(k_shm_max_name_bytes) + " bytes)");
  }
  return std::string(text.substr(k_shm_address_prefix.size()));
}

std::string errno_text(int err) {
  const char* name = nullptr;
  switch (err) {
    case ECONNREFUSED: name = "ECONNREFUSED"; break;
    case ENOENT: name = "ENOENT"; break;
    case EPERM: name = "EPERM"; break;
    case ESRCH: name = "ESRCH"; break;
    case EFAULT: name = "EFAULT"; break;
    case EAGAIN: name = "EAGAIN"; break;
    case EADDRINUSE: name = "EADDRINUSE"; break;
    case ENOMEM: name = "ENOMEM"; break;
    case EMFILE: name = "EMFILE"; break;
    case ECONNRESET: name = "ECONNRESET"; break;
    case EPIPE: name = "EPIPE"; break;
    default: break;
  }
  std::string text = std::strerror(err);
  return name == nullptr ? text + " (errno " + std::to_string(err) + ")" : text + " (" + name + ")";
}

Result<int> listen_abstract(const std::string& name) {
  socklen_t len = 0;
  Result<sockaddr_un> address = abstract_address(name, &len);
  if (!address.ok()) return address.status();
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return error(StatusCode::io_error, "shm listen: socket: " + errno_text(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*address), len) != 0 || ::listen(fd, k_shm_listen_backlog) != 0) {
    const int err = errno;
    ::close(fd);
    return error(err == EADDRINUSE ? StatusCode::already_exists : StatusCode::io_error,
                 "shm listen on @" + name + ": " + errno_text(err));
  }
  return fd;
}

Result<int> connect_abstract(const std::string& name) {
  socklen_t len = 0;
  Result<sockaddr_un> address = abstract_address(name, &len);
  if (!address.ok()) return address.status();
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return error(StatusCode::io_error, "shm connect: socket: " + errno_text(errno));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*address), len) != 0) {
    const int err = errno;
    ::close(fd);
    return error(StatusCode::unavailable, "shm connect to @" + name + ": " + errno_text(err));
  }
  return fd;
}

Status send_with_fds(int socket_fd, std::span<const std::byte> bytes, std::span<const int> fds) {
  iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * k_shm_max_passed_fds)> control{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    if (cmsg == nullptr) return error(StatusCode::internal, "shm hand-shake send: no control header room");
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  const ssize_t n = ::sendmsg(socket_fd, &msg, MSG_NOSIGNAL);
  if (n < 0) {
    const int err = errno;
    return error(err == EAGAIN ? StatusCode::again : StatusCode::unavailable,
                 "shm hand-shake send: " + errno_text(err));
  }
  if (static_cast<std::size_t>(n) != bytes.size()) {
    return error(StatusCode::io_error, "shm hand-shake send: short datagram");
  }
  return ok_status();
}

Status receive_with_fds(int socket_fd, std::span<std::byte> bytes, int* fds_out, std::size_t* fd_count, bool* eof) {
  *eof = false;
  *fd_count = 0;
  iovec iov{bytes.data(), bytes.size()};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * (k_shm_max_passed_fds + 2))> control{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  const ssize_t n = ::recvmsg(socket_fd, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) {
    const int err = errno;
    if (err == EAGAIN || err == EINTR) return error(StatusCode::again, "shm hand-shake: nothing yet");
    return error(StatusCode::unavailable, "shm hand-shake receive: " + errno_text(err));
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (*fd_count < k_shm_max_passed_fds) {
        fds_out[(*fd_count)++] = fd;
      } else {
        ::close(fd);
      }
    }
  }
  if (n == 0) {
    *eof = true;
    return ok_status();
  }
  if (static_cast<std::size_t>(n) != bytes.size() || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    return error(StatusCode::corrupt, "shm hand-shake: datagram of " + std::to_string(n) + " bytes, expected " +
                                          std::to_string(bytes.size()));
  }
  return ok_status();
}

Result<pid_t> socket_peer_pid(int socket_fd) {
  ucred credentials{};
  socklen_t len = sizeof credentials;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &credentials, &len) != 0 || credentials.pid <= 0) {
    return error(StatusCode::unavailable, "shm hand-shake: SO_PEERCRED: " + errno_text(errno));
  }
  return credentials.pid;
}

Result<std::byte*> create_segment(std::size_t bytes, int* fd_out) {
  const int fd = ::memfd_create("sluice-shm", MFD_CLOEXEC);
  if (fd < 0) return error(StatusCode::io_error, "shm segment: memfd_create: " + errno_text(errno));
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    return error(StatusCode::io_error, "shm segment: ftruncate to " + std::to_string(bytes) + ": " + errno_text(err));
  }
  Result<std::byte*> base = map_segment(fd, bytes);
  if (!base.ok()) {
    ::close(fd);
    return base.status();
  }
  *fd_out = fd;
  return base;
}

Result<std::byte*> map_segment(int fd, std::size_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes) {
    return error(StatusCode::corrupt,
                 "shm segment: descriptor is not a segment of " + std::to_string(bytes) + " bytes");
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return error(StatusCode::io_error, "shm segment: mmap: " + errno_text(errno));
  return static_cast<std::byte*>(base);
}

void unmap_segment(std::byte* base, std::size_t bytes) {
  if (base != nullptr) ::munmap(base, bytes);
}

Status copy_from_process(pid_t pid, std::uint64_t remote_address, std::span<std::byte> local) {
  if (local.empty()) return ok_status();  // nothing to move (and memcpy may not see a null pointer)
  if (pid == ::getpid()) {
    std::memcpy(local.data(), reinterpret_cast<const void*>(remote_address), local.size());
    return ok_status();
  }
  std::size_t done = 0;
  while (done < local.size()) {
    iovec mine{local.data() + done, local.size() - done};
    iovec theirs{reinterpret_cast<void*>(remote_address + done), local.size() - done};
    const ssize_t n = ::process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (n <= 0) {
      return error(StatusCode::io_error,
                   "shm copy from process " + std::to_string(pid) + ": " + errno_text(n < 0 ? errno : EFAULT));
    }
    done += static_cast<std::size_t>(n);
  }
  return ok_status();
}

Status copy_to_process(pid_t pid, std::uint64_t remote_address, std::span<const std::byte> local) {
  if (local.empty()) return ok_status();  // nothing to move (and memcpy may not see a null pointer)
  if (pid == ::getpid()) {
    std::memcpy(reinterpret_cast<void*>(remote_address), local.data(), local.size());
    return ok_status();
  }
  std::size_t done = 0;
  while (done < local.size()) {
    iovec mine{const_cast<std::byte*>(local.data() + done), local.size() - done};
    iovec theirs{reinterpret_cast<void*>(remote_address + done), local.size() - done};
    const ssize_t n = ::process_vm_writev(pid, &mine, 1, &theirs, 1, 0);
    if (n <= 0) {
      return error(StatusCode::io_error,
                   "shm copy to process " + std::to_string(pid) + ": " + errno_text(n < 0 ? errno : EFAULT));
    }
    done += static_cast<std::size_t>(n);
  }
  return ok_status();
}

}  // namespace sluice::transport::shm
