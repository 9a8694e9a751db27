// The launcher/node bootstrap protocol and the bounded command runner,
// without namespaces: socket pairs and threads, and /bin/sh commands.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "scenarios/deploy/bootstrap_coordinator.hpp"
#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/deploy/socket_bootstrap.hpp"

namespace sluice::emulate {
namespace {

constexpr auto k_wait = std::chrono::seconds(30);

struct Pairs {
  std::vector<LineChannel> launcher;
  std::vector<int> nodes;
};

Pairs make_pairs(std::size_t n) {
  Pairs p;
  for (std::size_t i = 0; i < n; ++i) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    p.launcher.emplace_back(fds[0]);
    p.nodes.push_back(fds[1]);
  }
  return p;
}

TEST(BootstrapCoordinator, AnswersAllGatherBarrierAndKeepsTheGather) {
  Pairs p = make_pairs(3);
  std::vector<std::vector<std::string>> tables(3);
  std::vector<Status> barriers(3);
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      SocketBootstrap b(p.nodes[i], i, 3, k_wait);
      tables[i] = *b.all_gather("addr" + std::to_string(i));
      barriers[i] = b.barrier("up");
      EXPECT_TRUE(b.gather_to_root("doc" + std::to_string(i))->empty());  // the launcher is the root
      EXPECT_EQ(b.rank(), i);
      EXPECT_EQ(b.size(), 3u);
    });
  }
  BootstrapCoordinator c(std::move(p.launcher));
  Result<std::vector<std::string>> docs = c.serve(std::chrono::steady_clock::now() + k_wait, -1);
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(docs.ok()) << docs.status().to_string();
  EXPECT_EQ(*docs, (std::vector<std::string>{"doc0", "doc1", "doc2"}));
  EXPECT_EQ(c.rounds(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(tables[i], (std::vector<std::string>{"addr0", "addr1", "addr2"}));
    EXPECT_TRUE(barriers[i].ok());
  }
}

TEST(BootstrapCoordinator, NodesInDifferentCollectivesFailEveryone) {
  Pairs p = make_pairs(2);
  std::vector<Status> results(2);
  std::thread a([&] { results[0] = SocketBootstrap(p.nodes[0], 0, 2, k_wait).barrier("one"); });
  std::thread b([&] { results[1] = SocketBootstrap(p.nodes[1], 1, 2, k_wait).barrier("two"); });
  BootstrapCoordinator c(std::move(p.launcher));
  Result<std::vector<std::string>> docs = c.serve(std::chrono::steady_clock::now() + k_wait, -1);
  a.join();
  b.join();
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("barrier one"), std::string::npos) << docs.status().to_string();
  for (const Status& s : results) {
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("node 1 in barrier two"), std::string::npos) << s.to_string();
  }
}

TEST(BootstrapCoordinator, StopFdInterruptsAndMalformedRequestsAreRefused) {
  Pairs p = make_pairs(1);
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  ASSERT_EQ(::write(stop[1], "x", 1), 1);
  BootstrapCoordinator c(std::move(p.launcher));
  Result<std::vector<std::string>> r = c.serve(std::chrono::steady_clock::now() + k_wait, stop[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("signal"), std::string::npos);
  ::close(stop[0]);
  ::close(stop[1]);
  ::close(p.nodes[0]);

  Pairs q = make_pairs(1);
  LineChannel node(q.nodes[0]);
  ASSERT_TRUE(node.send_line("not json", std::chrono::steady_clock::now() + k_wait).ok());
  BootstrapCoordinator c2(std::move(q.launcher));
  Result<std::vector<std::string>> r2 = c2.serve(std::chrono::steady_clock::now() + k_wait, -1);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), StatusCode::corrupt);
  Result<std::string> answer = node.read_line(std::chrono::steady_clock::now() + k_wait);
  ASSERT_TRUE(answer.ok());
  EXPECT_NE(answer->find("\"ok\":false"), std::string::npos);
}

TEST(BootstrapCoordinator, PastTheDeadlineItTimesOut) {
  Pairs p = make_pairs(1);
  BootstrapCoordinator c(std::move(p.launcher));
  Result<std::vector<std::string>> r = c.serve(std::chrono::steady_clock::now(), -1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::timed_out);
  ::close(p.nodes[0]);
}

TEST(SocketBootstrap, ALauncherThatVanishesIsAnErrorNotAHang) {
  Pairs p = make_pairs(1);
  p.launcher.clear();  // closes the launcher's end
  SocketBootstrap b(p.nodes[0], 0, 1, k_wait);
  Status st = b.barrier("x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::unavailable);
  EXPECT_FALSE(b.all_gather(std::string(k_max_bootstrap_item_bytes + 1, 'x')).ok());
}

TEST(LineChannel, SplitsLinesAndRejectsUnendingOnes) {
  Pairs p = make_pairs(1);
  LineChannel node(p.nodes[0]);
  const auto deadline = std::chrono::steady_clock::now() + k_wait;
  ASSERT_TRUE(node.send_line("first", deadline).ok());
  ASSERT_TRUE(node.send_line("second", deadline).ok());
  EXPECT_EQ(*p.launcher[0].read_line(deadline), "first");
  EXPECT_EQ(*p.launcher[0].read_line(deadline), "second");
  EXPECT_EQ(p.launcher[0].read_line(std::chrono::steady_clock::now()).status().code(), StatusCode::timed_out);
  node.close();
  EXPECT_EQ(p.launcher[0].read_line(deadline).status().code(), StatusCode::unavailable);
  EXPECT_EQ(node.send_line("x", deadline).code(), StatusCode::unavailable);
}

TEST(RunCommand, ReportsExitCodeAndOutputAndKillsPastTheDeadline) {
  Result<CommandOutput> ok = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10'000);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->exit_code, 3);
  EXPECT_NE(ok->output.find("out"), std::string::npos);
  EXPECT_NE(ok->output.find("err"), std::string::npos);
  Result<CommandOutput> slow = run_command({"sh", "-c", "exec sleep 30"}, 50);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::timed_out);
  Result<CommandOutput> missing = run_command({"/nonexistent/program"}, 10'000);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->exit_code, 127);
  Status failed = run_checked({"sh", "-c", "echo broken; exit 1"}, 10'000);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("broken"), std::string::npos);
  EXPECT_TRUE(run_checked({"true"}, 10'000).ok());
  EXPECT_FALSE(run_command({}, 10).ok());
}

TEST(ChildProcess, StopsAndReapsAndPassesTheBootstrapSocket) {
  char templ[] = "/tmp/sluice-child-test-XXXXXX";
  const int fd = ::mkstemp(templ);
  ASSERT_GE(fd, 0);
  ::close(fd);
  Result<ChildProcess> sleeper = ChildProcess::spawn({"sh", "-c", "exec sleep 30"}, templ, -1);
  ASSERT_TRUE(sleeper.ok());
  EXPECT_TRUE(sleeper->running());
  EXPECT_EQ(sleeper->wait(10).status().code(), StatusCode::timed_out);
  const pid_t pid = sleeper->pid();
  sleeper->stop(2'000);
  EXPECT_FALSE(sleeper->running());
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: gone

  Pairs p = make_pairs(1);
  Result<ChildProcess> echo = ChildProcess::spawn({"sh", "-c", "echo hello >&3"}, templ, p.nodes[0]);
  ::close(p.nodes[0]);
  ASSERT_TRUE(echo.ok());
  EXPECT_EQ(*p.launcher[0].read_line(std::chrono::steady_clock::now() + k_wait), "hello");
  EXPECT_EQ(*echo->wait(10'000), 0);
  EXPECT_EQ(read_text_file(templ), "");
  ::unlink(templ);
  EXPECT_EQ(read_text_file("/nonexistent/file"), "");
}

}  // namespace
}  // namespace sluice::emulate
