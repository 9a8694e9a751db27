#include "hw_backends/gds/gds_path.hpp"

#include <gtest/gtest.h>

namespace sluice::hw::gds {
namespace {

CuFileProbe working(bool nvfs) {
  CuFileProbe p;
  p.nvfs_loaded = nvfs;
  return p;
}

TEST(GdsPath, OffAlwaysTakesTheOwnBounceEvenWhenCuFileWorks) {
  auto d = decide_gds_path(GdsMode::off, working(true));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->path, GdsPath::own_bounce);
  EXPECT_NE(d->reason.find("off"), std::string::npos);
}

TEST(GdsPath, WorkingCuFileIsDirectWithNvidiaFsAndCompatWithout) {
  for (GdsMode mode : {GdsMode::on, GdsMode::auto_}) {
    EXPECT_EQ(decide_gds_path(mode, working(true))->path, GdsPath::gds_direct);
    auto compat = decide_gds_path(mode, working(false));
    EXPECT_EQ(compat->path, GdsPath::cufile_compat);
    EXPECT_NE(compat->reason.find("nvidia-fs not loaded"), std::string::npos);
    CuFileProbe forced = working(true);
    forced.compat_forced = true;
    auto f = decide_gds_path(mode, forced);
    EXPECT_EQ(f->path, GdsPath::cufile_compat);
    EXPECT_NE(f->reason.find("forced"), std::string::npos);
  }
}

TEST(GdsPath, OnFailsWithTheReasonWhereAutoFallsBack) {
  CuFileProbe no_driver;
  no_driver.driver = error(StatusCode::unavailable, "libcufile says no");
  auto on = decide_gds_path(GdsMode::on, no_driver);
  ASSERT_FALSE(on.ok());
  EXPECT_EQ(on.status().code(), StatusCode::unavailable);
  EXPECT_NE(on.status().message().find("cuFileDriverOpen failed: libcufile says no"), std::string::npos);
  auto fallback = decide_gds_path(GdsMode::auto_, no_driver);
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->path, GdsPath::own_bounce);
  EXPECT_NE(fallback->reason.find("libcufile says no"), std::string::npos);

  CuFileProbe no_handle;
  no_handle.handle = error(StatusCode::unavailable, "file descriptor is not registered");
  auto on2 = decide_gds_path(GdsMode::on, no_handle);
  ASSERT_FALSE(on2.ok());
  EXPECT_NE(on2.status().message().find("cuFileHandleRegister failed"), std::string::npos);
  EXPECT_EQ(decide_gds_path(GdsMode::auto_, no_handle)->path, GdsPath::own_bounce);
}

TEST(GdsPath, ModesAndPathsHaveStableNames) {
  EXPECT_EQ(*parse_gds_mode("ON"), GdsMode::on);
  EXPECT_EQ(*parse_gds_mode("off"), GdsMode::off);
  EXPECT_EQ(*parse_gds_mode("Auto"), GdsMode::auto_);
  EXPECT_EQ(parse_gds_mode("maybe").status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(to_string(GdsMode::auto_), "auto");
  EXPECT_EQ(to_string(GdsMode::on), "on");
  EXPECT_EQ(to_string(GdsMode::off), "off");
  EXPECT_EQ(to_string(GdsPath::gds_direct), "gds_direct");
  EXPECT_EQ(to_string(GdsPath::cufile_compat), "cufile_compat");
  EXPECT_EQ(to_string(GdsPath::own_bounce), "own_bounce");
}

}  // namespace
}  // namespace sluice::hw::gds
