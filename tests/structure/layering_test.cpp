// The layering above core/ (docs/design.md#the-dependency-rule): the three
// worlds (det/, sim/, hw/) never include each other; the mechanism folders
// (transports/, hw_backends/) and analysis/ include no world; the repository
// explains itself (nothing points outside it); scenarios/deploy/ and
// scenarios/netns/ meet through one interface, and CLI11 stays with the
// programs' front ends (scenarios/cli/); invariants use SLUICE_ASSERT,
// which stays on in every build type, not assert().
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/structure/source_scan.hpp"

namespace {

using sluice::structure::join;
using sluice::structure::offending_lines;

const std::regex& includes(const char* folders) {
  static thread_local std::regex r;
  r = std::regex(std::string(R"(#include *[<"]()") + folders + ")/");
  return r;
}

TEST(Layering, TheWorldsNeverIncludeEachOther) {
  auto hits = offending_lines({"sim"}, includes("hw|hw_backends|det"));
  EXPECT_TRUE(hits.empty()) << join(hits);
  hits = offending_lines({"hw"}, includes("sim|det"));
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(Layering, TheDeterministicWorldStandsOnCoreAlone) {
  // det/ (TestEnv) runs the core and nothing else: no other world, no
  // mechanism, nothing above it, and not the tests that use it.
  const auto hits = offending_lines({"det"}, includes("sim|hw|hw_backends|transports|base|scenarios|analysis|tests"));
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(Layering, MechanismFoldersIncludeNoWorld) {
  const auto hits = offending_lines({"base", "transports", "hw_backends"}, includes("sim|hw|scenarios|analysis|tests"));
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(Layering, BaseIsBelowBothMechanismFolders) {
  // base/ (the registry template, the eventfd queue) serves transports/ and
  // hw_backends/; it includes neither, so a storage backend links no transport.
  const auto hits = offending_lines({"base"}, includes("transports|hw_backends"));
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(Layering, AnalysisIncludesNoWorld) {
  const auto hits = offending_lines({"analysis"}, includes("sim|hw|hw_backends|transports|scenarios|tests"));
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(Layering, TheDeploymentAndTheNamespacesMeetThroughOneInterface) {
  // deploy/ (the multi-process deployment on real hosts) knows nothing of
  // netns/ (the same deployment on namespaces of one machine) nor of the
  // programs' front ends; netns/ reaches deploy/ through deploy/deploy.hpp.
  auto hits = offending_lines({"scenarios/deploy"}, std::regex(R"(#include *"scenarios/(netns|cli)/)"));
  EXPECT_TRUE(hits.empty()) << join(hits);
  hits = offending_lines({"scenarios/netns"}, std::regex(R"(#include *"scenarios/(deploy/(?!deploy\.hpp")|cli/))"));
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(Layering, OnlyTheProgramsFrontEndsIncludeCli11) {
  // Each command's options and callback live in scenarios/cli/; the folders
  // below it run the commands as functions of their arguments and include
  // nothing of it.
  const auto hits = offending_lines(
      {"base", "core", "det", "sim", "hw", "hw_backends", "transports", "analysis", "scenarios/lua", "scenarios/runner",
       "scenarios/deploy", "scenarios/netns", "scenarios/calibrate", "scenarios/mount"},
      std::regex(R"(#include *([<"]CLI/|"scenarios/cli/))"));
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(Layering, TheScanSeesEachFolder) {
  // Guards the tests above against passing vacuously on a wrong path.
  for (const char* folder : {"det", "sim", "hw", "transports", "hw_backends", "analysis", "scenarios/deploy",
                             "scenarios/netns", "scenarios/cli"}) {
    EXPECT_GT(offending_lines({folder}, std::regex("#include")).size(), 5u) << folder;
  }
}

bool is_text(const std::filesystem::path& p) {
  const auto ext = p.extension();
  return sluice::structure::is_source(p) || ext == ".md" || ext == ".lua" || ext == ".txt" || ext == ".sh" ||
         ext == ".py" || ext == ".json" || p.filename() == "Makefile" || p.filename() == "CMakeLists.txt";
}

TEST(Repository, PointsNowhereOutsideItself) {
  // The background documents of the project's first round lived beside the
  // repository; a clone has none of them. docs/ and CONTRIBUTING.md say it all.
  const std::regex outside(R"(\.\./shared|DESIGN\.md|SEEDS\.md|STYLE\.md)");
  auto hits = offending_lines({"core", "base", "det", "sim", "hw", "hw_backends", "transports", "scenarios", "analysis",
                               "tests", "lua_scripts", "docs", "scripts", ".ci"},
                              outside, is_text);
  for (const char* file : {"README.md", "CONTRIBUTING.md", "Makefile", "CMakeLists.txt"}) {
    std::ifstream in(std::filesystem::path(SLUICE_SOURCE_DIR) / file);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (std::regex_search(line, outside)) hits.push_back(std::string(file) + ":" + std::to_string(n) + ": " + line);
    }
  }
  // This test names the patterns it looks for.
  std::erase_if(hits, [](const std::string& h) { return h.find("layering_test.cpp") != std::string::npos; });
  EXPECT_TRUE(hits.empty()) << join(hits);
}

// Issue 49 item 6: the README is a user's page (what sluice is, the two
// commands, a tour, clusters, backends, the headline figures), not a lab
// notebook: at most k_readme_max_lines lines and no dates (history is in git
// log and the issue notes; docs/figures.md keeps each figure's machine and date).
TEST(Repository, TheReadmeIsAUsersPageOfAtMost200LinesWithoutDates) {
  constexpr int k_readme_max_lines = 200;
  std::ifstream in(std::filesystem::path(SLUICE_SOURCE_DIR) / "README.md");
  ASSERT_TRUE(in.good());
  const std::regex date(R"(\b20[0-9][0-9]-[01][0-9]-[0-3][0-9]\b)");
  std::string line;
  int n = 0;
  std::vector<std::string> dated;
  while (std::getline(in, line)) {
    ++n;
    if (std::regex_search(line, date)) dated.push_back("README.md:" + std::to_string(n) + ": " + line);
  }
  EXPECT_LE(n, k_readme_max_lines) << "README.md has " << n << " lines: move detail to docs/";
  EXPECT_TRUE(dated.empty()) << join(dated);
}

TEST(Invariants, EveryFolderAssertsWithSluiceAssertNotAssert) {
  auto hits = offending_lines(
      {"core", "base", "det", "sim", "hw", "hw_backends", "transports", "scenarios", "analysis", "tests"},
      std::regex(R"((^|[^_A-Za-z])assert\(|#include <cassert>)"));
  // The macro's own header, this test, and comment lines that name assert() to explain it.
  std::erase_if(hits, [](const std::string& h) {
    const std::size_t text = h.find(": ", h.find(':') + 1);  // "file:line: text"
    const std::size_t first = text == std::string::npos ? text : h.find_first_not_of(' ', text + 2);
    const bool comment = first != std::string::npos && h.compare(first, 2, "//") == 0;
    return comment || h.find("core/common/assert.hpp") != std::string::npos ||
           h.find("layering_test.cpp") != std::string::npos;
  });
  EXPECT_TRUE(hits.empty()) << "assert() is compiled out under NDEBUG (every default build): use SLUICE_ASSERT\n"
                            << join(hits);
}

}  // namespace
