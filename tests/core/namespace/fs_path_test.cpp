#include "core/namespace/fs_path.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice {
namespace {

// Expects an invalid_argument whose message contains `needle`.
void expect_refused(const Status& s, const std::string& needle) {
  EXPECT_EQ(s.code(), StatusCode::invalid_argument) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos)
      << "message \"" << s.message() << "\" does not mention \"" << needle << "\"";
}

TEST(ValidatePath, AcceptsRootAndCanonicalPaths) {
  EXPECT_TRUE(validate_path("/").ok());
  EXPECT_TRUE(validate_path("/a").ok());
  EXPECT_TRUE(validate_path("/data/train/shard-00001.tar").ok());
  EXPECT_TRUE(validate_path("/...").ok());  // "..." is an ordinary name
  EXPECT_TRUE(validate_path("/.hidden/a..b").ok());
}

TEST(ValidatePath, RefusesNonCanonicalPathsNamingTheProblem) {
  expect_refused(validate_path(""), "empty");
  expect_refused(validate_path("a/b"), "not absolute");
  expect_refused(validate_path("/a//b"), "empty component");
  expect_refused(validate_path("/a/"), "empty component");
  expect_refused(validate_path("//"), "empty component");
  expect_refused(validate_path("/a/./b"), "\".\"");
  expect_refused(validate_path("/a/.."), "\"..\"");
  expect_refused(validate_path(std::string("/a\0b", 4)), "NUL");
}

TEST(ValidatePath, EnforcesNameAndPathLengthLimits) {
  const std::string name_at_limit(k_name_bytes_max, 'n');
  EXPECT_TRUE(validate_path("/" + name_at_limit).ok());
  expect_refused(validate_path("/" + name_at_limit + "n"), "k_name_bytes_max");

  // 16 components of 255 bytes, each after a slash: 4096 bytes exactly.
  std::string path;
  for (int i = 0; i < 16; ++i) path += "/" + name_at_limit;
  ASSERT_EQ(path.size(), k_path_bytes_max);
  EXPECT_TRUE(validate_path(path).ok());
  expect_refused(validate_path(path + "/y"), "k_path_bytes_max");
}

TEST(ValidateName, AcceptsComponentsAndRefusesTheRest) {
  EXPECT_TRUE(validate_name("f").ok());
  EXPECT_TRUE(validate_name(std::string(k_name_bytes_max, 'n')).ok());
  expect_refused(validate_name(""), "empty");
  expect_refused(validate_name("."), "not allowed");
  expect_refused(validate_name(".."), "not allowed");
  expect_refused(validate_name("a/b"), "'/'");
  expect_refused(validate_name(std::string("a\0b", 3)), "NUL");
  expect_refused(validate_name(std::string(k_name_bytes_max + 1, 'n')), "k_name_bytes_max");
}

TEST(NormalizePath, CollapsesSlashesAndDropsTrailingSlash) {
  EXPECT_EQ(normalize_path("/").value(), "/");
  EXPECT_EQ(normalize_path("///").value(), "/");
  EXPECT_EQ(normalize_path("//a///b/").value(), "/a/b");
  EXPECT_EQ(normalize_path("/a/b").value(), "/a/b");
  const auto normal = normalize_path("/x//y/");
  ASSERT_TRUE(normal.ok());
  EXPECT_TRUE(validate_path(*normal).ok());
}

TEST(NormalizePath, RefusesWhatItCannotResolve) {
  expect_refused(normalize_path("").status(), "empty");
  expect_refused(normalize_path("a").status(), "not absolute");
  expect_refused(normalize_path("/a/./b").status(), "\".\"");
  expect_refused(normalize_path("/a/../b").status(), "\"..\"");
  expect_refused(normalize_path(std::string("/a\0", 3)).status(), "NUL");
  expect_refused(normalize_path("/" + std::string(k_name_bytes_max + 1, 'n')).status(), "k_name_bytes_max");
  // Short components whose canonical form is still too long.
  std::string long_path;
  while (long_path.size() <= 2 * k_path_bytes_max) long_path += "//ab";  // 3/4 survive
  expect_refused(normalize_path(long_path).status(), "k_path_bytes_max");
}

TEST(SplitPath, CutsAtTheLastSlash) {
  const auto top = split_path("/a");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->parent, "/");
  EXPECT_EQ(top->name, "a");
  const auto deep = split_path("/a/b/c");
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(deep->parent, "/a/b");
  EXPECT_EQ(deep->name, "c");
}

TEST(SplitPath, RefusesRootAndNonCanonicalPaths) {
  expect_refused(split_path("/").status(), "root has no parent");
  expect_refused(split_path("/a/").status(), "empty component");
  expect_refused(split_path("rel").status(), "not absolute");
}

TEST(JoinPath, InvertsSplitPath) {
  EXPECT_EQ(join_path("/", "a"), "/a");
  EXPECT_EQ(join_path("/a/b", "c"), "/a/b/c");
  for (const char* path : {"/a", "/a/b/c", "/data/f123"}) {
    const auto s = split_path(path);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(join_path(s->parent, s->name), path);
  }
}

TEST(PathDepth, CountsComponents) {
  EXPECT_EQ(path_depth("/"), 0u);
  EXPECT_EQ(path_depth("/a"), 1u);
  EXPECT_EQ(path_depth("/a/b/c"), 3u);
}

TEST(PathComponents, WalksFromTheRootOneDirectoryAtATime) {
  std::vector<PathStep> steps;
  for (const PathStep& step : PathComponents("/data/train/f1")) steps.push_back(step);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].parent, "/");
  EXPECT_EQ(steps[0].name, "data");
  EXPECT_EQ(steps[0].path, "/data");
  EXPECT_EQ(steps[1].parent, "/data");
  EXPECT_EQ(steps[1].name, "train");
  EXPECT_EQ(steps[1].path, "/data/train");
  EXPECT_EQ(steps[2].parent, "/data/train");
  EXPECT_EQ(steps[2].name, "f1");
  EXPECT_EQ(steps[2].path, "/data/train/f1");
}

TEST(PathComponents, RootHasNoStepsAndIteratorsCompare) {
  const PathComponents root("/");
  EXPECT_TRUE(root.begin() == root.end());
  const PathComponents one("/a");
  auto it = one.begin();
  EXPECT_FALSE(it == one.end());
  EXPECT_EQ(it->name, "a");
  const auto before = it++;
  EXPECT_EQ(before->name, "a");
  EXPECT_TRUE(it == one.end());
  ++it;  // stepping past the end stays at the end
  EXPECT_TRUE(it == one.end());
}

TEST(PathComponents, EveryStepIsASplitOfItsPath) {
  const std::string path = "/a/bb/ccc/dddd";
  std::size_t count = 0;
  for (const PathStep& step : PathComponents(path)) {
    const auto s = split_path(step.path);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->parent, step.parent);
    EXPECT_EQ(s->name, step.name);
    ++count;
  }
  EXPECT_EQ(count, path_depth(path));
}

}  // namespace
}  // namespace sluice
