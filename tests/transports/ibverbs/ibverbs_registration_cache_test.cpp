#include "transports/ibverbs/ibverbs_registration_cache.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace sluice::transport::ibverbs {
namespace {

// Records what would have been registered with the NIC.
class FakeBackend final : public RegistrationBackend {
 public:
  Result<Registration> register_memory(const RegistrationRequest& request, void** handle) override {
    if (fail_next) {
      fail_next = false;
      return error(StatusCode::unavailable, "fake: ibv_reg_mr failed");
    }
    registered.push_back(request);
    const std::uint32_t n = next_key_++;
    live[n] = request;
    *handle = reinterpret_cast<void*>(static_cast<std::uintptr_t>(n));
    Registration r;
    r.address = request.address;
    r.bytes = request.bytes;
    r.lkey = n;
    r.rkey = 1000 + n;
    return r;
  }
  void deregister_memory(void* handle) override {
    live.erase(static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(handle)));
  }

  bool fail_next = false;
  std::vector<RegistrationRequest> registered;
  std::map<std::uint32_t, RegistrationRequest> live;

 private:
  std::uint32_t next_key_ = 1;
};

RegistrationRequest host(std::uint64_t address, std::uint64_t bytes, std::uint32_t domain = 0) {
  return RegistrationRequest{domain, address, bytes, RegionKind::host, -1, 0};
}

TEST(IbverbsRegistrationCache, WidensToPagesAndSharesOneMrBetweenCoveredRanges) {
  FakeBackend backend;
  RegistrationCache cache(backend, 8);
  Result<Registration> a = cache.acquire(host(0x10010, 0x2000));
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(backend.registered.size(), 1u);
  EXPECT_EQ(backend.registered[0].address, 0x10000u);
  EXPECT_EQ(backend.registered[0].bytes, 0x3000u);  // [0x10000, 0x13000) covers [0x10010, 0x12010)
  Result<Registration> b = cache.acquire(host(0x11000, 0x100));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(backend.registered.size(), 1u) << "a covered range reuses the MR";
  EXPECT_EQ(b->id, a->id);
  EXPECT_EQ(b->rkey, a->rkey);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
  // Past the registered pages: a new MR.
  ASSERT_TRUE(cache.acquire(host(0x12F00, 0x200)).ok());
  EXPECT_EQ(backend.registered.size(), 2u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(IbverbsRegistrationCache, KeepsDevicesAndKindsApart) {
  FakeBackend backend;
  RegistrationCache cache(backend, 8);
  ASSERT_TRUE(cache.acquire(host(0x10000, 4096, 0)).ok());
  ASSERT_TRUE(cache.acquire(host(0x10000, 4096, 1)).ok());
  RegistrationRequest gpu = host(0x10000, 4096);
  gpu.kind = RegionKind::cuda;
  ASSERT_TRUE(cache.acquire(gpu).ok());
  EXPECT_EQ(backend.registered.size(), 3u);
}

TEST(IbverbsRegistrationCache, DeregistersWhenTheLastUserReleases) {
  FakeBackend backend;
  RegistrationCache cache(backend, 8);
  Result<Registration> a = cache.acquire(host(0x20000, 8192));
  Result<Registration> b = cache.acquire(host(0x20000, 8192));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(cache.release(a->id).ok());
  EXPECT_EQ(backend.live.size(), 1u) << "still used once";
  EXPECT_TRUE(cache.release(b->id).ok());
  EXPECT_TRUE(backend.live.empty()) << "no unused MR stays pinned";
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.release(a->id).code(), StatusCode::not_found);
}

TEST(IbverbsRegistrationCache, RefusesPastTheLimitWithAgainAndRecoversAfterRelease) {
  FakeBackend backend;
  RegistrationCache cache(backend, 2);
  Result<Registration> a = cache.acquire(host(0x1000, 10));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(cache.acquire(host(0x9000, 10)).ok());
  Result<Registration> third = cache.acquire(host(0x20000, 10));
  EXPECT_EQ(third.status().code(), StatusCode::again);
  EXPECT_NE(third.status().message().find("k_ibv_max_registrations 2"), std::string::npos) << third.status().message();
  EXPECT_EQ(backend.registered.size(), 2u) << "the refused request never reached the NIC";
  // A hit needs no new MR, even at the limit.
  EXPECT_TRUE(cache.acquire(host(0x1004, 4)).ok());
  ASSERT_TRUE(cache.release(a->id).ok());
  ASSERT_TRUE(cache.release(a->id).ok());
  EXPECT_TRUE(cache.acquire(host(0x20000, 10)).ok());
}

TEST(IbverbsRegistrationCache, RejectsBadRangesAndDmabufWithoutFd) {
  FakeBackend backend;
  RegistrationCache cache(backend, 4);
  EXPECT_EQ(cache.acquire(host(0x1000, 0)).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(cache.acquire(host(~std::uint64_t{0} - 4, 10)).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(cache.acquire(host(~std::uint64_t{0} - 4095, 100)).status().code(), StatusCode::invalid_argument);
  RegistrationRequest dmabuf = host(0x1000, 4096);
  dmabuf.kind = RegionKind::dmabuf;
  EXPECT_EQ(cache.acquire(dmabuf).status().code(), StatusCode::invalid_argument);
  EXPECT_TRUE(backend.registered.empty());
}

TEST(IbverbsRegistrationCache, DmabufRangesAreExactAndMatchedByFdAndOffset) {
  FakeBackend backend;
  RegistrationCache cache(backend, 8);
  RegistrationRequest d{0, 0x7F0000000123ULL, 1000, RegionKind::dmabuf, 5, 64};
  Result<Registration> a = cache.acquire(d);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(backend.registered[0].address, d.address) << "dmabuf ranges are not widened";
  EXPECT_EQ(backend.registered[0].bytes, 1000u);
  EXPECT_EQ(backend.registered[0].dmabuf_offset, 64u);
  EXPECT_EQ(cache.acquire(d)->id, a->id);
  RegistrationRequest other_fd = d;
  other_fd.dmabuf_fd = 6;
  EXPECT_NE(cache.acquire(other_fd)->id, a->id);
  RegistrationRequest other_offset = d;
  other_offset.dmabuf_offset = 128;
  EXPECT_NE(cache.acquire(other_offset)->id, a->id);
  EXPECT_EQ(backend.registered.size(), 3u);
}

TEST(IbverbsRegistrationCache, PassesBackendFailuresOnAndDeregistersEverythingAtTheEnd) {
  FakeBackend backend;
  {
    RegistrationCache cache(backend, 8);
    backend.fail_next = true;
    Result<Registration> failed = cache.acquire(host(0x1000, 10));
    EXPECT_EQ(failed.status().code(), StatusCode::unavailable);
    EXPECT_EQ(cache.size(), 0u);
    ASSERT_TRUE(cache.acquire(host(0x1000, 10)).ok());
    ASSERT_TRUE(cache.acquire(host(0x8000, 10)).ok());
    EXPECT_EQ(backend.live.size(), 2u);
  }
  EXPECT_TRUE(backend.live.empty());
}

}  // namespace
}  // namespace sluice::transport::ibverbs
