#include "hw_backends/hwloc/hwloc_loader.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <string>

namespace sluice::hw {
namespace {

// The smallest machine libhwloc 2.9 loads: one NUMA node, one PU.
constexpr std::string_view k_tiny_xml =
    "<?xml version=\"1.0\"?><topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" "
    "cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
    "allowed_nodeset=\"0x1\" gp_index=\"1\"><object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" "
    "complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\" local_memory=\"1073741824\"/>"
    "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
    "complete_nodeset=\"0x1\" gp_index=\"3\"/>BRIDGE</object></topology>";

std::string tiny(std::string_view replace_what = {}, std::string_view with = {}, std::string_view bridge = {}) {
  std::string xml(k_tiny_xml);
  xml.replace(xml.find("BRIDGE"), 6, bridge);
  if (!replace_what.empty()) {
    const auto at = xml.find(replace_what);
    EXPECT_NE(at, std::string::npos) << replace_what;
    if (at != std::string::npos) xml.replace(at, replace_what.size(), with);
  }
  return xml;
}

std::string bridge(std::string_view type) {
  return "<object type=\"Bridge\" gp_index=\"4\" bridge_type=\"" + std::string(type) +
         "\" depth=\"0\" bridge_pci=\"0000:[00-00]\"><object type=\"PCIDev\" gp_index=\"5\" "
         "pci_busid=\"0000:00:03.0\" pci_type=\"0200 [1af4:1000] [1af4:0001] 00\"/></object>";
}

TEST(HwlocLoader, HandsBackLibhwlocsReexportThatLoadsInProcess) {
  HwlocLoader loader;
  auto xml = loader.load(tiny({}, {}, bridge("0-1")));
  ASSERT_TRUE(xml.ok()) << xml.status().to_string();
  EXPECT_NE(xml->find("NUMANode"), std::string::npos);
  hwloc_topology_t t = nullptr;
  ASSERT_EQ(hwloc_topology_init(&t), 0);
  EXPECT_TRUE(load_checked_hwloc_xml(t, *xml).ok());
  EXPECT_EQ(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PCI_DEVICE), 1);
  hwloc_topology_destroy(t);
}

TEST(HwlocLoader, OneProcessServesManyLoadsIncludingRefusedOnes) {
  HwlocLoader loader;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(loader.load(tiny()).ok());
    auto refused = loader.load("<?xml version=\"1.0\"?>\n<foo/>\n");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::invalid_argument);
  }
  EXPECT_EQ(loader.processes_started(), 1u);
  EXPECT_EQ(loader.loads_by_current_process(), 10u);
}

// libhwloc 2.9 dereferences a null bitmap on a NUMA node without complete_nodeset.
TEST(HwlocLoader, ACrashInLibhwlocIsAnErrorAndTheNextLoadGetsANewProcess) {
  HwlocLoader loader;
  ASSERT_TRUE(loader.load(tiny()).ok());
  auto crashed =
      loader.load(tiny("complete_nodeset=\"0x1\" gp_index=\"2\"", "complete_Xodeset=\"0x1\" gp_index=\"2\""));
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(crashed.status().message().find("hwloc import"), std::string::npos) << crashed.status().message();
  ASSERT_TRUE(loader.load(tiny()).ok());
  EXPECT_EQ(loader.processes_started(), 2u);
}

TEST(HwlocLoader, AProcessIsReplacedAfterItsQuotaOfLoads) {
  HwlocLoaderLimits limits;
  limits.loads_per_process = 2;
  HwlocLoader loader(limits);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(loader.load(tiny()).ok());
  EXPECT_EQ(loader.processes_started(), 3u);
}

// A zero time bound has always passed when the reply is awaited: the overrun
// path without waiting for a slow input.
TEST(HwlocLoader, ALoadPastTheTimeBoundIsAnErrorAndTheProcessIsReplaced) {
  HwlocLoaderLimits limits;
  limits.timeout_ms = 0;
  HwlocLoader loader(limits);
  for (int i = 0; i < 2; ++i) {
    auto late = loader.load(tiny());
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(late.status().message().find("time bound"), std::string::npos) << late.status().message();
  }
  EXPECT_EQ(loader.processes_started(), 2u);
}

// A NUMA node without os_index makes libhwloc 2.9 build a 2^32-bit nodeset
// (~1 GiB, tens of seconds to re-export): the memory bound or the index check
// refuses it, whichever comes first in this build.
TEST(HwlocLoader, ANumaNodeWithoutOsIndexIsRefused) {
  HwlocLoader loader;
  auto huge = loader.load(tiny("<object type=\"NUMANode\" os_index=\"0\"", "<object type=\"NUMANode\" os_yndex=\"0\""));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::invalid_argument);
  EXPECT_TRUE(loader.load(tiny()).ok());
}

TEST(HwlocLoader, IndicesAboveTheBoundAreRefused) {
  HwlocLoader loader;
  auto far = loader.load(tiny("<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"",
                              "<object type=\"PU\" os_index=\"70000\" cpuset=\"0x1\" complete_cpuset=\"0x1\""));
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.status().message().find("above k_hwloc_max_set_index"), std::string::npos) << far.status().message();
}

// hwloc's XML reader stores any number in its bridge type enums.
TEST(HwlocLoader, BridgeTypesOutsideHwlocsEnumAreRefused) {
  HwlocLoader loader;
  auto odd = loader.load(tiny({}, {}, bridge("2-1")));
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("bridge_type"), std::string::npos) << odd.status().message();
}

TEST(HwlocLoader, TheLoaderProcessKeepsNoDescriptorOfTheCaller) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  HwlocLoader loader;
  ASSERT_TRUE(loader.load(tiny()).ok());
  ::close(fds[1]);
  pollfd pfd{fds[0], POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 0), 1);
  EXPECT_NE(pfd.revents & POLLHUP, 0) << "the loader process still holds the pipe's write end";
  ::close(fds[0]);
}

}  // namespace
}  // namespace sluice::hw
