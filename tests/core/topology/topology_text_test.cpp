#include "core/topology/topology_text.hpp"

#include <gtest/gtest.h>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"

namespace sluice::topo {
namespace {

// The row of `name` in the matrix part of the text.
std::string matrix_row(const std::string& text, const std::string& name) {
  const auto matrix = text.find("NUMA\n");
  const auto at = text.find("\n" + name + " ", matrix);
  if (at == std::string::npos) return {};
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(TopologyText, ListsDevicesAndAPathClassMatrix) {
  const Topology t = *dgx_a100();
  auto text = to_text(t);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_NE(text->find("machine dgx_a100 (node 0): 2 sockets, 8 GPUs, 10 NICs, 4 NVMe"), std::string::npos) << *text;
  EXPECT_NE(text->find("200 Gb/s"), std::string::npos);
  EXPECT_NE(text->find("40 GiB"), std::string::npos);
  EXPECT_NE(text->find("Legend:"), std::string::npos);
  const std::string row = matrix_row(*text, "gpu0");
  ASSERT_FALSE(row.empty()) << *text;
  // gpu0 row: X, then gpu1..7, then mlx5_0 (PXB) ... mlx5_9 (SYS), nvme0..3, NUMA 0.
  EXPECT_EQ(row.find("X"), row.find_first_not_of(' ', 4));
  EXPECT_NE(row.find("PXB"), std::string::npos);
  EXPECT_NE(row.find("NODE"), std::string::npos);
  EXPECT_NE(row.find("SYS"), std::string::npos);
  EXPECT_EQ(row.back(), '0');
  EXPECT_EQ(*to_text(t), *text) << "deterministic";
}

TEST(TopologyText, RendersOneNodeOfACluster) {
  const Topology host = *critical_io_gpu_host();
  auto c = star_cluster(host, 3);
  ASSERT_TRUE(c.ok());
  auto text = to_text(*c, 2);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_NE(text->find("critical_io_gpu_host (node 2)"), std::string::npos);
  EXPECT_NE(text->find("memory n/a"), std::string::npos);
  EXPECT_EQ(text->find("node2/"), std::string::npos) << "names are shown without the node prefix";
  EXPECT_FALSE(to_text(*c, 3).ok());
  const Topology rec = *critical_io_recorder();
  EXPECT_NE(to_text(rec)->find("3.84 TB"), std::string::npos);
}

}  // namespace
}  // namespace sluice::topo
