// HwlocTopology: an hwloc topology owned for a scope (hwloc_topology_init /
// hwloc_topology_destroy), for the importer and the loader process. Internal
// to hw_backends/hwloc: it includes <hwloc.h>, which the public headers keep out.
#pragma once

#include <hwloc.h>

namespace sluice::hw {

class HwlocTopology {
 public:
  HwlocTopology() { ok_ = hwloc_topology_init(&t_) == 0; }
  ~HwlocTopology() {
    if (ok_) hwloc_topology_destroy(t_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  // False if hwloc_topology_init failed; get() is then not a topology.
  bool ok() const { return ok_; }
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_ = nullptr;
  bool ok_ = false;
};

}  // namespace sluice::hw
