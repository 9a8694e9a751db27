// The operating-system helpers of the shm transport: their error paths name
// what failed (the transport's own tests cover the paths that work).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>
#include <vector>

#include "transports/shm/shm_os.hpp"

namespace sluice::transport::shm {
namespace {

TEST(ShmOs, ErrnoTextNamesTheConstant) {
  EXPECT_NE(errno_text(ECONNREFUSED).find("ECONNREFUSED"), std::string::npos);
  EXPECT_NE(errno_text(ESRCH).find("ESRCH"), std::string::npos);
  EXPECT_NE(errno_text(9999).find("errno 9999"), std::string::npos);
}

TEST(ShmOs, SocketsRefuseBadNamesAndAbsentListeners) {
  EXPECT_EQ(listen_abstract("").status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(connect_abstract(std::string(k_shm_max_name_bytes + 1, 'x')).status().code(), StatusCode::invalid_argument);
  const Status nobody = connect_abstract("sluice-shm-test-nobody-" + std::to_string(::getpid())).status();
  EXPECT_EQ(nobody.code(), StatusCode::unavailable);
  EXPECT_NE(nobody.message().find("ECONNREFUSED"), std::string::npos) << nobody.message();
}

TEST(ShmOs, ReceiveRefusesADatagramOfTheWrongSizeAndReportsEof) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, pair), 0);
  std::array<int, k_shm_max_passed_fds> fds{-1, -1};
  std::size_t count = 0;
  bool eof = false;
  std::array<std::byte, 16> want{};
  EXPECT_EQ(receive_with_fds(pair[1], want, fds.data(), &count, &eof).code(), StatusCode::again);
  const std::array<std::byte, 8> short_one{};
  ASSERT_TRUE(send_with_fds(pair[0], short_one, {}).ok());
  EXPECT_EQ(receive_with_fds(pair[1], want, fds.data(), &count, &eof).code(), StatusCode::corrupt);
  ::close(pair[0]);
  ASSERT_TRUE(receive_with_fds(pair[1], want, fds.data(), &count, &eof).ok());
  EXPECT_TRUE(eof);
  EXPECT_EQ(send_with_fds(pair[1], short_one, {}).code(), StatusCode::unavailable) << "the other end is gone";
  ::close(pair[1]);
}

TEST(ShmOs, MappingChecksTheSegmentSize) {
  int fd = -1;
  Result<std::byte*> base = create_segment(8192, &fd);
  ASSERT_TRUE(base.ok()) << base.status().to_string();
  (*base)[8191] = std::byte{1};
  EXPECT_EQ(map_segment(fd, 4096).status().code(), StatusCode::corrupt);
  Result<std::byte*> again = map_segment(fd, 8192);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[8191], std::byte{1}) << "both mappings share the memory";
  unmap_segment(*again, 8192);
  unmap_segment(*base, 8192);
  ::close(fd);
}

TEST(ShmOs, CopiesFromAnUnreachableAddressFailNamingTheProcess) {
  // pid 1 exists on every system; address 8 is mapped in no process, and an
  // unprivileged caller is refused anyway: an error either way.
  if (::getpid() == 1) GTEST_SKIP() << "running as pid 1: the same-process path would be taken";
  std::vector<std::byte> buffer(64);
  const Status from = copy_from_process(1, 8, buffer);
  EXPECT_EQ(from.code(), StatusCode::io_error);
  EXPECT_NE(from.message().find("process 1"), std::string::npos) << from.message();
  EXPECT_EQ(copy_to_process(1, 8, buffer).code(), StatusCode::io_error);
}

}  // namespace
}  // namespace sluice::transport::shm
