// Fuzz harness: the hwloc XML importer (hw_backends/hwloc/hwloc_import.hpp),
// i.e. libhwloc's XML reader plus our walk over what it builds.
// libhwloc reads each input in the importer's loader process (a fork of this
// one, reused across inputs: hwloc_loader.hpp), so its crashes, aborts and
// overruns are errors here, not findings; what runs in this process (the
// re-load of the checked re-export and the walk) is what the fuzzer watches.
// Properties: never crash; an imported machine can be printed (to_text); the
// loader process never stops on undefined behaviour (only sluice code is
// UBSan-instrumented there, so a UBSan report is a bug of ours).
#include <string>
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
  if (!machine.ok()) {
    const std::string& why = machine.status().message();
    if (why.find("loader process stopped") != std::string::npos && why.find("runtime error:") != std::string::npos) {
      sluice::fuzz::property_failed("hwloc_xml", "the loader process hit undefined behaviour in sluice code");
    }
    return 0;
  }
  auto printed = sluice::topo::to_text(*machine);
  if (!printed.ok()) sluice::fuzz::property_failed("hwloc_xml", "an imported machine cannot be printed");
  return 0;
}
