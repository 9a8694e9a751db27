// The mount's inode table: lookup counts, forget, rename of a subtree, hard links, and
// the open-file sizes a mount's own writes reach before their close.
#include "scenarios/mount/inode_table.hpp"

#include <gtest/gtest.h>

namespace sluice::mount {
namespace {

TEST(InodeTable, ALookedUpPathKeepsItsNumberUntilForgotten) {
  InodeTable t;
  EXPECT_EQ(t.path_of(k_root_ino), "/");
  Result<Ino> a = t.remember("/a");
  ASSERT_TRUE(a.ok());
  EXPECT_NE(*a, k_root_ino);
  EXPECT_EQ(*t.remember("/a"), *a);  // a second lookup: the same number, count 2
  EXPECT_EQ(t.path_of(*a), "/a");
  t.forget(*a, 1);
  EXPECT_EQ(t.path_of(*a), "/a");
  t.forget(*a, 1);
  EXPECT_FALSE(t.path_of(*a).has_value());
  EXPECT_NE(*t.remember("/a"), *a);  // a fresh number once released
  t.forget(k_root_ino, 100);
  EXPECT_EQ(t.path_of(k_root_ino), "/");  // the root is never forgotten
}

TEST(InodeTable, RenameMovesASubtreeAndNotItsNeighbours) {
  InodeTable t;
  const Ino dir = *t.remember("/a");
  const Ino child = *t.remember("/a/x");
  const Ino neighbour = *t.remember("/a b");  // sorts between "/a" and "/a/"
  const Ino target = *t.remember("/c");
  t.rename("/a", "/c");
  EXPECT_EQ(t.path_of(dir), "/c");
  EXPECT_EQ(t.path_of(child), "/c/x");
  EXPECT_EQ(t.path_of(neighbour), "/a b");
  EXPECT_FALSE(t.path_of(target).has_value());  // the replaced name is unbound
  t.unbind("/c/x");
  EXPECT_FALSE(t.path_of(child).has_value());
  EXPECT_EQ(child_path("/", "n"), "/n");
  EXPECT_EQ(child_path("/c", "n"), "/c/n");
}

TEST(InodeTable, AHardLinkIsOneInodeWithTwoNamesUntilBothAreGone) {
  InodeTable t;
  const Ino f = *t.remember("/f");
  Result<Ino> g = t.link(f, "/d/g");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g, f);
  EXPECT_EQ(*t.remember("/d/g"), f);  // a lookup of either name finds the one inode
  EXPECT_EQ(t.link(12345, "/x").status().code(), StatusCode::not_found);
  t.unbind("/f");  // unlink of the first name: the inode answers for the other
  EXPECT_EQ(t.path_of(f), "/d/g");
  t.rename("/d", "/e");
  EXPECT_EQ(t.path_of(f), "/e/g");
  t.forget(f, 3);  // remember, link, remember
  EXPECT_FALSE(t.path_of(f).has_value());
  EXPECT_NE(*t.remember("/e/g"), f);  // every name went with the number
}

TEST(InodeTable, OpenFilesKeepTheSizeTheirWritesReachedUntilRecorded) {
  InodeTable t;
  const Ino f = *t.remember("/f");
  proto::InodeDesc inode;
  inode.size_bytes = 100;
  EXPECT_TRUE(t.opened(f, inode, 11)) << "the first handle's open is the inode's";
  EXPECT_FALSE(t.opened(f, inode, 12)) << "a second handle: its open is let go";
  EXPECT_EQ(t.open_file(f)->open_id, 11u);
  t.wrote(f, 4096, 10, 1'000);
  ASSERT_TRUE(t.open_file(f).has_value());
  EXPECT_EQ(t.open_file(f)->size, 4106u);
  EXPECT_TRUE(t.open_file(f)->dirty);
  t.recorded(f, 100);  // a close of an older size: still dirty
  EXPECT_TRUE(t.open_file(f)->dirty);
  t.recorded(f, 4106);
  EXPECT_FALSE(t.open_file(f)->dirty);
  t.wrote(f, 0, 10, 2'000);  // inside: the size stays
  EXPECT_EQ(t.open_file(f)->last_write_ns, 2'000);
  t.mtime_set(f);
  EXPECT_TRUE(t.open_file(f)->mtime_set) << "a utimens after the writes: the close keeps it";
  EXPECT_EQ(t.open_file(f)->size, 4106u);
  t.resized(f, 5);
  EXPECT_EQ(t.open_file(f)->size, 5u);
  EXPECT_FALSE(t.released(f).has_value()) << "one handle is still open";
  EXPECT_TRUE(t.open_file(f).has_value());
  const std::optional<OpenFile> last = t.released(f);
  ASSERT_TRUE(last.has_value()) << "the last release gives the state that went";
  EXPECT_EQ(last->size, 5u);
  EXPECT_EQ(last->open_id, 11u) << "its last release closes the server's open";
  EXPECT_FALSE(t.open_file(f).has_value());
}

TEST(InodeTable, AFileMadeAnewKeepsItsHandlesUnderTheNewOpen) {
  InodeTable t;
  const Ino f = *t.remember("/f");
  proto::InodeDesc inode;
  inode.file_id = 1;
  t.opened(f, inode, 21);
  proto::InodeDesc anew;
  anew.file_id = 2;
  EXPECT_EQ(t.replaced(f, anew, 22), 21u) << "the old inode's open is the caller's to let go";
  EXPECT_EQ(t.open_file(f)->inode.file_id, 2u);
  EXPECT_EQ(t.released(f)->open_id, 22u);
  EXPECT_EQ(t.replaced(f, anew, 23), 23u) << "closed meanwhile: the new open is let go too";
}

TEST(InodeTable, AnOpenFileWhoseNameGoesIsAnOrphanUntilItsLastRelease) {
  InodeTable t;
  const Ino f = *t.remember("/f");
  proto::InodeDesc inode;
  inode.file_id = 9;
  t.opened(f, inode, 0);
  EXPECT_FALSE(t.open_inode_at("/g").has_value());
  ASSERT_TRUE(t.open_inode_at("/f").has_value());
  EXPECT_EQ(t.open_inode_at("/f")->file_id, 9u);
  EXPECT_TRUE(t.orphan_at("/f"));
  t.unbind("/f");
  const std::optional<OpenFile> last = t.released(f);
  ASSERT_TRUE(last.has_value());
  EXPECT_TRUE(last->orphaned);
  EXPECT_FALSE(t.orphan_at("/f")) << "nothing open there any more";
}

}  // namespace
}  // namespace sluice::mount
