// base/run_marker.hpp: a directory is stale only when the process its marker
// names is gone (or the pid now belongs to a process started at another time).
#include "base/run_marker.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sluice::base {
namespace {

class RunMarker : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (std::filesystem::temp_directory_path() / "run-marker-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    root_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string make_dir(const std::string& name) {
    const std::string dir = root_ + "/" + name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/chunk") << "bytes";
    return dir;
  }
  static void write_marker(const std::string& dir, long pid, unsigned long long started) {
    std::ofstream(dir + "/" + std::string(k_run_marker_file)) << pid << " " << started << "\n";
  }
  // A pid that has just exited and been reaped.
  static long dead_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
  }
  std::string root_;
};

TEST_F(RunMarker, ADirectoryOfThisProcessIsNotStale) {
  const std::string dir = make_dir("sluice-x-live");
  ASSERT_TRUE(write_run_marker(dir).ok());
  EXPECT_FALSE(run_dir_is_stale(dir));
}

TEST_F(RunMarker, ADirectoryOfADeadProcessIsStale) {
  const std::string dir = make_dir("sluice-x-dead");
  write_marker(dir, dead_pid(), 12345);
  EXPECT_TRUE(run_dir_is_stale(dir));
}

TEST_F(RunMarker, AReusedPidWithAnotherStartTimeIsStale) {
  const std::string dir = make_dir("sluice-x-reused");
  write_marker(dir, ::getpid(), 1);  // this process runs, but did not start at tick 1
  EXPECT_TRUE(run_dir_is_stale(dir));
}

TEST_F(RunMarker, ADirectoryWithoutAReadableMarkerIsNotOursToJudge) {
  EXPECT_FALSE(run_dir_is_stale(make_dir("sluice-x-nomarker")));
  const std::string garbage = make_dir("sluice-x-garbage");
  std::ofstream(garbage + "/" + std::string(k_run_marker_file)) << "not a pid";
  EXPECT_FALSE(run_dir_is_stale(garbage));
}

TEST_F(RunMarker, TheSweepRemovesOnlyStaleDirectoriesWithThePrefix) {
  const std::string live = make_dir("sluice-x-1");
  ASSERT_TRUE(write_run_marker(live).ok());
  const std::string stale = make_dir("sluice-x-2");
  write_marker(stale, dead_pid(), 99);
  const std::string other = make_dir("someone-else");
  write_marker(other, dead_pid(), 99);
  int lines = 0;
  const std::vector<std::string> removed =
      remove_stale_run_dirs(root_, "sluice-x-", [&](std::string_view) { ++lines; });
  EXPECT_EQ(removed, std::vector<std::string>{stale});
  EXPECT_EQ(lines, 1);
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(other));
}

// Issue 47 item 2: `--keep` marks the directory kept; no sweep removes it, though its owner is gone.
TEST_F(RunMarker, AKeptDirectoryIsNeverStale) {
  const std::string kept = make_dir("sluice-x-kept");
  std::ofstream(kept + "/" + std::string(k_run_marker_file)) << dead_pid() << " 99 kept\n";
  EXPECT_FALSE(run_dir_is_stale(kept));
  const std::string marked = make_dir("sluice-x-marked");
  write_marker(marked, dead_pid(), 99);
  ASSERT_TRUE(mark_run_kept(marked).ok());
  EXPECT_FALSE(run_dir_is_stale(marked));
  EXPECT_TRUE(remove_stale_run_dirs(root_, "sluice-x-", nullptr).empty());
  EXPECT_TRUE(std::filesystem::exists(kept + "/chunk"));
  EXPECT_TRUE(std::filesystem::exists(marked + "/chunk"));
}

TEST_F(RunMarker, ARunDirIsRemovedAtTheEndUnlessKept) {
  const std::string gone = make_dir("sluice-x-gone");
  const std::string kept = make_dir("sluice-x-kept");
  ASSERT_TRUE(write_run_marker(gone).ok());
  ASSERT_TRUE(write_run_marker(kept).ok());
  {
    const RunDir a(gone, false);
    RunDir b(kept, false);
    b.keep();
  }
  EXPECT_FALSE(std::filesystem::exists(gone));
  ASSERT_TRUE(std::filesystem::exists(kept + "/chunk"));
  std::ifstream marker(kept + "/" + std::string(k_run_marker_file));
  long pid = 0;
  unsigned long long started = 0;
  std::string word;
  marker >> pid >> started >> word;
  EXPECT_EQ(word, "kept");
}

// A killed launcher whose parent has not reaped it yet is dead all the same.
TEST_F(RunMarker, AProcessRunsUntilItExits) {
  EXPECT_TRUE(process_runs(::getpid()));
  EXPECT_FALSE(process_runs(dead_pid()));
  EXPECT_FALSE(process_runs(0));
  const pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  ASSERT_GT(zombie, 0);
  ::usleep(200'000);  // exited, not reaped
  const std::string dir = make_dir("sluice-x-zombie");
  std::ifstream stat("/proc/" + std::to_string(zombie) + "/stat");
  std::string line;
  std::getline(stat, line);
  write_marker(dir, zombie, 0);
  EXPECT_FALSE(process_runs(zombie)) << line;
  EXPECT_TRUE(run_dir_is_stale(dir));
  ::waitpid(zombie, nullptr, 0);
}

}  // namespace
}  // namespace sluice::base
