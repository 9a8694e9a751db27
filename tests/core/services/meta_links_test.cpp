// Hard links at the metadata server beyond the shared suite: the limit on a
// file's names, rename onto a hard link's name (one name less) and between two
// names of one inode (nothing changes), and the linked-inode table emptied by
// the last unlink.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "tests/core/services/step_script.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

// A step that makes one client call: fn(client, answers, next).
Step call(Answers& a, std::function<void(Client&, Answers&, std::function<void()>)> fn) {
  return [&a, fn](WorkloadContext& ctx, std::function<void()> next) { fn(ctx.client, a, std::move(next)); };
}
Step link(Answers& a, std::string from, std::string to) {
  return call(a, [from, to](Client& c, Answers& an, auto next) { c.link(from, to, an.inode("link " + to, next)); });
}
Step stat(Answers& a, std::string path, std::string key) {
  return call(a, [path, key](Client& c, Answers& an, auto next) { c.stat(path, an.inode(key, next)); });
}
Step create(Answers& a, std::string path) {
  return call(a, [path](Client& c, Answers& an, auto next) { c.create(path, CreateOptions{}, an.inode(path, next)); });
}

std::uint64_t linked_records(const TestCluster& cluster) {
  std::uint64_t n = 0;
  for (const MetaService* m : cluster.metas()) n += m->store().entry_count(k_linked_inodes_dir);
  return n;
}

TEST(MetaLinks, AFileHasAtMostMaxLinksNames) {
  TestClusterSpec spec;
  spec.meta.max_links = 3;
  TestCluster cluster(spec);
  Answers a;
  cluster.add_host(std::make_unique<Scripted>(
                       in_order({create(a, "/f"), link(a, "/f", "/a"), link(a, "/f", "/b"), link(a, "/f", "/c")})),
                   0, 1);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  EXPECT_EQ(a.inodes["link /b"].nlink, 3u);
  EXPECT_EQ(a.code("link /c"), StatusCode::invalid_argument);
  EXPECT_NE(a.errors["link /c"].find("max_links"), std::string::npos) << a.errors["link /c"];
}

TEST(MetaLinks, RenameOntoAHardLinkDropsOneNameAndBetweenTwoNamesChangesNothing) {
  TestCluster cluster(TestClusterSpec{});
  Answers a;
  auto rename = [&a](std::string from, std::string to, std::string key) {
    return call(a, [from, to, key](Client& c, Answers& an, auto next) { c.rename(from, to, an.status(key, next)); });
  };
  auto unlink = [&a](std::string path) {
    return call(a, [path](Client& c, Answers& an, auto next) { c.unlink(path, an.status("unlink " + path, next)); });
  };
  std::vector<Step> steps{create(a, "/f"),
                          link(a, "/f", "/g"),
                          rename("/f", "/g", "same inode"),
                          stat(a, "/f", "f after"),
                          create(a, "/o"),
                          rename("/o", "/g", "onto a link"),
                          stat(a, "/f", "f alone"),
                          stat(a, "/g", "g now"),
                          unlink("/f"),
                          unlink("/g")};
  cluster.add_host(std::make_unique<Scripted>(in_order(std::move(steps))), 0, 1);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  EXPECT_EQ(a.code("same inode"), StatusCode::ok);
  EXPECT_EQ(a.code("onto a link"), StatusCode::ok);
  EXPECT_EQ(a.inodes["f after"].nlink, 2u);  // POSIX: a rename between names of one inode does nothing
  EXPECT_EQ(a.inodes["f alone"].nlink, 1u);  // /o replaced the name /g of /f's inode
  EXPECT_NE(a.inodes["g now"].file_id, a.inodes["f alone"].file_id);
  EXPECT_EQ(a.code("unlink /f"), StatusCode::ok);
  EXPECT_EQ(a.code("unlink /g"), StatusCode::ok);
  EXPECT_EQ(linked_records(cluster), 0u);  // the last name took the table's record with it
}

}  // namespace
}  // namespace sluice::testing
