// bench_gpu's chunk-size sweep as `sluice calibrate --gpu-sweep` reads it
// (scenarios/calibrate/gpu_calibration.hpp): medians per point, and bad files
// refused naming the line and the column.
#include "scenarios/calibrate/gpu_calibration.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice::calibrate {
namespace {

const std::string k_header = "series,piece_bytes,lanes,depth,total_bytes,run,bytes_per_s\n";

TEST(GpuSweepCsv, OnePointPerSeriesPieceAndLanesWithTheMedianOfItsRuns) {
  const std::string csv = k_header +
                          "dma,1048576,1,1,2147483648,0,3.0e10\n"
                          "dma,1048576,1,1,2147483648,1,5.0e10\n"
                          "dma,1048576,1,1,2147483648,2,4.0e10\n"
                          "bounce,1048576,4,3,2147483648,0,2.0e10\n"
                          "bounce,1048576,4,3,2147483648,1,2.2e10\n"
                          "bounce,262144,4,8,2147483648,0,1.0e10\n";
  Result<std::vector<GpuSweepPoint>> p = parse_gpu_sweep(csv);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->size(), 3u);
  const GpuSweepPoint* dma = nullptr;
  const GpuSweepPoint* bounce4 = nullptr;
  for (const GpuSweepPoint& x : *p) {
    if (x.point.series == scenario::StagedCopySeries::dma) dma = &x;
    if (x.point.series == scenario::StagedCopySeries::bounce && x.point.piece_bytes == 1048576) bounce4 = &x;
  }
  ASSERT_NE(dma, nullptr);
  ASSERT_NE(bounce4, nullptr);
  EXPECT_DOUBLE_EQ(dma->bytes_per_s, 4.0e10);
  EXPECT_DOUBLE_EQ(dma->min_bytes_per_s, 3.0e10);
  EXPECT_DOUBLE_EQ(dma->max_bytes_per_s, 5.0e10);
  EXPECT_EQ(dma->runs, 3u);
  EXPECT_DOUBLE_EQ(bounce4->bytes_per_s, 2.1e10);  // median of two: their mean
  EXPECT_EQ(bounce4->point.lanes, 4u);
  EXPECT_EQ(bounce4->point.depth, 3u);
  EXPECT_EQ(bounce4->point.total_bytes, 2147483648u);
}

TEST(GpuSweepCsv, AGpusColumnMakesPointsOfSeveralGpusAtOnce) {
  const std::string csv =
      "series,piece_bytes,lanes,depth,total_bytes,run,bytes_per_s,gpus\n"
      "dma,67108864,1,1,8589934592,0,5.49e10,1\n"
      "dma,67108864,1,1,8589934592,0,9.98e10,2\n";
  Result<std::vector<GpuSweepPoint>> p = parse_gpu_sweep(csv);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].point.gpus, 1u);
  EXPECT_EQ((*p)[1].point.gpus, 2u);
  EXPECT_DOUBLE_EQ((*p)[1].bytes_per_s, 9.98e10);
  Result<std::vector<GpuSweepPoint>> bad = parse_gpu_sweep(
      "series,piece_bytes,lanes,depth,total_bytes,run,bytes_per_s,gpus\n"
      "dma,67108864,1,1,8589934592,0,5.49e10,9\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2: staged copy point: gpus 9 outside 1..8"), std::string::npos)
      << bad.status().message();
}

TEST(GpuSweepCsv, BadFilesAreRefusedNamingTheLine) {
  const auto message = [](const std::string& csv) {
    Result<std::vector<GpuSweepPoint>> p = parse_gpu_sweep(csv);
    return p.ok() ? std::string("accepted") : p.status().message();
  };
  EXPECT_NE(message("").find("empty"), std::string::npos);
  EXPECT_NE(message("a,b\n1,2\n").find("line 1: header"), std::string::npos);
  EXPECT_NE(message(k_header).find("no data rows"), std::string::npos);
  EXPECT_NE(message(k_header + "dma,1048576,1,1\n").find("line 2: 4 columns"), std::string::npos);
  EXPECT_NE(message(k_header + "nvme,1048576,1,1,2097152,0,1e9\n").find("line 2: staged copy series"),
            std::string::npos);
  EXPECT_NE(message(k_header + "dma,1MiB,1,1,2097152,0,1e9\n").find("line 2: piece_bytes \"1MiB\""), std::string::npos);
  EXPECT_NE(message(k_header + "dma,1048576,1,1,2097152,0,-5\n").find("bytes_per_s"), std::string::npos);
  EXPECT_NE(message(k_header + "dma,1048576,1,1,2097152,0,0\n").find("above 0"), std::string::npos);
  EXPECT_NE(message(k_header + "dma,1048576,0,1,2097152,0,1e9\n").find("lanes"), std::string::npos);
  EXPECT_NE(message(k_header + "dma,1048576,1,1,2097152,0,1e9\ndma,1048576,1,1,4194304,1,1e9\n")
                .find("line 3: total_bytes 4194304 / depth 1 differ"),
            std::string::npos);
  EXPECT_NE(message(k_header + "dma,1048576,1,1,2097152,0,nan\n").find("not a non-negative number"), std::string::npos);
}

}  // namespace
}  // namespace sluice::calibrate
