// CrashLog (scenarios/runner/crash_log.hpp): the ring keeps the last lines,
// survives a wrap, and carries a child's lines to its parent across fork.
#include "scenarios/runner/crash_log.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "scenarios/runner/child_pool.hpp"

namespace sluice::scenario {
namespace {

TEST(CrashLog, KeepsTheLastLinesInOrder) {
  CrashLog log;
  ASSERT_TRUE(log.ok());
  for (int i = 0; i < 5; ++i) log.append("line " + std::to_string(i));
  EXPECT_EQ(log.last_lines(3), (std::vector<std::string>{"line 2", "line 3", "line 4"}));
  EXPECT_EQ(log.last_lines(10).size(), 5u);
  EXPECT_TRUE(log.last_lines(0).empty());
}

TEST(CrashLog, AWrappedRingDropsTheCutLineAndKeepsWholeOnes) {
  CrashLog log;
  const std::string filler(100, 'x');
  const int lines = static_cast<int>(3 * k_crash_log_bytes / filler.size());
  for (int i = 0; i < lines; ++i) log.append(std::to_string(i) + " " + filler);
  const std::vector<std::string> last = log.last_lines(1000);
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(last.back(), std::to_string(lines - 1) + " " + filler);
  for (const std::string& l : last) EXPECT_EQ(l.substr(l.find(' ') + 1), filler) << "a cut line came back: " << l;
  EXPECT_LE(last.size() * (filler.size() + 4), k_crash_log_bytes);
}

TEST(CrashLog, NewlinesInALineDoNotSplitIt) {
  CrashLog log;
  log.append("one\ntwo");
  EXPECT_EQ(log.last_lines(5), (std::vector<std::string>{"one two"}));
}

TEST(CrashLog, AChildThatDiesOfASignalLeavesItsLastLinesToTheParent) {
  CrashLog log;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    log.install_in_child();
    note_child_log("before the crash");
    note_child_log("the last words");
    ::kill(::getpid(), SIGKILL);  // not SIGSEGV: sanitizers catch that one and exit instead
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(log.last_lines(2), (std::vector<std::string>{"before the crash", "the last words"}));
}

TEST(CrashLog, APointWhoseChildDiesReportsTheSignalAndItsLastLogLines) {
  ChildPoolOptions o;
  o.jobs = 2;
  o.log_tail_lines = 2;
  Result<std::vector<ChildJobResult>> jobs = ChildPool::run(
      2,
      [](std::size_t index) -> std::string {
        if (index == 0) return "fine";
        for (int i = 0; i < 5; ++i) note_child_log("step " + std::to_string(i));
        ::kill(::getpid(), SIGKILL);  // as a crash or the OOM killer would
        return "never";
      },
      o);
  ASSERT_TRUE(jobs.ok()) << jobs.status().to_string();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_TRUE((*jobs)[0].ok);
  EXPECT_TRUE((*jobs)[0].log_tail.empty());
  const ChildJobResult& died = (*jobs)[1];
  EXPECT_FALSE(died.ok);
  EXPECT_NE(died.error.find("signal 9"), std::string::npos) << died.error;
  EXPECT_NE(died.error.find("its last log line: step 4"), std::string::npos) << died.error;
  EXPECT_EQ(died.log_tail, (std::vector<std::string>{"step 3", "step 4"}));
}

TEST(CrashLog, NothingInstalledMeansNothingNoted) {
  CrashLog log;
  note_child_log("nobody installed a log here");
  EXPECT_TRUE(log.last_lines(5).empty());
}

}  // namespace
}  // namespace sluice::scenario
