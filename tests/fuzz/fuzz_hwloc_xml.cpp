// Fuzz harness: the hwloc XML importer (hw_backends/hwloc/hwloc_import.hpp),
// i.e. libhwloc's XML reader plus our walk over what it builds.
// Properties: never crash; an imported machine can be printed (to_text).
#include <string_view>

#include "core/topology/topology_text.hpp"
#include "fuzz_harness.hpp"
#include "hw_backends/hwloc/hwloc_import.hpp"

namespace sluice::fuzz {

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  const std::string_view tiny =
      "<?xml version=\"1.0\"?><topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" "
      "cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
      "allowed_nodeset=\"0x1\" gp_index=\"1\"><object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" "
      "complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\" local_memory=\"1073741824\"/>"
      "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
      "complete_nodeset=\"0x1\" gp_index=\"3\"/></object></topology>";
  return {std::vector<std::uint8_t>(tiny.begin(), tiny.end())};
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  auto machine = sluice::hw::import_hwloc_xml(xml);
  if (!machine.ok()) return 0;
  auto printed = sluice::topo::to_text(*machine);
  if (!printed.ok()) sluice::fuzz::property_failed("hwloc_xml", "an imported machine cannot be printed");
  return 0;
}
