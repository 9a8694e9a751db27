// Text rendering of one machine of a topology, for the CLI and reports.
//
// Layout: a header line (machine name, node), a device list (name, kind,
// NUMA node, the device's figures, its PCIe link), then a matrix of path
// classes between all GPUs, NICs and NVMe drives laid out like
// `nvidia-smi topo -m` (rows and columns in the order GPUs, NICs, NVMe; a
// NUMA column; the nvidia-smi legend below). Deterministic: the same
// topology gives the same text.
#pragma once

#include <string>

#include "core/common/status.hpp"
#include "core/topology/topology.hpp"

namespace sluice::topo {

// Errors: unknown node, or a broken topology (no route between its devices).
Result<std::string> to_text(const Topology& topology, NodeId node = 0);

}  // namespace sluice::topo
