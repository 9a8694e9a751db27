// bench::start_loopback_server (tests/bench/loopback_port.hpp): a bench's
// peer server is handed to the client only once it listens, and one whose
// port was taken before it bound is started again on another port.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/common/assert.hpp"
#include "tests/bench/loopback_port.hpp"

namespace sluice::bench {
namespace {

// A server that binds 127.0.0.1:port without SO_REUSEADDR, listens, and
// stays 30 s: bind fails while any other socket holds the port.
std::vector<std::string> python_listener(int port) {
  return {"python3", "-c",
          "import socket,sys,time\n"
          "s=socket.socket()\n"
          "s.bind(('127.0.0.1',int(sys.argv[1])))\n"
          "s.listen()\n"
          "time.sleep(30)\n",
          std::to_string(port)};
}

// A socket connected over loopback (to a listener of its own); its local
// port is taken but nothing listens on it.
struct TakenPort {
  int listener = -1, client = -1, accepted = -1;
  int port = 0;
  TakenPort() {
    listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    SLUICE_ASSERT(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    SLUICE_ASSERT(::listen(listener, 1) == 0);
    SLUICE_ASSERT(::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    SLUICE_ASSERT(::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    accepted = ::accept(listener, nullptr, nullptr);
    sockaddr_in local{};
    len = sizeof local;
    SLUICE_ASSERT(::getsockname(client, reinterpret_cast<sockaddr*>(&local), &len) == 0);
    port = ntohs(local.sin_port);
  }
  ~TakenPort() {
    for (int fd : {accepted, client, listener}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

bool have_python3() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

TEST(LoopbackServer, ReturnsOnlyOnceTheServerListens) {
  if (!have_python3()) GTEST_SKIP() << "python3 not installed";
  LoopbackServer s = start_loopback_server(python_listener);
  ASSERT_GT(s.pid, 0) << s.why;
  EXPECT_TRUE(port_listening(s.port));
  stop_loopback_server(&s);
  EXPECT_EQ(s.pid, -1);
}

TEST(LoopbackServer, AServerWhosePortWasTakenStartsAgainOnAnotherPort) {
  if (!have_python3()) GTEST_SKIP() << "python3 not installed";
  TakenPort taken;
  ASSERT_FALSE(port_listening(taken.port));
  int picks = 0;
  LoopbackServer s =
      start_loopback_server(python_listener, {}, [&] { return picks++ == 0 ? taken.port : free_loopback_port(); });
  ASSERT_GT(s.pid, 0) << s.why;
  EXPECT_EQ(picks, 2);
  EXPECT_NE(s.port, taken.port);
  EXPECT_TRUE(port_listening(s.port));
  stop_loopback_server(&s);
}

TEST(LoopbackServer, GivesUpWithTheReasonWhenEveryPortIsTaken) {
  if (!have_python3()) GTEST_SKIP() << "python3 not installed";
  TakenPort taken;
  LoopbackServer s = start_loopback_server(python_listener, {}, [&] { return taken.port; });
  EXPECT_EQ(s.pid, -1);
  EXPECT_NE(s.why.find("exited before listening"), std::string::npos) << s.why;
}

}  // namespace
}  // namespace sluice::bench
