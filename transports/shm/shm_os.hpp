// The operating-system pieces of the shm transport: addresses and abstract
// Unix sockets for the hand-shake, descriptor passing, shared segments
// (memfd) and copies to/from another process's memory.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.hpp"

namespace sluice::transport::shm {

// Addresses are "shm:NAME": NAME is an abstract Unix socket name (Linux,
// unix(7)): it lives in the network namespace, needs no file and vanishes
// with its socket. "shm:auto" asks the transport to pick a unique name.
inline constexpr std::string_view k_shm_address_prefix = "shm:";
inline constexpr std::string_view k_shm_auto_name = "auto";
// sockaddr_un's sun_path is 108 bytes; the abstract name starts after a NUL.
inline constexpr std::size_t k_shm_max_name_bytes = 100;
inline constexpr int k_shm_listen_backlog = 1024;
// Descriptors one hand-shake datagram carries.
inline constexpr std::size_t k_shm_max_passed_fds = 2;

// The NAME of "shm:NAME"; invalid_argument when the text is not one.
Result<std::string> parse_shm_address(std::string_view text);

// "connection refused (ECONNREFUSED)".
std::string errno_text(int err);

// A listening, non-blocking SOCK_SEQPACKET socket on the abstract name.
Result<int> listen_abstract(const std::string& name);
// A non-blocking SOCK_SEQPACKET socket connected to the abstract name
// (a Unix connect completes at once or fails at once).
Result<int> connect_abstract(const std::string& name);

// One datagram with descriptors attached. Non-blocking; again when the
// socket buffer is full.
Status send_with_fds(int socket_fd, std::span<const std::byte> bytes, std::span<const int> fds);
// Receives one datagram of exactly `bytes.size()` bytes; attached
// descriptors are appended to fds_out (at most k_shm_max_passed_fds; extra
// ones are closed). *eof is set on an orderly shutdown. again: nothing yet.
Status receive_with_fds(int socket_fd, std::span<std::byte> bytes, int* fds_out, std::size_t* fd_count, bool* eof);

// The pid of the process at the other end of a Unix socket (SO_PEERCRED),
// as this process's pid namespace sees it: what process_vm_readv needs, and
// not something the peer can claim falsely.
Result<pid_t> socket_peer_pid(int socket_fd);

// A memfd of `bytes` bytes, mapped shared; or maps an existing one (checking
// its size). Both return the mapping; unmap with unmap_segment.
Result<std::byte*> create_segment(std::size_t bytes, int* fd_out);
Result<std::byte*> map_segment(int fd, std::size_t bytes);
void unmap_segment(std::byte* base, std::size_t bytes);

// Copies between this process and `pid` (process_vm_readv/writev; the same
// process is served by memcpy). Loops over partial transfers. io_error names
// the pid and errno (EPERM: ptrace access refused; ESRCH: the process is gone).
Status copy_from_process(pid_t pid, std::uint64_t remote_address, std::span<std::byte> local);
Status copy_to_process(pid_t pid, std::uint64_t remote_address, std::span<const std::byte> local);

}  // namespace sluice::transport::shm
