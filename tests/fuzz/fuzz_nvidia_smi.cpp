// Fuzz harness: the `nvidia-smi topo -m` importer (core/topology/nvidia_smi_import.hpp).
// Properties: never crash; an imported machine can be printed (to_text) and
// every GPU has a path class to every NIC (the importer's own contract).
#include <string_view>

#include "core/topology/nvidia_smi_import.hpp"
#include "core/topology/topology_text.hpp"
#include "fuzz_harness.hpp"

namespace sluice::fuzz {

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  const std::string_view tiny = "\tGPU0\tNIC0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tPHB\t0-3\t0\nNIC0\tPHB\t X \n";
  return {std::vector<std::uint8_t>(tiny.begin(), tiny.end())};
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto machine = sluice::topo::import_nvidia_smi_topo(text);
  if (!machine.ok()) return 0;
  auto printed = sluice::topo::to_text(*machine);
  if (!printed.ok()) sluice::fuzz::property_failed("nvidia_smi", "an imported machine cannot be printed");
  return 0;
}
