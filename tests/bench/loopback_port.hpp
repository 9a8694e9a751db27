// A peer server (iperf3, sockperf) for a bench, listening on 127.0.0.1.
//
// free_loopback_port(): a TCP port that was free a moment ago. Another
// process may take it before the peer binds (a connect() elsewhere draws its
// local port from the same range), and the peer then exits at once.
//
// start_loopback_server(): forks the peer on a free port and returns only
// once the kernel lists a socket listening on that port (/proc/net/tcp and
// tcp6, state 0A), so the bench's client never races the server's bind. A
// peer that exits before it listens (its port was taken) is started again on
// another port, up to k_server_port_attempts; one that neither listens nor
// exits within k_server_listen_deadline_ms is killed. A fixed sleep before
// the first connect was not enough on the loaded 2-core CI machine (iperf3:
// "unable to connect to server: Connection refused" after 100 retries).
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace sluice::bench {

constexpr int k_server_port_attempts = 5;           // ports tried before giving up
constexpr int k_server_listen_deadline_ms = 30000;  // one start, bind to listen
constexpr int k_server_listen_poll_ms = 10;

inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// Whether /proc/net/<table> lists a socket in LISTEN on local `port`.
inline bool port_listed_as_listening(const char* table, int port) {
  std::ifstream in(std::string("/proc/net/") + table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    // "  sl  local_address rem_address   st ...": local is ADDR:PORT in hex.
    char local[128] = {}, remote[128] = {};
    unsigned state = 0;
    if (std::sscanf(line.c_str(), " %*d: %127s %127s %x", local, remote, &state) != 3) continue;
    const char* colon = std::strrchr(local, ':');
    if (colon == nullptr) continue;
    if (static_cast<int>(std::strtol(colon + 1, nullptr, 16)) == port && state == 0x0A) return true;
  }
  return false;
}

inline bool port_listening(int port) {
  return port_listed_as_listening("tcp", port) || port_listed_as_listening("tcp6", port);
}

struct LoopbackServer {
  pid_t pid = -1;  // -1: none started
  int port = 0;
  std::string why;  // when pid is -1
};

// Starts argv_for(port) (argv[0] looked up in PATH; stdout and stderr to
// /dev/null; child_setup, if set, runs in the child before exec) and waits
// until it listens, as the header says. pick_port chooses each attempt's port
// (free_loopback_port unless a test gives its own).
inline LoopbackServer start_loopback_server(const std::function<std::vector<std::string>(int)>& argv_for,
                                            const std::function<void()>& child_setup = {},
                                            const std::function<int()>& pick_port = free_loopback_port) {
  LoopbackServer s;
  for (int attempt = 0; attempt < k_server_port_attempts; ++attempt) {
    const int port = pick_port();
    if (port == 0) {
      s.why = "no free loopback port";
      continue;
    }
    const std::vector<std::string> args = argv_for(port);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      s.why = std::string("fork: ") + std::strerror(errno);
      return s;
    }
    if (pid == 0) {
      if (child_setup) child_setup();
      const int null_fd = ::open("/dev/null", O_WRONLY);
      if (null_fd >= 0) {
        ::dup2(null_fd, STDOUT_FILENO);
        ::dup2(null_fd, STDERR_FILENO);
      }
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_server_listen_deadline_ms);
    for (;;) {
      if (port_listening(port)) {
        s.pid = pid;
        s.port = port;
        return s;
      }
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        s.why = args[0] + " on port " + std::to_string(port) + " exited before listening (status " +
                std::to_string(status) + ")";
        break;  // its port was likely taken: another port
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        s.why = args[0] + " did not listen on port " + std::to_string(port) + " within " +
                std::to_string(k_server_listen_deadline_ms) + " ms";
        return s;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(k_server_listen_poll_ms));
    }
  }
  return s;
}

// Ends a server start_loopback_server started (it may have exited already).
inline void stop_loopback_server(LoopbackServer* s) {
  if (s->pid <= 0) return;
  ::kill(s->pid, SIGTERM);
  ::waitpid(s->pid, nullptr, 0);
  s->pid = -1;
}

}  // namespace sluice::bench
